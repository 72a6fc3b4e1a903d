"""Generates the AG2 chat logs in this folder with the real library (ag2
0.14.0, the `autogen` package of AutoGen 0.2's fork) and a scripted model
client, offline: no key, no network.

    python -m venv /tmp/ag2 && /tmp/ag2/bin/pip install "ag2==0.14.0"
    /tmp/ag2/bin/python generate.py

Code runs in a temporary directory (no Docker). Ids differ from run to run.
"""
import dataclasses
import json
import os
import pathlib
import tempfile
from types import SimpleNamespace

from autogen import AssistantAgent, GroupChat, GroupChatManager, UserProxyAgent, register_function

HERE = pathlib.Path(__file__).parent

# Per-model queues of scripted replies. Each reply: str (text) or dict with tool_calls.
SCRIPTS: dict[str, list] = {}
_counter = [0]


class ScriptedClient:
    def __init__(self, config, **kwargs):
        self.model = config["model"]

    def create(self, params):
        queue = SCRIPTS[self.model]
        item = queue.pop(0) if queue else "TERMINATE"
        _counter[0] += 1
        if isinstance(item, str):
            msg = SimpleNamespace(content=item, tool_calls=None, function_call=None, role="assistant")
        else:
            tcs = [
                SimpleNamespace(
                    id=tc["id"],
                    type="function",
                    function=SimpleNamespace(name=tc["name"], arguments=json.dumps(tc["args"])),
                )
                for tc in item["tool_calls"]
            ]
            msg = SimpleNamespace(content=item.get("content"), tool_calls=tcs, function_call=None, role="assistant")
        return SimpleNamespace(
            id=f"scripted-{_counter[0]}",
            model=self.model,
            choices=[SimpleNamespace(message=msg, finish_reason="stop")],
            usage=SimpleNamespace(prompt_tokens=10, completion_tokens=5, total_tokens=15),
            cost=0.0,
        )

    def message_retrieval(self, response):
        out = []
        for c in response.choices:
            m = c.message
            if m.tool_calls:
                out.append({
                    "role": "assistant",
                    "content": m.content,
                    "tool_calls": [
                        {"id": t.id, "type": "function",
                         "function": {"name": t.function.name, "arguments": t.function.arguments}}
                        for t in m.tool_calls
                    ],
                })
            else:
                out.append(m.content)
        return out

    def cost(self, response):
        return 0.0

    @staticmethod
    def get_usage(response):
        return {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15, "cost": 0.0, "model": response.model}


def llm(model):
    return {"config_list": [{"model": model, "model_client_cls": "ScriptedClient"}], "cache_seed": None}


def dump(name, obj):
    (HERE / name).write_text(json.dumps(obj, indent=2, default=str) + "\n")


def scenario_a():
    workdir = tempfile.mkdtemp()
    SCRIPTS["coder-model"] = [
        "I'll read the data file and print its size.\n\n```python\n"
        "with open('data/missing_input.csv') as f:\n    print(len(f.read()))\n```",
        "The file data/missing_input.csv does not exist, so the script failed with FileNotFoundError. "
        "I cannot complete the task without the input file. TERMINATE",
    ]
    coder = AssistantAgent("coder", llm_config=llm("coder-model"))
    coder.register_model_client(model_client_cls=ScriptedClient)
    executor = UserProxyAgent(
        "executor",
        human_input_mode="NEVER",
        code_execution_config={"work_dir": workdir, "use_docker": False},
        llm_config=False,
        is_termination_msg=lambda m: "TERMINATE" in (m.get("content") or ""),
    )
    gc = GroupChat(agents=[executor, coder], messages=[], max_round=6, speaker_selection_method="round_robin")
    SCRIPTS["manager-model"] = []
    manager = GroupChatManager(groupchat=gc, llm_config=llm("manager-model"),
                               is_termination_msg=lambda m: "TERMINATE" in (m.get("content") or ""))
    manager.register_model_client(model_client_cls=ScriptedClient)
    res = executor.initiate_chat(manager, message="Count the characters in data/missing_input.csv using Python.")
    dump("groupchat-code-error.json", gc.messages)
    dump("chat-history-code-error.json", res.chat_history)


_calls = [0]


def fetch_weather(city: str) -> str:
    """Return the weather for a city."""
    _calls[0] += 1
    if _calls[0] == 1:
        raise ConnectionError(f"weather service unavailable for {city}")
    return f"Sunny, 21C in {city}"


def scenario_b():
    SCRIPTS["assistant-model"] = [
        {"content": None, "tool_calls": [{"id": "call_1", "name": "fetch_weather", "args": {"city": "Paris"}}]},
        {"content": None, "tool_calls": [{"id": "call_2", "name": "fetch_weather", "args": {"city": "Paris"}}]},
        "The weather in Paris is sunny, 21C. TERMINATE",
    ]
    assistant = AssistantAgent("assistant", llm_config=llm("assistant-model"))
    user_proxy = UserProxyAgent(
        "user_proxy",
        human_input_mode="NEVER",
        code_execution_config=False,
        is_termination_msg=lambda m: "TERMINATE" in (m.get("content") or ""),
    )
    register_function(fetch_weather, caller=assistant, executor=user_proxy, description="Get weather")
    # registering a tool rebuilds the caller's client, so register the model client afterwards
    assistant.register_model_client(model_client_cls=ScriptedClient)
    res = user_proxy.initiate_chat(assistant, message="What's the weather in Paris?", max_turns=6)
    dump("chat-result-tool-error.json", dataclasses.asdict(res))


def scenario_c():
    _calls[0] = 0
    SCRIPTS["planner-model"] = [
        {"content": None, "tool_calls": [{"id": "call_c1", "name": "fetch_weather", "args": {"city": "Oslo"}}]},
        {"content": None, "tool_calls": [{"id": "call_c2", "name": "fetch_weather", "args": {"city": "Oslo"}}]},
        "Oslo is sunny, 21C. TERMINATE",
    ]
    planner = AssistantAgent("planner", llm_config=llm("planner-model"))
    runner = UserProxyAgent("runner", human_input_mode="NEVER", code_execution_config=False,
                            is_termination_msg=lambda m: "TERMINATE" in (m.get("content") or ""))
    register_function(fetch_weather, caller=planner, executor=runner, description="Get weather")
    planner.register_model_client(model_client_cls=ScriptedClient)
    gc = GroupChat(agents=[runner, planner], messages=[], max_round=8, speaker_selection_method="round_robin")
    SCRIPTS["manager2-model"] = []
    manager = GroupChatManager(groupchat=gc, llm_config=llm("manager2-model"),
                               is_termination_msg=lambda m: "TERMINATE" in (m.get("content") or ""))
    manager.register_model_client(model_client_cls=ScriptedClient)
    res = runner.initiate_chat(manager, message="What's the weather in Oslo?")
    dump("groupchat-tool-error.json", gc.messages)


if __name__ == "__main__":
    scenario_a()
    scenario_b()
    scenario_c()
