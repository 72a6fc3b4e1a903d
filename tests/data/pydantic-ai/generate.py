"""Pydantic AI (PyPI pydantic-ai-slim, newest) offline with FunctionModel (scripted), instrumented
with its OpenTelemetry instrumentation (InstrumentationSettings, InMemorySpanExporter).
Run 1: tool raises ModelRetry once, then a tool raises RuntimeError -> run fails.
Run 2: usage limit (request_limit=2) exceeded -> UsageLimitExceeded.
Writes spans (to_json list, OTLP/JSON) and result/all_messages JSON where the run completed."""
import json, pydantic_ai
from pydantic_ai import Agent, ModelRetry, RunContext
from pydantic_ai.models.function import FunctionModel, AgentInfo
from pydantic_ai.messages import ModelResponse, ToolCallPart, TextPart
from pydantic_ai.models.instrumented import InstrumentationSettings
from pydantic_ai.usage import UsageLimits
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from google.protobuf.json_format import MessageToDict

print("pydantic-ai", pydantic_ai.__version__)
exp = InMemorySpanExporter(); tp = TracerProvider(); tp.add_span_processor(SimpleSpanProcessor(exp))
inst = InstrumentationSettings(tracer_provider=tp, include_content=True)

def dump(tag):
    spans = exp.get_finished_spans()
    json.dump([json.loads(s.to_json()) for s in spans], open(f"{tag}.spans.json", "w"), indent=1)
    json.dump(MessageToDict(encode_spans(spans)), open(f"{tag}.otlp.json", "w"))
    exp.clear()

def scripted(parts_list):
    it = iter(parts_list)
    def f(messages, info: AgentInfo):
        return ModelResponse(parts=next(it))
    return FunctionModel(f)

calls = {"n": 0}
Agent.instrument_all(inst)
agent = Agent(name="support_agent")
@agent.tool_plain
def find_user(email: str) -> str:
    """Find a user by email."""
    calls["n"] += 1
    if "@" not in email:
        raise ModelRetry("email must contain @")
    return "user 42"
@agent.tool_plain
def delete_user(user_id: int) -> str:
    """Delete a user."""
    raise RuntimeError("database is read-only")

m1 = scripted([[ToolCallPart("find_user", {"email": "bob"})], [ToolCallPart("find_user", {"email": "bob@x.io"})],
               [ToolCallPart("delete_user", {"user_id": 42})]])
try:
    agent.run_sync("Delete bob's account", model=m1)
except Exception as e:
    print("run1 raised", type(e).__name__, e)
dump("tool-exception")

m2 = scripted([[ToolCallPart("find_user", {"email": "bob"})], [ToolCallPart("find_user", {"email": "bob"})], [TextPart("done")]])
try:
    agent.run_sync("Find bob", model=m2, usage_limits=UsageLimits(request_limit=2))
except Exception as e:
    print("run2 raised", type(e).__name__, e)
dump("usage-limit")

m3 = scripted([[ToolCallPart("find_user", {"email": "bob"})], [ToolCallPart("find_user", {"email": "bob@x.io"})], [TextPart("Bob is user 42.")]])
r = agent.run_sync("Find bob", model=m3)
open("retry-ok.messages.json", "wb").write(r.all_messages_json())
dump("retry-ok")
