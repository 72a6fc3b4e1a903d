"""Generates the MLflow traces in this folder with the real library
(mlflow-skinny 3.18.0, MLflow Tracing), offline: the agent, its model and
its tools are plain Python functions traced with `@mlflow.trace` and
`mlflow.start_span`; nothing calls a model.

    python -m venv /tmp/mlf && /tmp/mlf/bin/pip install mlflow-skinny==3.18.0
    MLFLOW_ALLOW_FILE_STORE=true /tmp/mlf/bin/python generate.py

Writes `refund-agent.trace.json` (`Trace.to_json(pretty=True)` of a run
whose tool raised and whose agent then gave up, raising), `two-runs.json`
(`[t.to_dict() for t in mlflow.search_traces(return_type="list")]`: a run
that recovered and the failed one) and `refund-agent.traces.json` (the
failed run's `traces.json` as the tracking store keeps it: its spans
only). Ids and times differ on every run; the shapes do not.
"""

import json
import pathlib
import shutil
import tempfile

import mlflow
from mlflow.entities import SpanType

HERE = pathlib.Path(__file__).parent
STORE = pathlib.Path(tempfile.mkdtemp())
mlflow.set_tracking_uri(STORE.as_uri())
mlflow.set_experiment("refunds")

ORDERS = {"A-16": {"status": "delivered", "total": 42.0}}


@mlflow.trace(span_type=SpanType.TOOL)
def lookup_order(order_id: str) -> dict:
    return ORDERS[order_id]


@mlflow.trace(span_type=SpanType.TOOL)
def refund(order_id: str, amount: float) -> str:
    return f"refunded {amount} on {order_id}"


def chat(messages, reply):
    """A model call as a chat model's span records it (no model runs)."""
    with mlflow.start_span(name="ChatModel", span_type=SpanType.CHAT_MODEL) as span:
        span.set_inputs({"messages": messages})
        span.set_outputs({"choices": [{"message": {"role": "assistant", "content": reply}}]})
        return reply


class GaveUp(RuntimeError):
    pass


@mlflow.trace(span_type=SpanType.AGENT, name="refund_agent")
def refund_agent(task: str, order_id: str) -> str:
    messages = [{"role": "user", "content": task}]
    chat(messages, f"I will look order {order_id} up.")
    try:
        order = lookup_order(order_id)
    except KeyError:
        chat(messages, "The order does not exist; I cannot refund it.")
        raise GaveUp(f"no order {order_id} to refund")
    chat(messages, f"Order {order_id} totals {order['total']}; refunding.")
    return refund(order_id, order["total"])


refund_agent("Refund order A-16, please.", "A-16")
try:
    refund_agent("Refund order A-17, please.", "A-17")
except GaveUp:
    pass
failed_id = mlflow.get_last_active_trace_id()
mlflow.flush_trace_async_logging()

failed = mlflow.get_trace(failed_id)
(HERE / "refund-agent.trace.json").write_text(failed.to_json(pretty=True) + "\n")
traces = mlflow.search_traces(return_type="list", order_by=["timestamp_ms ASC"])
(HERE / "two-runs.json").write_text(
    json.dumps([t.to_dict() for t in traces], indent=2) + "\n"
)
stored = next(STORE.glob(f"*/traces/{failed_id}/artifacts/traces.json"))
shutil.copy(stored, HERE / "refund-agent.traces.json")
shutil.rmtree(STORE)
