"""Generates the OpenTelemetry traces of two AutoGen AgentChat team runs in
this folder with the real library (autogen-agentchat and autogen-ext 0.7.5,
opentelemetry-sdk 1.45) and scripted models (ReplayChatCompletionClient),
offline. The team's runtime traces every message it delivers as a trace of
its own, linked to the sender's; agents trace their turns (invoke_agent) and
tool calls (execute_tool).

    python -m venv /tmp/ag && /tmp/ag/bin/pip install autogen-agentchat==0.7.5 \\
        autogen-ext==0.7.5 opentelemetry-sdk==1.45.2 \\
        opentelemetry-exporter-otlp-proto-common==1.45.2 \\
        opentelemetry-exporter-zipkin-json==1.45.1 requests
    /tmp/ag/bin/python generate_otel.py

Writes `otel-two-runs.console.jsonl` (ConsoleSpanExporter's span.to_json(),
one span per line), `otel-two-runs.otlp.json` (the same spans as one
OTLP/JSON request, ids in hex as the OTLP/JSON encoding and the Collector's
file exporter write them) and `otel-two-runs.zipkin.json` (the same spans
as the Zipkin exporter's JSON v2 encoder writes them; Zipkin keeps no
links). Ids and times differ on every run; the shapes do not.
"""

import asyncio
import base64
import json
import pathlib

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

EXPORTED = InMemorySpanExporter()
PROVIDER = TracerProvider(resource=Resource.create({"service.name": "refund-desk"}))
PROVIDER.add_span_processor(SimpleSpanProcessor(EXPORTED))
trace.set_tracer_provider(PROVIDER)

from autogen_agentchat.agents import AssistantAgent  # noqa: E402
from autogen_agentchat.conditions import MaxMessageTermination  # noqa: E402
from autogen_agentchat.teams import RoundRobinGroupChat  # noqa: E402
from autogen_core import FunctionCall  # noqa: E402
from autogen_core.models import CreateResult, RequestUsage  # noqa: E402
from autogen_ext.models.replay import ReplayChatCompletionClient  # noqa: E402

HERE = pathlib.Path(__file__).parent
INFO = {
    "vision": False,
    "function_calling": True,
    "json_output": False,
    "family": "unknown",
    "structured_output": False,
}
ORDERS = {"A-16": "delivered, 42.00 USD"}


def model(*replies):
    return ReplayChatCompletionClient(list(replies), model_info=INFO)


def call(name, args, n):
    return CreateResult(
        finish_reason="function_calls",
        content=[FunctionCall(id=f"call_{n}", name=name, arguments=json.dumps(args))],
        usage=RequestUsage(prompt_tokens=120, completion_tokens=18),
        cached=False,
    )


def lookup_order(order_id: str) -> str:
    """Looks an order up by its id."""
    return ORDERS[order_id]


def team(clerk_replies, reviewer_replies):
    clerk = AssistantAgent(
        "clerk", model_client=model(*clerk_replies), tools=[lookup_order]
    )
    reviewer = AssistantAgent("reviewer", model_client=model(*reviewer_replies))
    return RoundRobinGroupChat(
        [clerk, reviewer], termination_condition=MaxMessageTermination(4)
    )


async def main():
    # The order does not exist: the tool raises, the clerk gives up.
    failing = team(
        [call("lookup_order", {"order_id": "A-17"}, 1), "I could not find order A-17."],
        ["Then tell the customer."],
    )
    await failing.run(task="Refund order A-17")
    # The order exists: the tool answers.
    working = team(
        [call("lookup_order", {"order_id": "A-16"}, 2), "Order A-16 is refunded: 42.00 USD."],
        ["Approved."],
    )
    await working.run(task="Refund order A-16")


def hex_ids(value):
    """OTLP/JSON writes trace and span ids in hex; protobuf's JSON mapping
    writes bytes in base64."""
    if isinstance(value, dict):
        return {
            k: base64.b64decode(v).hex()
            if k in ("traceId", "spanId", "parentSpanId") and isinstance(v, str)
            else hex_ids(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [hex_ids(v) for v in value]
    return value


asyncio.run(main())
spans = EXPORTED.get_finished_spans()
with open(HERE / "otel-two-runs.console.jsonl", "w") as f:
    for span in spans:
        f.write(json.dumps(json.loads(span.to_json())) + "\n")

from google.protobuf.json_format import MessageToDict  # noqa: E402
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans  # noqa: E402

request = hex_ids(MessageToDict(encode_spans(spans)))
(HERE / "otel-two-runs.otlp.json").write_text(json.dumps(request) + "\n")

from opentelemetry.exporter.zipkin.json.v2 import JsonV2Encoder  # noqa: E402
from opentelemetry.exporter.zipkin.node_endpoint import NodeEndpoint  # noqa: E402

(HERE / "otel-two-runs.zipkin.json").write_text(
    JsonV2Encoder().serialize(spans, NodeEndpoint()) + "\n"
)
