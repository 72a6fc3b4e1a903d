"""Generate Inspect AI logs offline with mockllm (inspect_ai newest from PyPI).
Scenarios: react agent + handoff to a sub-agent, bash tool in local sandbox (failing command),
submit() wrong answer, numeric partial score, epochs=2, a sample error, a token limit."""
import sys
from inspect_ai import Task, task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import match, includes, scorer, Score, accuracy, mean, Target
from inspect_ai.solver import generate, use_tools, TaskState
from inspect_ai.tool import bash, tool, ToolError
from inspect_ai.agent import react, handoff

fmt = sys.argv[1] if len(sys.argv) > 1 else "eval"

def scripted(*outputs):
    for o in outputs:
        o.usage = ModelUsage(input_tokens=20, output_tokens=8, total_tokens=28)
    return get_model("mockllm/model", custom_outputs=list(outputs))

M = "mockllm/model"
def call(name, **args):
    return ModelOutput.for_tool_call(model=M, tool_name=name, tool_arguments=args)
def say(text):
    return ModelOutput.from_content(model=M, content=text)

@tool
def lookup():
    async def execute(key: str):
        """Look a key up.

        Args:
            key: The key.
        """
        return {"a": 1}[key]
    return execute

# 1. react agent with a sub-agent by handoff, bash in the local sandbox, wrong submission
@task
def react_handoff():
    researcher = react(name="researcher", description="Researches things with bash",
                       tools=[bash(timeout=30)])
    return Task(
        dataset=[Sample(id="s1", input="How many lines are in /etc/hostname-missing? Answer with the number.", target="1")],
        solver=react(name="supervisor", tools=[handoff(researcher)]),
        scorer=match(),
        sandbox="local",
    )

# 2. numeric partial score, 2 epochs
@scorer(metrics=[mean()])
def half():
    async def score(state: TaskState, target: Target):
        return Score(value=0.5, answer=state.output.completion, explanation="half right")
    return score

@task
def partial():
    return Task(dataset=[Sample(id="p1", input="Name two primes.", target="2, 3")],
                solver=[generate()], scorer=half(), epochs=2)

# 3. sample error via tool KeyError, plus token limit
@task
def err_and_limit():
    return Task(
        dataset=[Sample(id="e1", input="Look up b.", target="1"),
                 Sample(id="t1", input="Loop forever.", target="x")],
        solver=[use_tools([lookup()]), generate()],
        scorer=includes(), token_limit=60)

eval(react_handoff(), model=scripted(
        call("transfer_to_researcher"),
        call("bash", cmd="wc -l /etc/hostname-missing"),   # wrong arg name: Inspect logs a parsing ToolError
        call("submit", answer="The file does not exist"),   # researcher's submit returns to supervisor
        call("submit", answer="0"),
     ), log_dir="logs", log_format=fmt, display="none", fail_on_error=False)

# 1b. single react agent (no handoff): bash fails (missing file), then wrong submit
@task
def react_bash():
    return Task(dataset=[Sample(id="b1", input="How many lines are in /etc/hostname-missing?", target="1")],
                solver=react(name="solo", tools=[bash(timeout=30)]), scorer=match(), sandbox="local")

eval(react_bash(), model=scripted(
        call("bash", command="wc -l /etc/hostname-missing"),
        call("bash", command="python3 -c 'import nosuchmod'"),
        call("submit", answer="0")),
     log_dir="logs", log_format=fmt, display="none", fail_on_error=False)

eval(partial(), model=scripted(say("2 and 5"), say("2 and 3")), log_dir="logs", log_format=fmt, display="none")

eval(err_and_limit(), model=scripted(call("lookup", key="b"), call("lookup", key="a"), call("lookup", key="a"), call("lookup", key="a"), call("lookup", key="a")),
     log_dir="logs", log_format=fmt, display="none", max_samples=1, fail_on_error=False)
