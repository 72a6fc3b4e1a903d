"""Generates mini-SWE-agent 2 trajectories offline (pip install mini-swe-agent==2.4.6;
python3 generate_v2.py OUTDIR):
the real DefaultAgent, LocalEnvironment and LitellmModel / LitellmResponseModel / LitellmTextbasedModel
with the shipped configs (mini.yaml, mini_textbased.yaml); only litellm.completion / litellm.responses
are replaced by a scripted stand-in returning litellm's own response types."""
import json, sys, uuid, itertools
from pathlib import Path
import yaml, litellm
import minisweagent
from minisweagent.agents.default import DefaultAgent
from minisweagent.environments.local import LocalEnvironment
from minisweagent.models.litellm_model import LitellmModel
from minisweagent.models.litellm_response_model import LitellmResponseModel
from minisweagent.models.litellm_textbased_model import LitellmTextbasedModel
from minisweagent.config import builtin_config_dir

print("mini-swe-agent", minisweagent.__version__)
OUT = Path(sys.argv[1] if len(sys.argv) > 1 else ".")

def chat_resp(cmd=None, text="Let me check.", raw_text=None):
    msg = {"role": "assistant", "content": raw_text if raw_text is not None else text}
    if cmd is not None:
        msg["tool_calls"] = [{"id": "call_" + uuid.uuid4().hex[:8], "type": "function",
                              "function": {"name": "bash", "arguments": json.dumps({"command": cmd})}}]
    return litellm.ModelResponse(model="gpt-5-mini", choices=[{"index": 0, "message": msg,
        "finish_reason": "tool_calls" if cmd else "stop"}])

from litellm.types.llms.openai import ResponsesAPIResponse
def resp_api(cmd, text="Let me check."):
    return ResponsesAPIResponse(created_at=1767225600, **{"id": "resp_" + uuid.uuid4().hex[:8], "object": "response", "status": "completed", "model": "gpt-5-mini",
            "output": [{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                        "content": [{"type": "output_text", "text": text, "annotations": []}]},
                       {"type": "function_call", "id": "fc_1", "call_id": "call_" + uuid.uuid4().hex[:8],
                        "name": "bash", "arguments": json.dumps({"command": cmd}), "status": "completed"}]})

def run(name, cfg_file, model_cls, script, patch, step_limit=0, raise_at=None):
    cfg = yaml.safe_load((builtin_config_dir / cfg_file).read_text())
    agent_cfg = {k: v for k, v in cfg["agent"].items() if k != "mode"}
    agent_cfg["step_limit"] = step_limit
    agent_cfg["output_path"] = OUT / f"{name}.traj.json"
    it = iter(script)
    def fake(*a, **k):
        nxt = next(it)
        if isinstance(nxt, Exception): raise nxt
        return nxt
    setattr(litellm, patch, fake)
    model = model_cls(**({"model_name": "openai/gpt-5-mini"} | {k: v for k, v in cfg.get("model", {}).items() if k != "model_name"} | {"cost_tracking": "ignore_errors"}))
    env = LocalEnvironment(**cfg.get("environment", {}))
    agent = DefaultAgent(model, env, **agent_cfg)
    try:
        print(name, agent.run("Fix the failing import in app.py"))
    except Exception as e:
        print(name, "raised", type(e).__name__, e)

# A: tool calls (mini.yaml: JSON observations), two failing commands, step limit ends it
run("toolcall-step-limit", "mini.yaml", LitellmModel, [
    chat_resp("ls /nonexistent-dir"),
    chat_resp("python3 -c 'import nosuchmodule'"),
    chat_resp("grep -r nosuchmodule /etc/hostname"),
], "completion", step_limit=3)
# C: tool calls, model raises context window exceeded (abort exception) -> exit with traceback
run("toolcall-context-exceeded", "mini.yaml", LitellmModel, [
    chat_resp("cat /etc/hostname"),
    litellm.exceptions.ContextWindowExceededError("prompt is too long: 210000 tokens > 200000", model="gpt-5-mini", llm_provider="openai"),
], "completion")
# D: Responses API model, failing command, then step limit
run("responses-step-limit", "mini.yaml", LitellmResponseModel, [
    resp_api("ls /nonexistent-dir"), resp_api("python3 -c 'import nosuchmodule'"),
], "responses", step_limit=2)
# E: text-based model (mini_textbased.yaml, ```mswea_bash_command fences), failing command, a format error, then submit
def tb(cmd, fence="mswea_bash_command"):
    return chat_resp(raw_text=f"THOUGHT: run it.\n\n```{fence}\n{cmd}\n```")
run("textbased-format-error-submit", "mini_textbased.yaml", LitellmTextbasedModel, [
    tb("python3 -c 'import nosuchmodule'"),
    chat_resp(raw_text="I think we're done."),
    tb("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"),
], "completion")
