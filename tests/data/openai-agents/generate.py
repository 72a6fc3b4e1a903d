"""OpenAI Agents SDK RunState snapshots (pip install openai-agents==0.25.0; python3 generate.py), offline with a scripted Model.
Scenario 1: triage agent hands off to a billing agent; billing calls lookup_invoice (raises ->
SDK's tool error text), then calls refund (needs approval) -> run interrupts -> to_state().to_json().
Scenario 2: same, approval rejected, resumed, finishes -> final to_state() saved.
Scenario 3: an input guardrail trips (InputGuardrailTripwireTriggered) -> state from exception run_data if possible."""
import asyncio, json, uuid, agents
from agents import Agent, Runner, function_tool, ModelResponse, Usage, RunConfig, input_guardrail, GuardrailFunctionOutput, InputGuardrailTripwireTriggered
from agents.models.interface import Model
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

print("openai-agents", agents.__version__ if hasattr(agents, "__version__") else "?")

def fc(name, args):
    return ResponseFunctionToolCall(type="function_call", name=name, arguments=json.dumps(args), call_id="call_" + uuid.uuid4().hex[:8], id="fc_" + uuid.uuid4().hex[:8], status="completed")
def msg(text):
    return ResponseOutputMessage(type="message", id="msg_" + uuid.uuid4().hex[:8], role="assistant", status="completed",
                                 content=[ResponseOutputText(type="output_text", text=text, annotations=[])])

class Scripted(Model):
    def __init__(self, outputs): self.outputs = list(outputs)
    async def get_response(self, *a, **k):
        return ModelResponse(output=[self.outputs.pop(0)], usage=Usage(), response_id="resp_" + uuid.uuid4().hex[:6])
    def stream_response(self, *a, **k): raise NotImplementedError

@function_tool
def lookup_invoice(invoice_id: str) -> str:
    """Look up an invoice."""
    raise KeyError(invoice_id)

@function_tool(needs_approval=True)
def refund(invoice_id: str, amount: float) -> str:
    """Refund an invoice."""
    return f"refunded {amount} on {invoice_id}"

def build(outputs):
    m = Scripted(outputs)
    billing = Agent(name="Billing agent", instructions="Handle billing.", tools=[lookup_invoice, refund], model=m)
    triage = Agent(name="Triage agent", instructions="Route.", handoffs=[billing], model=m)
    return triage

async def main():
    # 1 + 2
    outs = [fc("transfer_to_billing_agent", {}), fc("lookup_invoice", {"invoice_id": "INV-9"}),
            fc("refund", {"invoice_id": "INV-9", "amount": 30.0}), msg("I could not refund it; the refund was not approved.")]
    triage = build(outs)
    r = await Runner.run(triage, "Refund invoice INV-9, please.", run_config=RunConfig(tracing_disabled=True))
    print("interruptions", r.interruptions)
    st = r.to_state()
    open("v1_22_pending_approval.json", "w").write(st.to_string())
    for it in r.interruptions: st.reject(it)
    r2 = await Runner.run(triage, st, run_config=RunConfig(tracing_disabled=True))
    print("final", r2.final_output)
    open("v1_22_rejected_finished.json", "w").write(r2.to_state().to_string())

    # 3 guardrail
    @input_guardrail
    async def no_refunds(ctx, agent, inp):
        return GuardrailFunctionOutput(output_info={"reason": "refunds blocked"}, tripwire_triggered=True)
    g = Agent(name="Guarded agent", instructions="x", input_guardrails=[no_refunds], model=Scripted([msg("ok")]))
    try:
        await Runner.run(g, "Refund everything", run_config=RunConfig(tracing_disabled=True))
    except InputGuardrailTripwireTriggered as e:
        rd = e.run_data
        print("guardrail tripped; run_data:", type(rd))
        if rd is not None and hasattr(rd, "to_state"):
            open("runstate-guardrail.json", "w").write(rd.to_state().to_string())

asyncio.run(main())
