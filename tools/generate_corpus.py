"""Build the detection corpus from errors raised by the real libraries.

Run: ./dev python -m tools.generate_corpus

Every failure text here is produced by running the code that produces it in
practice: a loopback HTTP server (127.0.0.1 only) answering 4xx/5xx to httpx,
requests, urllib and the OpenAI and Anthropic SDKs; real sockets, files, sqlite,
pydantic and jsonschema errors; and the frameworks' own wrappers (LangGraph's
ToolNode, LangChain's ToolRetryMiddleware, an in-memory MCP server, the OpenAI
Agents SDK).  Only the coding agents' texts are written by hand: they are the
recorded texts of the paper's Appendix A, and those agents are not Python
libraries.  Each case is labelled by hand with the correct next action, or as
clean; the labels are never computed by toolmend.

Texts vary between library versions, which is why this script exists: rerun it
after an upgrade and review the diff of ``errors.jsonl``.  Ports, object
addresses and file system paths are normalised so that reruns are stable.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import http.server
import importlib.metadata
import json
import logging
import os
import re
import socket
import sqlite3
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "core" / "corpus" / "errors.jsonl"
PORT = 48080
CLOSED_PORT = 48081

T, F, U, A = "transient", "fixable", "unrecoverable", "ambiguous"
CLEAN = "clean"

QWEN = "QwenCode/0.0.14 (linux; x64)"
CODEX = "codex_cli_rs/0.46.0 (Ubuntu 24.4.0; x86_64) xterm-256color"
KILO = "Kilo-Code/4.97.0"
OPENCODE = "opencode/0.15.8 ai-sdk/provider-utils/3.0.9 runtime/bun/1.2.21"


@dataclass
class Case:
    id: str
    origin: str
    content: Any
    expect: str
    rule: str | None
    flags: dict[str, Any] = field(default_factory=dict)
    note: str | None = None

    def line(self) -> dict[str, Any]:
        failed = self.expect != CLEAN
        out: dict[str, Any] = {"id": self.id, "origin": self.origin, "content": self.content}
        out.update(self.flags)
        out["expect"] = {
            "failed": failed,
            "kind": self.expect if failed else None,
            "rule": self.rule if failed else None,
        }
        if self.note:
            out["note"] = self.note
        return out


CASES: list[Case] = []
_NORMAL: list[tuple[str, str]] = []


def normalise(text: str) -> str:
    for old, new in _NORMAL:
        text = text.replace(old, new)
    return _hex_addresses(text)


def _hex_addresses(text: str) -> str:
    return re.sub(r" at 0x[0-9a-f]+", " at 0x7f0000000000", text)


def add(
    case_id: str,
    origin: str,
    content: Any,
    expect: str,
    rule: str | None = "generic",
    *,
    note: str | None = None,
    **flags: Any,
) -> None:
    if isinstance(content, str):
        content = normalise(content)
    CASES.append(Case(case_id, origin, content, expect, rule, flags, note))


def clean(
    case_id: str, origin: str, content: Any, *, note: str | None = None, **flags: Any
) -> None:
    add(case_id, origin, content, CLEAN, None, note=note, **flags)


def version(dist: str) -> str:
    return f"{dist} {importlib.metadata.version(dist)}"


def raised(action: Callable[[], Any]) -> BaseException:
    try:
        action()
    except Exception as exc:
        return exc
    raise AssertionError(f"{action} did not raise")


def last_line(exc: BaseException) -> str:
    """The exception as a traceback's last line prints it."""
    return "".join(traceback.format_exception_only(exc)).rstrip("\n")


def formatted(exc: BaseException) -> str:
    return "".join(traceback.format_exception(exc)).rstrip("\n")


# -- loopback HTTP server -------------------------------------------------------

REASONS = {
    400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
    408: "Request Timeout", 409: "Conflict", 422: "Unprocessable Entity",
    429: "Too Many Requests", 500: "Internal Server Error", 502: "Bad Gateway",
    503: "Service Unavailable", 504: "Gateway Timeout",
}  # fmt: skip
# The kind each status calls for: 404 and 409 are used for both temporary and
# permanent conditions, so they stay ambiguous.
STATUS_KIND = {
    400: F, 401: U, 403: U, 404: A, 408: T, 409: A, 422: F, 429: T,
    500: T, 502: T, 503: T, 504: T,
}  # fmt: skip
# Anthropic's error types per status; statuses it does not document get api_error.
ANTHROPIC_TYPES = {
    400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
    404: "not_found_error", 429: "rate_limit_error", 504: "timeout_error",
}  # fmt: skip
NEUTRAL = "The request was not completed."


class Handler(http.server.BaseHTTPRequestHandler):
    """``/<style>/<status>[/retry]/...`` answers that status; ``/slow/`` never answers in time;
    ``/reset/`` drops the connection with a TCP reset.
    """

    protocol_version = "HTTP/1.1"

    def _answer(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        if length:
            self.rfile.read(length)
        parts = self.path.strip("/").split("/")
        style = parts[0]
        if style == "slow":
            time.sleep(1.5)
            return
        if style == "reset":
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_connection = True
            self.connection.close()
            return
        code = int(parts[1])
        if style == "openai":
            body = json.dumps({"error": {"message": NEUTRAL, "type": "api_error", "code": None}})
        elif style == "anthropic":
            kind = ANTHROPIC_TYPES.get(code, "api_error")
            body = json.dumps({"type": "error", "error": {"type": kind, "message": NEUTRAL}})
        else:
            body = REASONS[code]
        data = body.encode()
        self.send_response(code)
        self.send_header("content-type", "application/json" if style != "plain" else "text/plain")
        self.send_header("content-length", str(len(data)))
        if len(parts) > 2 and parts[2] == "retry":
            self.send_header("retry-after", "7")
        self.end_headers()
        self.wfile.write(data)

    do_GET = _answer
    do_POST = _answer

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextlib.contextmanager
def loopback() -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    port = server.server_address[1]
    _NORMAL.append((f"127.0.0.1:{port}", f"127.0.0.1:{PORT}"))
    _NORMAL.append((f"port={port}", f"port={PORT}"))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield port
    finally:
        server.shutdown()
        server.server_close()


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    _NORMAL.append((f"127.0.0.1:{port}", f"127.0.0.1:{CLOSED_PORT}"))
    _NORMAL.append((f"port={port}", f"port={CLOSED_PORT}"))
    return port


def http_cases(port: int) -> None:
    import anthropic
    import httpx
    import openai
    import requests

    base = f"http://127.0.0.1:{port}"
    for code, kind in STATUS_KIND.items():
        variants = [("", "")] + ([("-retry-after", "/retry")] if code == 429 else [])
        for suffix, retry in variants:
            tag = f"{code}{suffix}"
            header = " with Retry-After: 7" if retry else ""
            plain = f"{base}/plain/{code}{retry}"
            exc = raised(lambda url=plain: httpx.get(url).raise_for_status())
            add(
                f"http/httpx/{tag}",
                f"{version('httpx')}: raise_for_status, HTTP {code}{header}",
                str(exc),
                kind,
            )
            exc = raised(lambda url=plain: requests.get(url).raise_for_status())
            add(
                f"http/requests/{tag}",
                f"{version('requests')}: raise_for_status, HTTP {code}{header}",
                str(exc),
                kind,
            )
            exc = raised(lambda url=plain: urllib.request.urlopen(url))
            add(
                f"http/urllib/{tag}", f"urllib.request.urlopen, HTTP {code}{header}", str(exc), kind
            )
            chat = openai.OpenAI(
                base_url=f"{base}/openai/{code}{retry}/v1", api_key="sk-test", max_retries=0
            ).chat.completions
            exc = raised(
                lambda chat=chat: chat.create(
                    model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}]
                )
            )
            add(
                f"http/openai/{tag}",
                f"{version('openai')}: {type(exc).__name__}, HTTP {code}{header}",
                str(exc),
                kind,
            )
            messages = anthropic.Anthropic(
                base_url=f"{base}/anthropic/{code}{retry}", api_key="sk-ant-test", max_retries=0
            ).messages
            exc = raised(
                lambda messages=messages: messages.create(
                    model="claude-test", max_tokens=8, messages=[{"role": "user", "content": "hi"}]
                )
            )
            add(
                f"http/anthropic/{tag}",
                f"{version('anthropic')}: {type(exc).__name__}, HTTP {code}{header}",
                str(exc),
                kind,
            )


def connection_cases(port: int) -> None:
    import httpx
    import openai
    import requests

    dead = closed_port()
    url = f"http://127.0.0.1:{dead}/v1/forecast"
    exc = raised(lambda: socket.create_connection(("127.0.0.1", dead)))
    add("conn/socket/refused", "socket.create_connection to a closed loopback port", str(exc), T)
    add("conn/socket/refused-line", "the same, as a traceback's last line", last_line(exc), T)
    exc = raised(lambda: httpx.get(url))
    add("conn/httpx/refused", f"{version('httpx')}: ConnectError", str(exc), T)
    add(
        "conn/httpx/refused-line",
        f"{version('httpx')}: ConnectError as a traceback line",
        last_line(exc),
        T,
    )
    exc = raised(lambda: requests.get(url))
    add("conn/requests/refused", f"{version('requests')}: ConnectionError", str(exc), T)
    exc = raised(lambda: urllib.request.urlopen(url))
    add("conn/urllib/refused", "urllib.request.urlopen: URLError", str(exc), T)
    client = openai.OpenAI(base_url=f"http://127.0.0.1:{dead}/v1", api_key="sk", max_retries=0)
    exc = raised(lambda: client.models.list())
    add(
        "conn/openai/refused-flagged",
        f"{version('openai')}: APIConnectionError, flagged",
        str(exc),
        T,
        "is_error",
        is_error=True,
    )
    add(
        "conn/openai/refused-bare",
        f"{version('openai')}: APIConnectionError, no flag",
        str(exc),
        CLEAN,
        None,
        note="a bare 'Connection error.' without a flag is not evidence of a failure",
    )

    slow = f"http://127.0.0.1:{port}/slow/"
    exc = raised(lambda: httpx.get(slow, timeout=0.2))
    add(
        "timeout/httpx/read-flagged",
        f"{version('httpx')}: ReadTimeout, flagged",
        str(exc),
        T,
        "is_error",
        is_error=True,
    )
    add(
        "timeout/httpx/read-line",
        f"{version('httpx')}: ReadTimeout as a traceback line",
        last_line(exc),
        T,
    )
    exc = raised(lambda: requests.get(slow, timeout=0.2))
    add("timeout/requests/read", f"{version('requests')}: ReadTimeout", str(exc), T)
    client = openai.OpenAI(base_url=slow, api_key="sk", max_retries=0, timeout=0.2)
    exc = raised(lambda: client.models.list())
    add(
        "timeout/openai/status",
        f"{version('openai')}: APITimeoutError, LangChain status",
        str(exc),
        T,
        "status",
        status="error",
    )
    exc = raised(lambda: urllib.request.urlopen(slow, timeout=0.2))
    add(
        "timeout/urllib/line",
        "urllib.request.urlopen timeout as a traceback line",
        last_line(exc),
        T,
    )

    reset = f"http://127.0.0.1:{port}/reset/"
    exc = raised(lambda: httpx.get(reset))
    add(
        "conn/httpx/reset",
        f"{version('httpx')}: {type(exc).__name__} on a TCP reset, flagged",
        str(exc),
        T,
        "is_error",
        is_error=True,
    )
    exc = raised(lambda: requests.get(reset))
    add(
        "conn/requests/reset",
        f"{version('requests')}: {type(exc).__name__} on a TCP reset",
        str(exc),
        T,
    )
    exc = raised(lambda: _reset_socket(port))
    add("conn/socket/reset", "socket.recv after a TCP reset", str(exc), T)
    add("conn/socket/reset-line", "the same, as a traceback line", last_line(exc), T)


def _reset_socket(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(b"GET /reset/ HTTP/1.1\r\nHost: x\r\n\r\n")
        time.sleep(0.2)
        sock.recv(10)
        sock.recv(10)


# -- Python exceptions, OS errors, sqlite, validators ----------------------------


def read_text(path: str) -> str:
    with open(path) as file:
        return file.read()


def lookup(city: str, days: int = 1) -> str:
    return f"{city}:{days}"


def python_cases() -> None:
    from langgraph.prebuilt.tool_node import TOOL_CALL_ERROR_TEMPLATE

    call: Any = lookup
    exc = raised(lambda: call(town="Paris"))
    add("py/typeerror/keyword", "calling a function with an unknown keyword", str(exc), F)
    add("py/typeerror/keyword-line", "the same, as a traceback line", last_line(exc), F)
    exc = raised(lambda: call())
    add("py/typeerror/missing", "calling a function without a required argument", str(exc), F)
    exc = raised(lambda: call("Paris", 2, 3))
    add("py/typeerror/positional", "calling a function with too many arguments", last_line(exc), F)
    exc = raised(lambda: call("Paris", city="Lyon"))
    add("py/typeerror/multiple", "passing an argument twice", last_line(exc), F)
    exc = raised(lambda: "Paris" + call)
    add(
        "py/typeerror/operand",
        "a TypeError that is not about the call's arguments",
        last_line(exc),
        A,
    )
    exc = raised(lambda: int("tomorrow"))
    add("py/valueerror/int", "int() of a word", last_line(exc), A)
    exc = raised(lambda: {}["city"])
    add("py/keyerror", "a missing dict key", last_line(exc), A)
    exc = raised(lambda: json.loads("<html>"))
    add("py/jsondecode", "json.loads of an HTML page", last_line(exc), A)
    exc = raised(lambda: read_text("/nonexistent/forecast.csv"))
    add(
        "py/filenotfound",
        "open() of a missing file",
        str(exc),
        A,
        note="a missing file may be a wrong path or not created yet",
    )
    add("py/filenotfound-line", "the same, as a traceback line", last_line(exc), A)
    with tempfile.TemporaryDirectory() as folder:
        exc = raised(lambda: read_text(folder))
        add("py/isadirectory", "open() of a directory", str(exc).replace(folder, "/tmp/work"), F)
    exc = raised(raise_timeout)
    add("py/timeout-bare", "a bare TimeoutError as a traceback line", last_line(exc), T)

    for code, path, kind in [
        (errno.EACCES, "/srv/reports/q3.xlsx", U),
        (errno.EROFS, "/mnt/archive/out.txt", U),
        (errno.ENOSPC, "/var/tmp/export.tar", U),
        (errno.EPERM, "/etc/hosts", U),
        (errno.ECONNREFUSED, None, T),
        (errno.ENOENT, "/srv/missing.txt", A),
    ]:
        name = errno.errorcode[code]
        error = OSError(code, os.strerror(code), path) if path else OSError(code, os.strerror(code))
        add(f"os/{name.lower()}", f"OSError({name}) as Python raises it: str", str(error), kind)
        add(f"os/{name.lower()}-line", f"OSError({name}): traceback line", last_line(error), kind)
        add(
            f"os/{name.lower()}-langgraph",
            f"OSError({name}) in LangGraph's TOOL_CALL_ERROR_TEMPLATE",
            TOOL_CALL_ERROR_TEMPLATE.format(error=repr(error)),
            kind,
        )


def raise_timeout() -> None:
    raise TimeoutError


def sqlite_cases() -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "app.db")
        first = sqlite3.connect(path, timeout=0)
        first.execute("create table orders (id integer primary key, item text)")
        first.commit()
        first.execute("begin exclusive")
        second = sqlite3.connect(path, timeout=0)
        exc = raised(lambda: second.execute("insert into orders (item) values ('tea')"))
        add(
            "sqlite/locked", f"sqlite3 {sqlite3.sqlite_version}: a second writer", last_line(exc), T
        )
        add(
            "sqlite/locked-flagged",
            "the same, str, flagged",
            str(exc),
            T,
            "is_error",
            is_error=True,
        )
        first.rollback()
        first.close()
        second.close()
        readonly = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        exc = raised(lambda: readonly.execute("insert into orders (item) values ('tea')"))
        add("sqlite/readonly", "sqlite3: writing through a read-only connection", last_line(exc), U)
        exc = raised(lambda: readonly.execute("select * from order_items"))
        add("sqlite/no-table", "sqlite3: a query on a missing table", last_line(exc), F)
        add(
            "sqlite/no-table-flagged",
            "the same, str, flagged",
            str(exc),
            F,
            "is_error",
            is_error=True,
        )
        exc = raised(lambda: readonly.execute("selec * from orders"))
        add("sqlite/syntax", "sqlite3: a misspelt statement", last_line(exc), F)
        readonly.close()


def validator_cases() -> None:
    import jsonschema
    import pydantic

    class Forecast(pydantic.BaseModel):
        city: str
        days: int = pydantic.Field(ge=1, le=14)

    exc = raised(lambda: Forecast.model_validate({"days": 3}))
    add("pydantic/missing", f"{version('pydantic')}: a missing field", str(exc), F)
    exc = raised(lambda: Forecast.model_validate({"city": "Oslo", "days": 30}))
    add(
        "pydantic/range",
        f"{version('pydantic')}: a value out of range, traceback line",
        last_line(exc),
        F,
    )
    exc = raised(lambda: Forecast.model_validate({"city": "Oslo", "days": "rate limit"}))
    add(
        "pydantic/echo",
        f"{version('pydantic')}: the rejected value quotes a transient word",
        str(exc),
        F,
        note="input_value echoes the call; it must not decide the kind",
    )
    exc = raised(lambda: Forecast.model_validate({"city": 7, "days": "x", "extra": 1}))
    add(
        "pydantic/two",
        f"{version('pydantic')}: two errors, flagged",
        str(exc),
        F,
        "is_error",
        is_error=True,
    )

    schema = {
        "type": "object",
        "properties": {
            "city": {
                "type": "string",
                "description": "City; the service may be temporarily "
                "unavailable at night, which is not an argument error",
            },
            "unit": {"enum": ["metric", "imperial"]},
        },
        "required": ["city"],
        "additionalProperties": False,
    }
    for case_id, instance in [
        ("required", {"unit": "metric"}),
        ("type", {"city": 42}),
        ("enum", {"city": "Oslo", "unit": "kelvin"}),
        ("additional", {"city": "Oslo", "when": "Permission denied"}),
    ]:
        exc = raised(lambda instance=instance: jsonschema.validate(instance, schema))
        add(
            f"jsonschema/{case_id}",
            f"{version('jsonschema')}: ValidationError, {case_id}",
            str(exc),
            F,
            note="the schema dump and the instance are echoes, not the error",
        )


# -- tracebacks --------------------------------------------------------------------


def open_ledger(path: str) -> None:
    raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), path)


def fetch_quote(symbol: str, timeout: float = 5.0) -> None:
    # timeout=5.0 and "rate limit" appear in the frames, never in the exception.
    note = "retry on rate limit"
    raise KeyError(symbol + note[:0])


def bounce_forbidden(depth: int, note: str = "Forbidden: rate limit reached") -> None:
    if depth == 0:
        raise ConnectionResetError(errno.ECONNRESET, os.strerror(errno.ECONNRESET))
    bounce_timed_out(depth - 1, note="Permission denied after the request timed out")


def bounce_timed_out(depth: int, note: str = "timed out") -> None:
    bounce_forbidden(depth, note="Service Unavailable, Too Many Requests, Unauthorized")


def bounce_then_key(depth: int) -> None:
    if depth == 0:
        raise KeyError("quarterly_total")
    bounce_then_key_again(depth - 1, reason="Forbidden: Permission denied, rate limit")


def bounce_then_key_again(depth: int, reason: str) -> None:
    bounce_then_key(depth)


def chained_permission() -> None:
    try:
        {}["ledger"]
    except KeyError:
        open_ledger("/srv/finance/ledger.db")


def caused_by_refusal() -> None:
    try:
        socket.create_connection(("127.0.0.1", CLOSED_PORT_ACTUAL[0]))
    except ConnectionRefusedError as exc:
        raise RuntimeError("quote service lookup failed") from exc


CLOSED_PORT_ACTUAL = [0]


def traceback_of(action: Callable[[], Any]) -> str:
    try:
        action()
    except Exception:
        return traceback.format_exc().rstrip("\n")
    raise AssertionError("did not raise")


def traceback_cases() -> None:
    add(
        "tb/permission",
        "traceback.format_exc: PermissionError",
        traceback_of(lambda: open_ledger("/srv/finance/ledger.db")),
        U,
    )
    add(
        "tb/keyerror-frames-quote-words",
        "traceback.format_exc: KeyError; frames quote 'timeout=5.0' and 'rate limit'",
        traceback_of(lambda: fetch_quote("ACME")),
        A,
        note="words in source frames are code, not the error",
    )
    text = traceback_of(lambda: bounce_forbidden(60))
    assert len(text) > 8192, len(text)
    add(
        "tb/long-final-line-decides",
        f"traceback.format_exc, {len(text)} characters: "
        "ConnectionResetError after frames quoting unrecoverable words",
        text,
        T,
    )
    text = traceback_of(lambda: bounce_then_key(60))
    assert len(text) > 8192, len(text)
    add(
        "tb/long-keyerror",
        f"traceback.format_exc, {len(text)} characters: KeyError after "
        "frames quoting unrecoverable words",
        text,
        A,
    )
    add(
        "tb/chained",
        "traceback.format_exc: KeyError, then PermissionError while handling it",
        traceback_of(chained_permission),
        U,
    )
    CLOSED_PORT_ACTUAL[0] = closed_port()
    add(
        "tb/cause",
        "traceback.format_exc: RuntimeError raised from ConnectionRefusedError",
        traceback_of(caused_by_refusal),
        T,
    )
    add(
        "tb/flagged",
        "traceback.format_exc of a PermissionError, LangChain status",
        traceback_of(lambda: open_ledger("/srv/finance/ledger.db")),
        U,
        "status",
        status="error",
    )
    add(
        "tb/after-prefix",
        "an exit status line followed by a traceback",
        "Error: script failed\n" + traceback_of(lambda: fetch_quote("ACME")),
        A,
    )


# -- frameworks ----------------------------------------------------------------------


def langgraph_cases() -> None:
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode

    failures: dict[str, BaseException] = {}

    @tool
    def forecast(city: str) -> str:
        """Forecast for a city."""
        raise failures[city]

    def run(calls: list[dict[str, Any]], default: bool = False) -> Any:
        graph = StateGraph(MessagesState)
        node = ToolNode([forecast]) if default else ToolNode([forecast], handle_tool_errors=True)
        graph.add_node("tools", node)
        graph.add_edge(START, "tools")
        graph.add_edge("tools", END)
        out = graph.compile().invoke({"messages": [AIMessage("", tool_calls=calls)]})
        return out["messages"][-1]

    origin = f"{version('langgraph')} ToolNode(handle_tool_errors=True)"
    import httpx

    failures["reset"] = ConnectionResetError(errno.ECONNRESET, "Connection reset by peer")
    failures["value"] = ValueError("no forecast for that city")
    failures["timeout"] = TimeoutError("upstream read timed out")
    failures["perm"] = PermissionError(errno.EACCES, "Permission denied", "/srv/cache")
    request = httpx.Request("GET", "https://api.example.test/v1/forecast")
    for code in (429, 404):
        response = httpx.Response(code, request=request)
        failures[str(code)] = raised(response.raise_for_status)
    expected = {"reset": T, "value": A, "timeout": T, "perm": U, "429": T, "404": A}
    for city, kind in expected.items():
        message = run(
            [{"name": "forecast", "args": {"city": city}, "id": "c1", "type": "tool_call"}]
        )
        assert message.status == "error"
        add(
            f"langgraph/{city}",
            f"{origin}: {type(failures[city]).__name__}, status error",
            message.content,
            kind,
            "status",
            status="error",
        )
        add(
            f"langgraph/{city}-text",
            f"{origin}: {type(failures[city]).__name__}, text only",
            message.content,
            kind,
        )
    message = run([{"name": "forecast", "args": {}, "id": "c1", "type": "tool_call"}])
    add(
        "langgraph/invocation",
        f"{origin}: ToolInvocationError for a missing argument",
        message.content,
        F,
        "status",
        status="error",
    )
    message = run(
        [{"name": "forecast", "args": {"town": "rate limit"}, "id": "c1", "type": "tool_call"}],
        default=True,
    )
    add(
        "langgraph/invocation-default",
        f"{version('langgraph')} ToolNode default handler: "
        "ToolInvocationError; the arguments quote a transient word",
        message.content,
        F,
        "status",
        status="error",
        note="the echoed kwargs must not decide the kind",
    )
    message = run([{"name": "forcast", "args": {"city": "x"}, "id": "c1", "type": "tool_call"}])
    add(
        "langgraph/unknown-tool",
        f"{origin}: a tool name that does not exist",
        message.content,
        F,
        "status",
        status="error",
    )


def tool_retry_cases() -> None:
    from langchain.agents.middleware import ToolRetryMiddleware
    from langchain.agents.middleware.types import ToolCallRequest

    origin = f"{version('langchain')} ToolRetryMiddleware final message"
    for case_id, error, kind in [
        ("timeout", TimeoutError("upstream read timed out"), T),
        ("refused", ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused"), T),
        ("value", ValueError("date must be in the future"), A),
        ("perm", PermissionError(errno.EACCES, "Permission denied", "/srv/cache"), U),
    ]:
        middleware = ToolRetryMiddleware(max_retries=1, initial_delay=0.0, jitter=False)
        request = ToolCallRequest(
            tool_call={
                "name": "list_Unauthorized_users",
                "args": {"q": "x"},
                "id": "c1",
                "type": "tool_call",
            },
            tool=None,
            state={},
            runtime=None,
        )

        def handler(_: Any, error: Exception = error) -> Any:
            raise error

        message = middleware.wrap_tool_call(request, handler)
        add(
            f"tool-retry/{case_id}",
            f"{origin}: {type(error).__name__}, status error",
            message.content,
            kind,
            "status",
            status=message.status,
        )
        add(
            f"tool-retry/{case_id}-text",
            f"{origin}: {type(error).__name__}, text only",
            message.content,
            kind,
        )


def mcp_cases() -> None:
    from mcp import Client
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    logging.getLogger("mcp").setLevel(logging.CRITICAL)
    server = MCPServer("weather")
    import httpx

    @server.tool()
    def fetch_status(city: str) -> str:
        """Crashes: the SDK shows only its generic text."""
        raise ConnectionResetError(errno.ECONNRESET, "Connection reset by peer")

    @server.tool()
    def fetch_page(code: int) -> str:
        """Re-raises an HTTP error as a ToolError, whose text reaches the model."""
        request = httpx.Request("GET", "https://api.example.test/v1/page")
        response = httpx.Response(code, request=request)
        try:
            response.raise_for_status()
        except httpx.HTTPStatusError as exc:
            raise ToolError(str(exc)) from exc
        return "ok"

    @server.tool()
    def read_file(path: str) -> str:
        raise ToolError(str(OSError(errno.EACCES, os.strerror(errno.EACCES), path)))

    async def calls() -> list[tuple[str, Any, str]]:
        results = []
        async with Client(server) as client:
            for case_id, name, args, kind in [
                ("crash", "fetch_status", {"city": "Oslo"}, A),
                ("http-429", "fetch_page", {"code": 429}, T),
                ("http-503", "fetch_page", {"code": 503}, T),
                ("http-404", "fetch_page", {"code": 404}, A),
                ("permission", "read_file", {"path": "/root/.ssh/id_rsa"}, U),
                ("arguments", "fetch_page", {"code": "many"}, F),
                ("missing-argument", "read_file", {}, F),
                ("unknown-tool", "fetch_weather", {"city": "Oslo"}, F),
            ]:
                result = await client.call_tool(name, args)
                assert result.is_error, result
                results.append((case_id, result, kind))
        return results

    origin = f"{version('mcp')} in-memory MCPServer via mcp.Client"
    for case_id, result, kind in asyncio.run(calls()):
        text = result.content[0].text
        add(
            f"mcp/{case_id}",
            f"{origin}: the result's text, is_error",
            text,
            kind,
            "is_error",
            is_error=True,
        )
        add(f"mcp/{case_id}-text", f"{origin}: the result's text alone", text, kind)
        payload = result.model_dump_json(by_alias=True, exclude_none=True)
        add(f"mcp/{case_id}-json", f"{origin}: CallToolResult JSON", payload, kind, "mcp-iserror")


def agents_sdk_cases() -> None:
    import agents.tool

    origin = version("openai-agents")
    add(
        "agents/default-failure",
        f"{origin}: default_tool_error_function",
        agents.tool.default_tool_error_function(None, ValueError("x")),
        A,
        note="the default text hides the error: nothing to classify",
    )
    add(
        "agents/tool-timeout",
        f"{origin}: default_tool_timeout_error_message",
        agents.tool.default_tool_timeout_error_message(tool_name="run_report", timeout_seconds=30),
        A,
        note="the tool's own timeout: a repeat may time out again",
    )


# -- coding agents (recorded texts, Appendix A) --------------------------------------


def agent_cases() -> None:
    pytest_out = _pytest_output()
    add(
        "qwen/notfound",
        "Qwen Code read_file, recorded form (rule 4)",
        "File not found: /home/dev/app/src/config.ts",
        A,
        "qwen-notfound",
        client=QWEN,
    )
    add(
        "qwen/exit",
        "Qwen Code run_shell_command, recorded form with real pytest output (rule 5)",
        "Command: python -m pytest -q\nDirectory: (root)\nOutput: "
        + pytest_out
        + "\nError: (none)\nExit Code: 1\nSignal: (none)\nBackground PIDs: (none)\n"
        "Process Group PGID: 4242",
        A,
        "qwen-exit",
        client=QWEN,
        note="a test's TimeoutError is the script's, not the call's: common words only",
    )
    add(
        "qwen/error-line",
        "Qwen Code run_shell_command whose Error: line is set (rule 5)",
        "Command: ./deploy.sh\nDirectory: (root)\nOutput: (empty)\nError: spawn /bin/bash "
        "EACCES\nExit Code: (none)\nSignal: (none)\nBackground PIDs: (none)\n"
        "Process Group PGID: (none)",
        U,
        "qwen-exit",
        client=QWEN,
    )
    clean(
        "qwen/exit-zero",
        "Qwen Code run_shell_command that succeeded",
        "Command: ls\nDirectory: (root)\nOutput: README.md\nsrc\nError: (none)\n"
        "Exit Code: 0\nSignal: (none)\nBackground PIDs: (none)\nProcess Group PGID: 4243",
        client=QWEN,
    )
    add(
        "qwen/error",
        "Qwen Code edit, recorded form (rule 6)",
        "Error: Failed to edit, could not find the string to replace.",
        A,
        "qwen-error",
        client=QWEN,
    )
    add(
        "qwen/not-read",
        "Qwen Code write_file before reading (rule 6)",
        "File /home/dev/app/src/main.ts has not been read yet. Read it first before writing to it.",
        F,
        "qwen-error",
        client=QWEN,
    )
    clean(
        "qwen/generic-text",
        "a generic error start text is not a Qwen Code rule",
        "ERROR: no matches found",
        client=QWEN,
    )
    add(
        "codex/exit",
        "Codex shell, recorded form with real pytest output (rule 7)",
        "Exit code: 1\nWall time: 0.8 seconds\nOutput:\n" + pytest_out,
        A,
        "codex-exit",
        client=CODEX,
    )
    add(
        "codex/process-exited",
        "Codex unified exec, recorded form (rule 7)",
        "Process exited with code 127\nOutput:\nbash: line 1: pnpm: command not found",
        A,
        "codex-exit",
        client=CODEX,
    )
    clean(
        "codex/exit-zero",
        "Codex shell that succeeded",
        "Exit code: 0\nWall time: 0.1 seconds\nOutput:\nTypeError: in the middle of output",
        client=CODEX,
    )
    add(
        "codex/timeout",
        "Codex shell timeout (rule 8)",
        "command timed out after 10000 milliseconds\nOutput:\nconnection refused",
        A,
        "codex-timeout",
        client=CODEX,
    )
    add(
        "codex/patch",
        "Codex apply_patch (rule 9)",
        "apply_patch verification failed: Failed to find expected lines in src/app.py",
        F,
        "codex-patch",
        client=CODEX,
    )
    clean(
        "codex/generic-text",
        "a generic error start text is not a Codex rule",
        "Error: the linter printed this",
        client=CODEX,
    )
    add(
        "kilo/notfound",
        "Kilo Code read_file (rule 10)",
        "File not found: src/index.ts",
        A,
        "kilo-notfound",
        client=KILO,
    )
    add(
        "kilo/fs",
        "Kilo Code file system error (rule 11)",
        "Unknown: FileSystem.writeFile failed: EACCES: permission denied, open '/etc/hosts'",
        U,
        "kilo-fs",
        client=KILO,
    )
    add(
        "kilo/usage",
        "Kilo Code edit usage error (rule 12)",
        "oldString must not be empty",
        F,
        "kilo-usage",
        client=KILO,
    )
    add(
        "opencode/exit",
        "OpenCode bash, recorded form (rule 13)",
        "npm ERR! code ECONNRESET\nnpm ERR! network aborted\n\nExited with code 1",
        T,
        "opencode-exit",
        client=OPENCODE,
    )
    clean(
        "opencode/exit-zero",
        "OpenCode bash that succeeded",
        "added 3 packages\n\nExited with code 0",
        client=OPENCODE,
    )
    clean(
        "opencode/leading-space",
        "agent rules match the raw text: no white space skipped",
        "  File not found: x",
        client=KILO,
    )


def _pytest_output() -> str:
    with tempfile.TemporaryDirectory() as folder:
        test = Path(folder, "test_client.py")
        test.write_text(
            "def fetch():\n    raise TimeoutError('upstream timed out')\n\n"
            "def test_fetch():\n    fetch()\n"
        )
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "--no-header",
                "-o",
                "addopts=",
                str(test),
            ],
            capture_output=True,
            text=True,
            cwd=folder,
            check=False,
        )
        out = done.stdout.replace(folder + os.sep, "").replace(folder, ".").rstrip("\n")
        return re.sub(r" in \d+\.\d+s", " in 0.01s", out)


# -- explicit flags for every client ---------------------------------------------------


def flag_cases() -> None:
    add(
        "flag/openai/is-error",
        "OpenAI-style tool message with is_error",
        "Weather service: Unauthorized",
        U,
        "is_error",
        is_error=True,
    )
    add(
        "flag/openai/is-error-multiline",
        "is_error on a command's multi-line output",
        "Exit code 1\nFAILED tests/test_net.py::test_fetch - TimeoutError: timed out\n"
        "1 failed in 0.31s",
        A,
        "is_error",
        is_error=True,
        note="a flagged command output gets the common words only",
    )
    add(
        "flag/openai/is-error-common",
        "is_error on multi-line output with a common word",
        "Exit code 1\nnpm ERR! code ECONNRESET\nnpm ERR! network socket disconnected",
        T,
        "is_error",
        is_error=True,
    )
    add(
        "flag/langchain/status",
        "LangChain ToolMessage status error",
        "Rate limit exceeded, retry in 20 seconds",
        T,
        "status",
        status="error",
    )
    add(
        "flag/anthropic/is-error",
        "Anthropic tool_result is_error with text blocks",
        [{"type": "text", "text": "Permission denied: /etc/shadow"}],
        U,
        "is_error",
        is_error=True,
    )
    add(
        "flag/anthropic/image-only",
        "Anthropic tool_result is_error with only an image",
        [
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
            }
        ],
        A,
        "is_error",
        is_error=True,
    )
    add("flag/openai/empty", "is_error with an empty text", "", A, "is_error", is_error=True)
    add(
        "flag/mcp/whitespace",
        "MCP CallToolResult JSON after white space",
        '  {"content":[{"type":"text","text":"Service Unavailable"}],"isError":true}',
        T,
        "mcp-iserror",
    )
    clean(
        "flag/mcp/false",
        "MCP CallToolResult JSON with isError false",
        '{"content":[{"type":"text","text":"Error: in the content"}],"isError":false}',
    )
    add(
        "flag/cline",
        "Cline search result with success false (rule 2)",
        '{"query":"rate limit config","success":false,"error":"Invalid parameters: '
        'path must be absolute"}',
        F,
        "cline",
        note="the query echoes the model's input",
    )
    clean(
        "flag/cline-success",
        "Cline search result with success true",
        '{"query":"timeout","success":true,"results":["src/net.ts:12"]}',
    )
    add(
        "flag/opencode",
        "OpenCode tool.execution error object (rule 3)",
        '{"error":{"type":"tool.execution","message":"ENOENT: no such file, open \'/x/y.ts\'"}}',
        A,
        "opencode",
    )
    add(
        "flag/opencode-busy",
        "OpenCode tool.execution error with a transient word",
        '{"error":{"type":"tool.execution","message":"Service Unavailable"}}',
        T,
        "opencode",
    )
    add(
        "flag/agent-is-error",
        "is_error for a coding agent: common words only",
        "Error: Unauthorized",
        A,
        "is_error",
        is_error=True,
        client=CODEX,
    )


# -- generic texts and deliberate ambiguity ----------------------------------------------


def generic_cases() -> None:
    add(
        "generic/error-colon",
        "LangChain's Error: prefix",
        "Error: Invalid arguments: 'date' must be ISO 8601",
        F,
    )
    add(
        "generic/leading-space",
        "generic start texts ignore leading white space",
        "\n\n   Error: ETIMEDOUT connecting to db:5432",
        T,
    )
    add(
        "generic/mcp-ts",
        "MCP TypeScript SDK McpError text",
        "MCP error -32602: Invalid params: missing 'city'",
        F,
    )
    add(
        "generic/jsonrpc",
        "a JSON-RPC 2.0 error response",
        '{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"Method not found"}}',
        F,
    )
    add(
        "generic/json-error",
        "an API error body",
        '{"error": {"code": 503, "message": "upstream overloaded"}}',
        T,
    )
    add(
        "generic/json-error-string",
        "an API error body with a string",
        '{"error": "Invalid API key provided"}',
        U,
    )
    add(
        "generic/not-available",
        "a text used for temporary and permanent conditions",
        "Error: The forecast is not available for this region",
        A,
    )
    add(
        "generic/command-timeout",
        "a command's own timeout",
        "Error: Command timed out after 120 seconds",
        A,
    )
    add(
        "generic/command-timeout-words",
        "a command's own timeout with a transient word",
        "Error: command timeout (exceeded 30s) while waiting: connection refused",
        A,
    )
    add(
        "generic/execution-timeout",
        "an execution timeout",
        "Error: Execution timed out; the script may loop",
        A,
    )
    add("generic/http-text", "an HTTP status line", "HTTP 503 Service Unavailable", T)
    add(
        "generic/retry-hint",
        "a retry hint without other words",
        "Error: quota window full. Retry after 30 seconds.",
        T,
    )
    add(
        "generic/quota",
        "a 429 for an exhausted quota",
        "Error code: 429 - You exceeded your "
        "current quota, please check your plan and billing details.",
        U,
        note="retrying will not refill a quota",
    )
    add(
        "generic/403-rate-limit",
        "a 403 that reports a rate limit",
        "Error code: 403 - API rate limit exceeded for 10.0.0.7.",
        T,
        note="the text's words outrank the status code",
    )
    add(
        "generic/bare-exception-name",
        "a traceback line with no message",
        "asyncio.exceptions.CancelledError",
        A,
    )
    add("generic/bare-error-text", "bare LangChain error text", "Error: ", A)


def clean_cases() -> None:
    source = Path(__file__).read_text().split("\n# -- loopback", 1)[0]
    clean("clean/python-source", "this script's own source head", source)
    clean(
        "clean/python-raise",
        "a Python source file that raises",
        "def parse(value):\n    if not value:\n        raise ValueError('empty')\n"
        "    return int(value)\n",
    )
    clean(
        "clean/js-settimeout",
        "a JavaScript file starting with setTimeout",
        "setTimeout(() => retry(), 500);\nexport const TimeoutError = class extends Error {};\n",
    )
    clean(
        "clean/yaml-timeout",
        "a YAML config whose first key is a timeout",
        "connect_timeout: 5\nread_timeout: 30\non_error: retry\n",
    )
    clean(
        "clean/go-source",
        "a Go source file",
        'package main\n\nimport "errors"\n\nvar ErrTimeout = errors.New("timed out")\n',
    )
    clean(
        "clean/ls",
        "ls -l output",
        "total 8\n-rw-r--r-- 1 dev dev 120 Mar  3 10:12 "
        "errors.log\ndrwxr-xr-x 2 dev dev 4096 Mar  3 10:12 src\n",
    )
    clean(
        "clean/git-status",
        "git status output",
        "On branch main\nChanges not staged for "
        "commit:\n\tmodified:   src/retry.py\n\nno changes added to commit",
    )
    clean(
        "clean/pytest-pass", "pytest output that passed", "...........  [100%]\n11 passed in 0.42s"
    )
    clean(
        "clean/pytest-fail",
        "real pytest output quoting a TimeoutError (the tool worked)",
        _pytest_output(),
    )
    clean(
        "clean/log-middle",
        "a log with ERROR lines in the middle",
        "2024-05-01 10:00:00 INFO start\n2024-05-01 10:00:01 ERROR: Permission denied for "
        "user bob\n2024-05-01 10:00:02 INFO retrying\n2024-05-01 10:00:03 INFO done\n",
    )
    clean(
        "clean/log-traceback-middle",
        "a log quoting a traceback after its first line",
        "worker started\n" + traceback_of(lambda: open_ledger("/srv/x")),
    )
    clean("clean/json-null", 'JSON with "error": null', '{"error": null, "data": {"temp": 21}}')
    clean("clean/json-false", 'JSON with "error": false', '{"error": false, "rows": 3}')
    clean("clean/json-empty", 'JSON with "error": ""', '{"error": "", "status": "ok"}')
    clean(
        "clean/json-empty-spaced",
        'JSON with "error" : "" and spaces',
        '{ "error" : "" , "result": "Forbidden is a word here"}',
    )
    clean(
        "clean/json-later-error",
        "JSON whose error field is not first",
        '{"status": "ok", "error": "none of the 3 retries were needed"}',
    )
    clean(
        "clean/json-errors-list",
        "JSON with an empty errors list",
        '{"errors": [], "warnings": ["rate limit close"]}',
    )
    clean(
        "clean/json-array",
        "a JSON array of records with error fields",
        '[{"id": 1, "error": "timed out"}, {"id": 2, "error": null}]',
    )
    clean(
        "clean/json-status-200",
        "an HTTP response body with status 200",
        '{"status": 200, "message": "Too Many Requests is the name of our band"}',
    )
    clean(
        "clean/csv",
        "a CSV export",
        "code,reason\n429,Too Many Requests\n503,Service Unavailable\n404,Not Found\n",
    )
    clean(
        "clean/markdown",
        "a markdown doc about rate limits",
        "# Rate limits\n\nWhen you hit a rate limit, the API answers 429 Too Many Requests."
        "\nError: this line is part of the documentation.\n",
    )
    clean(
        "clean/html",
        "an HTML page",
        "<!DOCTYPE html>\n<html><head><title>403 Forbidden"
        "</title></head><body>Service Unavailable</body></html>",
    )
    clean(
        "clean/http-200",
        "an HTTP/1.1 200 status line and headers",
        "HTTP/1.1 200 OK\nContent-Type: application/json\n\n{}",
    )
    clean(
        "clean/sql-rows",
        "a SQL result table",
        " id | status\n----+-----------\n  1 | timed out\n  2 | ok\n(2 rows)",
    )
    clean(
        "clean/diff",
        "a unified diff",
        "--- a/net.py\n+++ b/net.py\n@@ -1 +1 @@\n-timeout = 5\n+timeout = 10\n",
    )
    clean(
        "clean/manpage",
        "a man page's ERRORS section",
        "ERRORS\n       EACCES Permission denied.\n       EROFS  Read-only file system.\n",
    )
    clean(
        "clean/errors-word",
        "text starting with 'Errors' (not 'Error:')",
        "Errors are reported in the response body; see section 4.",
    )
    clean(
        "clean/error-handling",
        "text starting with 'Error handling'",
        "Error handling: retries use exponential backoff.",
    )
    clean(
        "clean/quoted-traceback",
        "an answer quoting a traceback",
        "Here is the traceback you asked for:\nTraceback (most recent call last):\n  File "
        '"x.py", line 1, in <module>\nPermissionError: [Errno 13] Permission denied',
    )
    clean("clean/number", "a bare number", "429")
    clean("clean/ok", "a bare OK", "OK")
    clean("clean/success", "a write confirmation", "Successfully wrote 120 bytes to out.txt")
    clean("clean/empty", "an empty result", "")
    clean("clean/whitespace", "a result of white space", "  \n\t ")
    clean(
        "clean/base64",
        "a base64 blob",
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADU"
        "lEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    )
    clean(
        "clean/text-parts",
        "OpenAI text parts",
        [
            {"type": "text", "text": "Forecast for Oslo: 12 C"},
            {"type": "text", "text": "Wind: 3 m/s"},
        ],
    )
    clean(
        "clean/image-part",
        "an image-only content list without a flag",
        [{"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBOR"}}],
    )
    clean(
        "clean/is-error-false",
        "is_error false on a normal result",
        "12 C, light rain",
        is_error=False,
    )
    clean("clean/status-success", "LangChain status success", "Done.", status="success")
    clean(
        "clean/repl",
        "a Python REPL session quoting an exception",
        ">>> int('x')\nValueError: invalid literal for int() with base 10: 'x'",
    )
    clean("clean/dict-repr", "a Python dict repr with an error key", "{'error': None, 'items': 3}")
    clean(
        "clean/error-in-word",
        "a word that merely starts with Error",
        "ErrorBoundary renders the fallback UI.",
    )
    clean(
        "clean/ascii-table",
        "a table of exception names",
        "| name | kind |\n| TimeoutError: | transient |",
    )
    clean(
        "clean/shell-exit",
        "an unflagged shell result with an exit status",
        "Exit code 1\nnpm ERR! code ECONNREFUSED",
        note="without a flag or an agent rule, a command's output is not judged",
    )
    clean(
        "clean/bare-message", "a bare exception message without a flag", "no forecast for that city"
    )
    clean(
        "clean/unix-timeout-cmd",
        "output of a command called timeout",
        "timeout: sending signal TERM to command 'sleep'",
    )


def main() -> None:
    logging.disable(logging.CRITICAL)
    site = str(Path(json.__file__).parents[1])
    import httpx

    packages = str(Path(httpx.__file__).parents[1])
    _NORMAL.extend(
        [
            (packages, "/venv/lib/python3.11/site-packages"),
            (str(ROOT), "/repo"),
            (site, "/usr/lib/python3.11"),
        ]
    )
    with loopback() as port:
        http_cases(port)
        connection_cases(port)
    python_cases()
    sqlite_cases()
    validator_cases()
    traceback_cases()
    langgraph_cases()
    tool_retry_cases()
    mcp_cases()
    agents_sdk_cases()
    agent_cases()
    flag_cases()
    generic_cases()
    clean_cases()
    ids = [case.id for case in CASES]
    duplicates = {i for i in ids if ids.count(i) > 1}
    assert not duplicates, duplicates
    with OUT.open("w", encoding="utf-8") as out:
        for case in CASES:
            out.write(json.dumps(case.line(), ensure_ascii=False) + "\n")
    counts: dict[str, int] = {}
    for case in CASES:
        counts[case.expect] = counts.get(case.expect, 0) + 1
    print(f"{len(CASES)} cases -> {OUT.relative_to(ROOT)}: {counts}")


if __name__ == "__main__":
    main()
