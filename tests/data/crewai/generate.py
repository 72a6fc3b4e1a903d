import json, os, sys
os.environ["CREWAI_DISABLE_TELEMETRY"]="true"; os.environ["CREWAI_DISABLE_TRACKING"]="true"; os.environ["CREWAI_TRACING_ENABLED"]="false"
os.environ["OPENAI_API_KEY"]="sk-fake"
PORT = sys.argv[1]; PFX = sys.argv[2]
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, ConsoleSpanExporter
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from openinference.instrumentation.crewai import CrewAIInstrumentor
mem = InMemorySpanExporter(); cons = open(PFX+"-console-spans.txt","w")
tp = TracerProvider(); tp.add_span_processor(SimpleSpanProcessor(mem)); tp.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=cons)))
CrewAIInstrumentor().instrument(tracer_provider=tp)
from crewai import Agent, Task, Crew, LLM
from crewai.tools import tool
@tool("get_weather")
def get_weather(city: str) -> str:
    """Get the weather for a city."""
    if city == "Atlantis":
        raise ValueError(f"Unknown city: {city}")
    return f"{city}: sunny, 21C"
llm = LLM(model="openai/gpt-4o-mini", base_url=f"http://127.0.0.1:{PORT}/v1", api_key="sk-fake", max_retries=0)
a = Agent(role="Weather Reporter", goal="Report weather", backstory="You report weather.", tools=[get_weather], llm=llm, verbose=False, max_iter=5)
t = Task(description="What's the weather in Atlantis and Paris?", expected_output="A short weather report", agent=a)
crew = Crew(agents=[a], tasks=[t], verbose=False)
try:
    out = crew.kickoff()
    open(PFX+"-crew-output.json","w").write(out.model_dump_json(indent=2))
    print("result:", out.raw)
except Exception as e:
    print("EXC", type(e).__name__, e)
tp.force_flush(); cons.close()
spans = mem.get_finished_spans()
json.dump([json.loads(s.to_json()) for s in spans], open(PFX+"-spans-to_json.json","w"), indent=2)
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from google.protobuf.json_format import MessageToJson
open(PFX+"-otlp.json","w").write(MessageToJson(encode_spans(spans)))
for s in spans: print(s.name, s.status.status_code, s.attributes.get("openinference.span.kind"), [e.name for e in s.events])
