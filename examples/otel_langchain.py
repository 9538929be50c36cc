"""The OpenTelemetry spans of a failing LangChain agent run, printed by the console exporter.

    pip install 'toolmend-langchain[examples]'
    python examples/otel_langchain.py          # offline: a scripted model, one span a line

toolmend needs no setup of its own: it reports through ``opentelemetry-api``
into whatever ``TracerProvider`` the application installs (here the SDK's with
the console exporter; in production an OTLP exporter to Langfuse, Phoenix,
Honeycomb, Tempo...).  The run below makes three tool calls:

- ``get_weather`` (read-only) answers 503 every time: one ``execute_tool
  get_weather`` span with status Error and an event per attempt, each with
  the wait before it;
- ``book_table`` (a write) raises PermissionError: unrecoverable, not retried;
- the model asks for the same booking again: the loop guard refuses it, an
  event on the third span.

The model's own turns show up as ``toolmend.rewrite`` events of the run's span
(form C3 at each decision step).  No argument or error text is in any span;
``toolmend.telemetry.configure(record_content=True)`` (or
``TOOLMEND_OTEL_RECORD_CONTENT=1``) would add them.
"""

from __future__ import annotations

from typing import Any

import httpx
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import BaseTool, tool
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor

from toolmend import RetryPolicy
from toolmend_langchain import ToolMendMiddleware
from toolmend_langchain.testing import ScriptedChatModel, replies

QUESTION = "What is the weather in Oslo? And book a table for two at Fiskeriet at 19:00."


def one_line(span: ReadableSpan) -> str:
    return span.to_json(indent=None) + "\n"


def install_console_tracing() -> TracerProvider:
    """What an application does once at start-up: toolmend's spans need nothing more."""
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(formatter=one_line)))
    trace.set_tracer_provider(provider)
    return provider


def make_tools() -> list[BaseTool]:
    @tool
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        request = httpx.Request("GET", f"https://weather.example/v1/{city}")
        httpx.Response(503, request=request).raise_for_status()
        return "unreachable"

    @tool
    def book_table(restaurant: str, time: str, people: int) -> str:
        """Book a restaurant table."""
        raise PermissionError("this API key may read bookings but not create them")

    return [get_weather, book_table]


def scripted_model() -> ScriptedChatModel:
    booking = {"restaurant": "Fiskeriet", "time": "19:00", "people": 2}

    def turn(name: str, args: dict[str, Any], call_id: str) -> AIMessage:
        return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id}])

    return ScriptedChatModel(
        script=replies(
            [
                turn("get_weather", {"city": "Oslo"}, "call_weather"),
                turn("book_table", booking, "call_book"),
                turn("book_table", booking, "call_book_again"),
                "The weather service is down and I may not book tables with this key.",
            ]
        )
    )


def main() -> None:
    provider = install_console_tracing()
    middleware = ToolMendMiddleware(
        effects={"get_weather": "read_only", "book_table": "write"},
        retry=RetryPolicy(base=0.01, cap=0.02),  # short waits for a demo
    )
    agent = create_agent(scripted_model(), make_tools(), middleware=[middleware])
    with trace.get_tracer("example").start_as_current_span("agent run"):
        agent.invoke({"messages": [HumanMessage(QUESTION)]})
    provider.shutdown()


if __name__ == "__main__":
    main()
