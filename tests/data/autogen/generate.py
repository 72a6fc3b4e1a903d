"""Generates the AutoGen AgentChat runs in this folder with the real library
(autogen-agentchat and autogen-ext 0.7.5) and scripted models
(ReplayChatCompletionClient), offline. Tools are plain Python functions over
a small in-memory site; code runs in a temporary directory.

    python -m venv /tmp/ag && /tmp/ag/bin/pip install autogen-agentchat==0.7.5 autogen-ext==0.7.5
    /tmp/ag/bin/python generate.py

Older releases run it too (0.4.5 and 0.5.7 here), writing each file with a
prefix: `python generate.py v0.4.5-`. Ids and times differ on every run;
the shapes and contents do not.
"""

import asyncio
import inspect
import json
import pathlib
import sys
import tempfile

from autogen_agentchat.agents import AssistantAgent, CodeExecutorAgent
from autogen_agentchat.base import TaskResult
from autogen_agentchat.conditions import (
    HandoffTermination,
    MaxMessageTermination,
    TextMentionTermination,
)
from autogen_agentchat.teams import MagenticOneGroupChat, RoundRobinGroupChat, Swarm
from autogen_core import FunctionCall
from autogen_core.models import CreateResult, RequestUsage
from autogen_ext.code_executors.local import LocalCommandLineCodeExecutor
from autogen_ext.models.replay import ReplayChatCompletionClient

HERE = pathlib.Path(__file__).parent
PREFIX = sys.argv[1] if len(sys.argv) > 1 else ""
INFO = {
    "vision": False,
    "function_calling": True,
    "json_output": False,
    "family": "unknown",
    "structured_output": False,
}


def model(*replies):
    try:
        return ReplayChatCompletionClient(list(replies), model_info=INFO)
    except TypeError:
        # Before 0.5 the replay client takes no model_info.
        client = ReplayChatCompletionClient(list(replies))
        client._model_info = dict(INFO)
        return client


def accepts(cls, name):
    return name in inspect.signature(cls.__init__).parameters


def dump(item, indent=None):
    """As a user saves it: model_dump_json(), which a TaskResult has from
    0.5 on (in 0.5 its messages keep only their common fields); a 0.4
    TaskResult is a dataclass, dumped with pydantic's TypeAdapter."""
    if hasattr(item, "model_dump_json"):
        return item.model_dump_json(indent=indent)
    from pydantic import TypeAdapter

    return TypeAdapter(type(item)).dump_json(item, indent=indent).decode()


def call(name, args, n):
    return CreateResult(
        finish_reason="function_calls",
        content=[FunctionCall(id=f"call_{n}", name=name, arguments=json.dumps(args))],
        usage=RequestUsage(prompt_tokens=120, completion_tokens=18),
        cached=False,
    )


PAGES = {
    "https://example.org/springfield-ohio": "Springfield, Ohio. Population (2020 census): 58,662.",
    "https://example.org/springfield-illinois": "Springfield, Illinois, the state capital. Population (2020 census): 114,394.",
}


def search_web(query: str) -> str:
    """Search the web; returns titles and addresses."""
    return json.dumps(
        [
            {"title": "Springfield, Ohio - city facts", "url": "https://example.org/springfield-ohio"},
            {"title": "Springfield, Illinois - city facts", "url": "https://example.org/springfield-illinois"},
        ]
    )


def visit_page(url: str) -> str:
    """Fetch a page's text."""
    if url not in PAGES:
        raise ValueError(f"404 Not Found: {url}")
    return PAGES[url]


def ledger(done, speaker, instruction, reason="The population has not been found yet."):
    def r(answer, why=reason):
        return {"reason": why, "answer": answer}

    return json.dumps(
        {
            "is_request_satisfied": r(done),
            "is_in_loop": r(False),
            "is_progress_being_made": r(True),
            "next_speaker": r(speaker),
            "instruction_or_question": r(instruction),
        }
    )


def surfer(*replies):
    return AssistantAgent(
        "web_surfer",
        model_client=model(*replies),
        tools=[search_web, visit_page],
        description="Searches the web and reads pages.",
        system_message="You search the web and read pages to answer questions.",
    )


async def magentic_one_wrong_page():
    """The surfer opens the first result, another city's page, and the
    orchestrator answers from it."""
    team = MagenticOneGroupChat(
        [
            surfer(
                call("search_web", {"query": "Springfield Illinois population"}, 1),
                call("visit_page", {"url": "https://example.org/springfield-ohio"}, 2),
            )
        ],
        model_client=model(
            "1. GIVEN OR VERIFIED FACTS\n- The request names Springfield, Illinois.\n2. FACTS TO LOOK UP\n- Its population.",
            "- web_surfer: search for the population and read the city's page.",
            ledger(False, "web_surfer", "Search the web for the population of Springfield, Illinois."),
            ledger(False, "web_surfer", "Open the first result and read the population."),
            ledger(True, "web_surfer", "Report the answer.", "The page states the population."),
            "The population of Springfield, Illinois is 58,662 (2020 census).",
        ),
        max_turns=5,
    )
    return await team.run(task="What is the population of Springfield, Illinois, by the 2020 census?")


async def magentic_one_max_rounds(lines):
    """The surfer keeps opening an address that does not exist; the
    orchestrator's round limit ends the run. Saved as run_stream writes it:
    one message a line, the TaskResult last."""
    team = MagenticOneGroupChat(
        [
            surfer(
                call("visit_page", {"url": "https://example.org/springfield"}, 1),
                call("visit_page", {"url": "https://example.org/springfield"}, 2),
                call("visit_page", {"url": "https://example.org/springfield"}, 3),
            )
        ],
        model_client=model(
            "1. GIVEN OR VERIFIED FACTS\n- The request names Springfield, Illinois.",
            "- web_surfer: read the city's page.",
            ledger(False, "web_surfer", "Open https://example.org/springfield and read the population."),
            ledger(False, "web_surfer", "Try the page again."),
            ledger(False, "web_surfer", "Try the page again."),
            "I could not find the population of Springfield, Illinois.",
        ),
        max_turns=2,
        **({"emit_team_events": True} if accepts(MagenticOneGroupChat, "emit_team_events") else {}),
    )
    async for item in team.run_stream(task="What is the population of Springfield, Illinois, by the 2020 census?"):
        lines.append(dump(item))


async def round_robin_code_error():
    """A coder writes a script that reads a file that is not there; the
    executor runs it; the message limit ends the run."""
    work = tempfile.mkdtemp()
    coder = AssistantAgent(
        "coder",
        model_client=model(
            "I will read the totals file and print its total.\n```python\nimport json\nprint(json.load(open('totals.json'))['total'])\n```",
            "The script failed because totals.json is missing. Let me print the total another way.\n```python\nprint(sum([12, 30, 7]))\n```",
        ),
    )
    executor = CodeExecutorAgent("executor", code_executor=LocalCommandLineCodeExecutor(work_dir=work))
    team = RoundRobinGroupChat(
        [coder, executor],
        termination_condition=MaxMessageTermination(4) | TextMentionTermination("TERMINATE"),
    )
    return await team.run(task="Print the total stored in totals.json.")


def refund_flight(booking: str) -> str:
    """Refund a booking."""
    return json.dumps({"booking": booking, "status": "refunded", "amount": 420})


async def swarm_refund():
    """A travel agent hands the user to a refunds agent, which refunds the
    booking and ends the chat. Saved as TaskResult and as save_state."""
    travel = AssistantAgent(
        "travel_agent",
        model_client=model(
            CreateResult(
                finish_reason="function_calls",
                content=[FunctionCall(id="call_1", name="transfer_to_refunds", arguments="{}")],
                usage=RequestUsage(prompt_tokens=90, completion_tokens=9),
                cached=False,
            )
        ),
        handoffs=["refunds"],
        system_message="You help travellers; refunds go to the refunds agent.",
    )
    refunds = AssistantAgent(
        "refunds",
        model_client=model(
            call("refund_flight", {"booking": "BK-204"}, 2),
            "Booking BK-204 has been refunded: 420 will reach your card in five days. TERMINATE",
        ),
        tools=[refund_flight],
        reflect_on_tool_use=True,
        system_message="You refund bookings.",
    )
    team = Swarm(
        [travel, refunds],
        termination_condition=TextMentionTermination("TERMINATE") | HandoffTermination("user"),
    )
    result = await team.run(task="Please refund my booking BK-204.")
    return result, await team.save_state()


async def code_agent_retry(lines):
    """A code agent that writes and runs its own code, retrying once after
    the first attempt fails. Saved as run_stream writes it."""
    work = tempfile.mkdtemp()
    agent = CodeExecutorAgent(
        "code_agent",
        code_executor=LocalCommandLineCodeExecutor(work_dir=work),
        model_client=ReplayChatCompletionClient(
            [
                "```python\nimport statistics\nprint(statistics.median([3, 1, 4, 1, 5]) / len([]))\n```",
                json.dumps({"reason": "Dividing by len([]) is a division by zero; drop it.", "retry": True}),
                "```python\nimport statistics\nprint(statistics.median([3, 1, 4, 1, 5]))\n```",
                "The median is 3.",
            ],
            model_info={**INFO, "structured_output": True},
        ),
        max_retries_on_error=1,
    )
    async for item in agent.run_stream(task="Compute the median of 3, 1, 4, 1, 5 with Python."):
        lines.append(dump(item))


def write(name, text):
    (HERE / (PREFIX + name)).write_text(text + "\n")


async def main():
    write("magentic-one-wrong-page.json", dump(await magentic_one_wrong_page(), indent=2))
    lines = []
    await magentic_one_max_rounds(lines)
    write("magentic-one-max-rounds.ndjson", "\n".join(lines))
    write("round-robin-code-error.json", dump(await round_robin_code_error(), indent=2))
    result, state = await swarm_refund()
    write("swarm-refund.json", dump(result, indent=2))
    write("swarm-refund.state.json", json.dumps(state, indent=2))
    if accepts(CodeExecutorAgent, "model_client"):  # 0.5 on
        lines = []
        await code_agent_retry(lines)
        write("code-agent-retry.ndjson", "\n".join(lines))


if __name__ == "__main__":
    asyncio.run(main())
