"""Writes the chat transcripts of this folder with the OpenAI and Anthropic
Python SDKs' own types (openai 1.x/2.x, anthropic), offline.

The agent's turns are scripted; the tools are real Python functions run
here, so every tool reply (and every error: an exception's message, a
traceback, an error object) is what the code produced. Each message is
built as the SDK's pydantic model or validated against its request-param
type, and written with the SDK's own serializer, so the files have exactly
the shapes the SDKs send and return.

    python3 -m venv /tmp/v && /tmp/v/bin/pip install openai anthropic
    /tmp/v/bin/python tests/data/transcripts/generate.py
"""

import json
import traceback
from pathlib import Path

import anthropic.types as at
import openai.types.chat as oc
import openai.types.responses as orsp
from pydantic import TypeAdapter

HERE = Path(__file__).parent

ORDERS = {
    "A-100": {"status": "delivered", "items": ["kettle"], "total": 39.5},
    "A-101": {"status": "in_transit", "items": ["lamp", "bulb"], "total": 21.0},
}
REFUNDS = []


def lookup_order(order_id):
    return ORDERS[order_id]


def refund_order(order_id, amount):
    order = ORDERS[order_id]
    if order["status"] != "delivered":
        raise ValueError(f"order {order_id} is {order['status']}; only delivered orders are refunded")
    if amount > order["total"]:
        raise ValueError(f"refund {amount} exceeds the order total {order['total']}")
    REFUNDS.append((order_id, amount))
    return {"refunded": amount, "order_id": order_id}


def read_policy(section):
    with open(f"/nonexistent/policies/{section}.md") as f:
        return f.read()


TOOLS = {"lookup_order": lookup_order, "refund_order": refund_order, "read_policy": read_policy}


def run_tool(name, args):
    """The tool's result, or the exception it raised."""
    try:
        return TOOLS[name](**args), None
    except Exception as e:  # noqa: BLE001 - the transcript records it
        return None, e


def chat_dump(model):
    return model.model_dump(mode="json", exclude_none=True)


def param(adapter, value):
    """A request param, as written, once the SDK's type has validated it
    (its lists validate lazily: blocks are checked by their own types)."""
    TypeAdapter(adapter).validate_python(value)
    return value


# ---- OpenAI Chat Completions ----

def chat_conversation(conv_id, task, steps, error_style):
    """Messages of one conversation: `steps` are (text, [(name, args)])."""
    messages = [
        param(oc.ChatCompletionSystemMessageParam, {"role": "system", "content": "You are a support agent for an online shop."}),
        param(oc.ChatCompletionUserMessageParam, {"role": "user", "content": task}),
    ]
    n = 0
    for text, calls in steps:
        tool_calls = []
        for name, args in calls:
            n += 1
            tool_calls.append(
                oc.ChatCompletionMessageFunctionToolCall(
                    id=f"call_{conv_id}_{n}",
                    type="function",
                    function={"name": name, "arguments": json.dumps(args)},
                )
            )
        msg = oc.ChatCompletionMessage(role="assistant", content=text, tool_calls=tool_calls or None)
        messages.append(chat_dump(msg))
        for call, (name, args) in zip(tool_calls, calls):
            result, err = run_tool(name, args)
            if err is None:
                content = json.dumps(result)
            elif error_style == "traceback":
                # Paths relative to the repository, not this machine's.
                root = str(HERE.parents[2]) + "/"
                content = "".join(traceback.format_exception(err)).replace(root, "")
            else:
                content = f"Error: {type(err).__name__}: {err}"
            messages.append(param(oc.ChatCompletionToolMessageParam, {"role": "tool", "tool_call_id": call.id, "content": content}))
    return messages


def write_chat():
    recovered = chat_conversation(
        "r1",
        "Refund the kettle of order A-100 (39.50).",
        [
            (None, [("refund_order", {"order_id": "A-100", "amount": 45.0})]),
            ("The amount was too high; refunding the order total.", [("refund_order", {"order_id": "A-100", "amount": 39.5})]),
            ("Your refund of 39.50 is on its way.", []),
        ],
        "text",
    )
    # One run per file, wrapped with the keys an eval harness adds.
    doc = {"id": "chat-refund-recovered", "task": "Refund the kettle of order A-100.", "reward": 1.0, "messages": recovered}
    (HERE / "openai-chat-recovered.json").write_text(json.dumps(doc, indent=2) + "\n")

    # Several runs, one per line, with their scores by name.
    lines = []
    failed = chat_conversation(
        "f1",
        "Refund order A-101 and tell me the refund policy.",
        [
            (None, [("lookup_order", {"order_id": "A-101"}), ("read_policy", {"section": "refunds"})]),
            (None, [("refund_order", {"order_id": "A-101", "amount": 21.0})]),
            ("I could not refund that order.", []),
        ],
        "traceback",
    )
    lines.append({"id": "chat-refund-in-transit", "messages": failed, "scores": {"refund_issued": {"value": 0}, "polite": {"value": 1}}})
    passed = chat_conversation(
        "p1",
        "Where is order A-101?",
        [(None, [("lookup_order", {"order_id": "A-101"})]), ("Order A-101 is in transit.", [])],
        "text",
    )
    lines.append({"id": "chat-where-is-my-order", "messages": passed, "scores": {"refund_issued": {"value": 1}, "polite": {"value": 1}}})
    (HERE / "openai-chat-runs.jsonl").write_text("".join(json.dumps(l) + "\n" for l in lines))
    return recovered, passed


# ---- OpenAI Responses API items ----

def write_responses():
    items = [param(orsp.EasyInputMessageParam, {"role": "user", "content": "Is order A-999 delivered? If not, look up A-100."})]
    items.append(chat_dump(orsp.ResponseReasoningItem(id="rs_1", type="reasoning", summary=[{"type": "summary_text", "text": "Look the order up first."}])))
    n = 0
    for order in ["A-999", "A-100"]:
        n += 1
        call = orsp.ResponseFunctionToolCall(
            id=f"fc_{n}", call_id=f"call_{n}", type="function_call", name="lookup_order",
            arguments=json.dumps({"order_id": order}), status="completed",
        )
        items.append(chat_dump(call))
        result, err = run_tool("lookup_order", {"order_id": order})
        output = json.dumps(result if err is None else {"error": f"{type(err).__name__}: {err}"})
        items.append(param(orsp.response_input_item_param.FunctionCallOutput, {"type": "function_call_output", "call_id": call.call_id, "output": output}))
    items.append(
        chat_dump(
            orsp.ResponseOutputMessage(
                id="msg_1", type="message", role="assistant", status="completed",
                content=[{"type": "output_text", "text": "A-999 does not exist; A-100 was delivered.", "annotations": []}],
            )
        )
    )
    (HERE / "openai-responses-items.json").write_text(json.dumps(items, indent=2) + "\n")


# ---- Anthropic Messages ----

def write_anthropic():
    messages = [param(at.MessageParam, {"role": "user", "content": "Refund order A-101 in full, then confirm."})]
    n = 0

    def assistant_turn(thinking, text, calls):
        nonlocal n
        blocks = []
        if thinking:
            blocks.append(at.ThinkingBlock(type="thinking", thinking=thinking, signature="sig"))
        if text:
            blocks.append(at.TextBlock(type="text", text=text))
        uses = []
        for name, args in calls:
            n += 1
            use = at.ToolUseBlock(type="tool_use", id=f"toolu_{n:02d}", name=name, input=args)
            blocks.append(use)
            uses.append(use)
        msg = at.Message(
            id=f"msg_{n:02d}", type="message", role="assistant", model="claude-sonnet-4-5",
            content=blocks, stop_reason="tool_use" if uses else "end_turn", stop_sequence=None,
            usage={"input_tokens": 100, "output_tokens": 20},
        )
        # What goes back into `messages` is the response's role and content.
        block_types = {"thinking": at.ThinkingBlockParam, "text": at.TextBlockParam, "tool_use": at.ToolUseBlockParam}
        content = [param(block_types[b.type], b.model_dump(mode="json", exclude_none=True)) for b in msg.content]
        messages.append(param(at.MessageParam, {"role": "assistant", "content": content}))
        results = []
        for use in uses:
            result, err = run_tool(use.name, use.input)
            block = {"type": "tool_result", "tool_use_id": use.id}
            if err is None:
                block["content"] = [{"type": "text", "text": json.dumps(result)}]
            else:
                block["content"] = f"{type(err).__name__}: {err}"
                block["is_error"] = True
            results.append(param(at.ToolResultBlockParam, block))
        if results:
            messages.append(param(at.MessageParam, {"role": "user", "content": results}))

    assistant_turn("Check the order before refunding.", None, [("lookup_order", {"order_id": "A-101"})])
    assistant_turn(None, "Refunding now.", [("refund_order", {"order_id": "A-101", "amount": 21.0})])
    assistant_turn(None, "I cannot refund A-101: it has not been delivered yet.", [])
    doc = {"model": "claude-sonnet-4-5", "max_tokens": 1024, "system": "You are a support agent for an online shop.", "messages": messages}
    (HERE / "anthropic-messages-refused.json").write_text(json.dumps(doc, indent=2) + "\n")
    return messages


def main():
    recovered, passed = write_chat()
    write_responses()
    anthropic_messages = write_anthropic()
    # Named cases in one object, each a transcript of its own.
    cases = {"refund_recovered": recovered, "where_is_my_order": passed, "refund_refused": {"messages": anthropic_messages}}
    (HERE / "named-cases.json").write_text(json.dumps(cases, indent=2) + "\n")


if __name__ == "__main__":
    main()
