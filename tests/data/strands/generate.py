"""Strands Agents (PyPI strands-agents, newest) offline with a scripted Model; its OpenTelemetry spans
captured by an InMemorySpanExporter on the global tracer provider. A tool raises; the agent answers."""
import json, uuid
from importlib.metadata import version
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from google.protobuf.json_format import MessageToDict
exp = InMemorySpanExporter(); tp = TracerProvider(); tp.add_span_processor(SimpleSpanProcessor(exp)); trace.set_tracer_provider(tp)
from strands import Agent, tool
from strands.models.model import Model
print("strands-agents", version("strands-agents"))

class Scripted(Model):
    def __init__(self, turns): self.turns = list(turns)
    def update_config(self, **c): pass
    def get_config(self): return {"model_id": "scripted"}
    async def structured_output(self, *a, **k): raise NotImplementedError
    async def stream(self, messages, tool_specs=None, system_prompt=None, **kw):
        t = self.turns.pop(0)
        yield {"messageStart": {"role": "assistant"}}
        if "tool" in t:
            yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": "tu_" + uuid.uuid4().hex[:6], "name": t["tool"]}}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(t["input"])}}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "tool_use"}}
        else:
            yield {"contentBlockDelta": {"delta": {"text": t["text"]}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "end_turn"}}
        yield {"metadata": {"usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15}, "metrics": {"latencyMs": 1}}}

@tool
def get_flight(code: str) -> str:
    """Get a flight's status.

    Args:
        code: flight code
    """
    raise TimeoutError(f"airline API timed out for {code}")

agent = Agent(name="travel_agent", model=Scripted([{"tool": "get_flight", "input": {"code": "BA117"}}, {"text": "The airline system is down; try later."}]),
              tools=[get_flight], callback_handler=None)
r = agent("Is BA117 on time?")
print("stop:", r.stop_reason)
spans = exp.get_finished_spans()
json.dump([json.loads(s.to_json()) for s in spans], open("tool-timeout.spans.json", "w"), indent=1)
json.dump(MessageToDict(encode_spans(spans)), open("tool-timeout.otlp.json", "w"))
json.dump(agent.messages, open("tool-timeout.messages.json", "w"), indent=1, default=str)
