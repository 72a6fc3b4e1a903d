import json, os, sys
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, ConsoleSpanExporter
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from openinference.instrumentation.agno import AgnoInstrumentor
mem = InMemorySpanExporter()
console_out = open("agno-console-spans.txt", "w")
tp = TracerProvider()
tp.add_span_processor(SimpleSpanProcessor(mem))
tp.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=console_out)))
AgnoInstrumentor().instrument(tracer_provider=tp)

from agno.agent import Agent
from agno.models.openai import OpenAIChat

def get_weather(city: str) -> str:
    """Get the weather for a city."""
    if city == "Atlantis":
        raise ValueError(f"Unknown city: {city}")
    return f"{city}: sunny, 21C"

agent = Agent(name="Weather Agent", model=OpenAIChat(id="gpt-4o-mini", base_url="http://127.0.0.1:8765/v1", api_key="sk-fake"), tools=[get_weather])
out = agent.run("What's the weather in Atlantis and Paris?")
open("agno-run-output.json", "w").write(json.dumps(out.to_dict(), default=str, indent=2))
tp.force_flush(); console_out.close()
spans = mem.get_finished_spans()
json.dump([json.loads(s.to_json()) for s in spans], open("agno-spans-to_json.json", "w"), indent=2)
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from google.protobuf.json_format import MessageToJson
open("agno-otlp.json", "w").write(MessageToJson(encode_spans(spans)))
print("spans", len(spans), "status", out.status)
