"""A LangChain agent that recovers from failed tool calls with toolmend.

    pip install 'toolmend-langchain[examples]'
    python examples/langchain_agent.py                      # offline, scripted model
    python examples/langchain_agent.py --base-url http://127.0.0.1:8080/v1 --model local

Two tools fail: ``get_weather`` (read-only) answers 503 twice, and toolmend
retries it inside the tool step; ``book_table`` (a write) is refused with a
PermissionError, which is not retried, and the model is told so in form C3 at
its next decision.  The note is only in that one request: the transcript below
(the graph state) never contains it.  With ``--base-url`` the same agent runs
against any OpenAI-compatible endpoint through langchain-openai's ChatOpenAI.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from typing import Any

import httpx
from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, tool

from toolmend import RetryPolicy
from toolmend_langchain import ToolMendMiddleware, reports
from toolmend_langchain.testing import ScriptedChatModel, replies

QUESTION = "What is the weather in Oslo? And book a table for two at Fiskeriet at 19:00."
SYSTEM = "You are a helpful assistant. Use the tools to answer."


def make_tools() -> list[BaseTool]:
    """Fresh tools for one run: the weather service is down for its first two requests."""
    weather_requests: list[str] = []

    @tool
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        weather_requests.append(city)
        if len(weather_requests) <= 2:
            request = httpx.Request("GET", f"https://weather.example/v1/{city}")
            httpx.Response(503, request=request).raise_for_status()
        return f"{city}: 14°C, light rain"

    @tool
    def book_table(restaurant: str, time: str, people: int) -> str:
        """Book a restaurant table."""
        raise PermissionError("this API key may read bookings but not create them")

    return [get_weather, book_table]


def scripted_model() -> ScriptedChatModel:
    calls = [
        {"name": "get_weather", "args": {"city": "Oslo"}, "id": "call_weather"},
        {
            "name": "book_table",
            "args": {"restaurant": "Fiskeriet", "time": "19:00", "people": 2},
            "id": "call_booking",
        },
    ]
    answer = (
        "Oslo: 14°C with light rain. I could not book the table: the booking service "
        "refused the request because this account may not create bookings."
    )
    return ScriptedChatModel(script=replies([AIMessage(content="", tool_calls=calls), answer]))


def openai_model(base_url: str, model: str, api_key: str | None) -> BaseChatModel:
    from langchain_openai import ChatOpenAI
    from pydantic import SecretStr

    key = SecretStr(api_key or os.environ.get("OPENAI_API_KEY") or "not-needed")
    chat: BaseChatModel = ChatOpenAI(base_url=base_url, model=model, api_key=key, temperature=0)
    return chat


def build_agent(model: BaseChatModel) -> Any:
    toolmend = ToolMendMiddleware(
        effects={"get_weather": "read_only", "book_table": "write"},
        retry=RetryPolicy(attempts=3, base=0.05, cap=0.2),
    )
    return create_agent(model, make_tools(), system_prompt=SYSTEM, middleware=[toolmend])


def line(message: BaseMessage) -> str:
    if isinstance(message, ToolMessage):
        return f"tool {message.name} [{message.status}]: {message.content}"
    if isinstance(message, AIMessage) and message.tool_calls:
        calls = ", ".join(
            f"{c['name']}({', '.join(f'{k}={v}' for k, v in c['args'].items())})"
            for c in message.tool_calls
        )
        return f"ai -> {calls}"
    return f"{message.type}: {message.content}"


def summary(record: dict[str, Any]) -> str:
    if "rewrite" in record:
        rewrite = record["rewrite"]
        failed = ", ".join(f"{d['tool_name']}:{d['kind']}" for d in rewrite["detections"])
        return f"model request: form={rewrite['form']} changed={rewrite['changed']} ({failed})"
    name = record.get("tool") or record.get("tool_call_id")
    if record.get("failed"):
        return (
            f"{name}: failed kind={record['kind']} attempts={record.get('attempts', 1)} "
            f"stop={record.get('stop')}"
        )
    return f"{name}: succeeded after {record.get('attempts', 1)} attempts"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--base-url", help="an OpenAI-compatible endpoint, e.g. .../v1")
    parser.add_argument("--model", default="local", help="model name for --base-url")
    parser.add_argument("--api-key", help="defaults to $OPENAI_API_KEY, else a placeholder")
    parser.add_argument("--question", default=QUESTION)
    parser.add_argument("-v", "--verbose", action="store_true", help="show toolmend's log")
    args = parser.parse_args(argv)
    if args.verbose:
        logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")

    scripted = None if args.base_url else scripted_model()
    model = openai_model(args.base_url, args.model, args.api_key) if args.base_url else scripted
    assert model is not None
    agent = build_agent(model)
    out = agent.invoke({"messages": [HumanMessage(args.question)]})

    print("== transcript (the graph state: no note in it) ==")
    for message in out["messages"]:
        print(line(message))
    if scripted is not None and len(scripted.seen) > 1:
        print("\n== the end of what the model was sent at its second decision ==")
        print(line(scripted.seen[1][-1]))
    print("\n== toolmend reports ==")
    for record in reports(out["messages"]):
        print(summary(record))
    return 0


if __name__ == "__main__":
    sys.exit(main())
