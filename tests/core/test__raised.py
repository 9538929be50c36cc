"""classify_exception on real exceptions raised by real client libraries on loopback."""

from __future__ import annotations

import errno
import socket
import sqlite3
import urllib.error
import urllib.request
from datetime import UTC, datetime
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import agents
import aiohttp
import anthropic
import httpx
import openai
import pydantic
import pytest
import requests
from core_support import Loopback, Reply
from mcp.shared.exceptions import MCPError

from toolmend import Kind, classify_exception
from toolmend.classify._raised import (
    mcp_code,
    parse_duration,
    parse_retry_after,
    retry_after_in_text,
)
from toolmend.integrations import ExceptionInfo, classify_text, describe_exception

T, F, U, A = Kind.TRANSIENT, Kind.FIXABLE, Kind.UNRECOVERABLE, Kind.AMBIGUOUS


def raised(fn: Any, *args: Any, **kwargs: Any) -> BaseException:
    try:
        fn(*args, **kwargs)
    except BaseException as exc:
        return exc
    raise AssertionError("nothing raised")


def httpx_error(url: str, **kwargs: Any) -> BaseException:
    def call() -> None:
        httpx.get(url, **kwargs).raise_for_status()

    return raised(call)


def requests_error(url: str, **kwargs: Any) -> BaseException:
    def call() -> None:
        requests.get(url, **kwargs).raise_for_status()

    return raised(call)


# -- HTTP statuses and Retry-After ---------------------------------------------------


@pytest.mark.parametrize(
    ("status", "kind"),
    [(503, T), (429, T), (500, T), (502, T), (504, T), (403, U), (401, U), (422, F), (400, F),
     (404, A), (409, A)],
)  # fmt: skip
def test_httpx_status(loopback: Loopback, status: int, kind: Kind) -> None:
    url = loopback.script("/s", Reply(status))
    exc = httpx_error(url)
    assert type(exc) is httpx.HTTPStatusError
    assert classify_exception(exc) == ExceptionInfo(kind, f"HTTP {status}", None, False, status)


def test_httpx_retry_after_seconds(loopback: Loopback) -> None:
    url = loopback.script("/s", Reply(503, {"Retry-After": "5"}))
    assert classify_exception(httpx_error(url)) == ExceptionInfo(T, "HTTP 503", 5.0, False, 503)


def test_httpx_retry_after_http_date(loopback: Loopback) -> None:
    when = datetime.fromtimestamp(datetime.now(UTC).timestamp() + 120, UTC)
    url = loopback.script("/s", Reply(429, {"Retry-After": format_datetime(when, usegmt=True)}))
    info = classify_exception(httpx_error(url))
    assert (info.kind, info.reason, info.status) == (T, "HTTP 429", 429)
    assert info.retry_after is not None
    assert 100 < info.retry_after <= 120


def test_requests_status_and_retry_after(loopback: Loopback) -> None:
    url = loopback.script("/s", Reply(429, {"Retry-After": "7"}))
    exc = requests_error(url)
    assert type(exc) is requests.HTTPError
    assert classify_exception(exc) == ExceptionInfo(T, "HTTP 429", 7.0, False, 429)


def test_requests_forbidden(loopback: Loopback) -> None:
    url = loopback.script("/s", Reply(403))
    assert classify_exception(requests_error(url)) == ExceptionInfo(U, "HTTP 403", None, False, 403)


def test_urllib_status_and_retry_after(loopback: Loopback) -> None:
    url = loopback.script("/s", Reply(503, {"Retry-After": "3"}))
    exc = raised(urllib.request.urlopen, url)
    assert type(exc) is urllib.error.HTTPError
    assert classify_exception(exc) == ExceptionInfo(T, "HTTP 503", 3.0, False, 503)


def test_urllib_unprocessable(loopback: Loopback) -> None:
    url = loopback.script("/s", Reply(422))
    assert classify_exception(raised(urllib.request.urlopen, url)) == ExceptionInfo(
        F, "HTTP 422", None, False, 422
    )


def _openai(url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=url + "/v1", api_key="sk-test", max_retries=0, timeout=5)


def test_openai_rate_limit_with_retry_after_ms(loopback: Loopback) -> None:
    loopback.script(
        "/v1/models",
        Reply(429, {"retry-after-ms": "1500"}, b'{"error": {"message": "Rate limit reached"}}'),
    )
    exc = raised(_openai(loopback.url).models.list)
    assert type(exc) is openai.RateLimitError
    assert classify_exception(exc) == ExceptionInfo(T, "HTTP 429", 1.5, False, 429)


def test_openai_rate_limit_with_retry_after(loopback: Loopback) -> None:
    loopback.script("/v1/models", Reply(429, {"retry-after": "20"}))
    exc = raised(_openai(loopback.url).models.list)
    assert classify_exception(exc) == ExceptionInfo(T, "HTTP 429", 20.0, False, 429)


def test_openai_rate_limit_hint_in_message(loopback: Loopback) -> None:
    body = b'{"error": {"message": "Rate limit reached. Please try again in 6s."}}'
    loopback.script("/v1/models", Reply(429, body=body))
    exc = raised(_openai(loopback.url).models.list)
    assert classify_exception(exc) == ExceptionInfo(T, "HTTP 429", 6.0, False, 429)


@pytest.mark.parametrize(
    ("status", "cls", "kind"),
    [
        (400, openai.BadRequestError, F),
        (401, openai.AuthenticationError, U),
        (403, openai.PermissionDeniedError, U),
        (422, openai.UnprocessableEntityError, F),
        (500, openai.InternalServerError, T),
    ],
)
def test_openai_status_errors(
    loopback: Loopback, status: int, cls: type[BaseException], kind: Kind
) -> None:
    loopback.script("/v1/models", Reply(status))
    exc = raised(_openai(loopback.url).models.list)
    assert type(exc) is cls
    assert classify_exception(exc) == ExceptionInfo(kind, f"HTTP {status}", None, False, status)


def test_openai_connection_refused_is_before_dispatch(closed_port: str) -> None:
    exc = raised(_openai(closed_port).models.list)
    assert type(exc) is openai.APIConnectionError
    assert classify_exception(exc) == ExceptionInfo(T, "httpx.ConnectError", None, True)


def test_openai_timeout(loopback: Loopback) -> None:
    loopback.script("/v1/models", Reply(delay=0.5))
    client = openai.OpenAI(
        base_url=loopback.url + "/v1", api_key="sk-test", max_retries=0, timeout=0.05
    )
    exc = raised(client.models.list)
    assert type(exc) is openai.APITimeoutError
    assert classify_exception(exc) == ExceptionInfo(T, "openai.APITimeoutError", None, False)


def test_anthropic_overloaded(loopback: Loopback) -> None:
    body = b'{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}'
    loopback.script("/v1/messages", Reply(529, {"retry-after": "2"}, body))
    client = anthropic.Anthropic(base_url=loopback.url, api_key="sk-test", max_retries=0)
    exc = raised(
        client.messages.create,
        model="claude-test",
        max_tokens=5,
        messages=[{"role": "user", "content": "hi"}],
    )
    assert isinstance(exc, anthropic.APIStatusError)
    assert classify_exception(exc) == ExceptionInfo(T, "HTTP 529", 2.0, False, 529)


# -- transport failures and dispatch state ----------------------------------------


def test_httpx_connection_refused(closed_port: str) -> None:
    exc = httpx_error(closed_port)
    assert type(exc) is httpx.ConnectError
    assert classify_exception(exc) == ExceptionInfo(T, "httpx.ConnectError", None, True)


def test_httpx_read_timeout_is_after_dispatch(loopback: Loopback) -> None:
    url = loopback.script("/slow", Reply(delay=0.5))
    exc = httpx_error(url, timeout=0.05)
    assert type(exc) is httpx.ReadTimeout
    assert classify_exception(exc) == ExceptionInfo(T, "httpx.TimeoutException", None, False)


def test_httpx_dropped_connection(loopback: Loopback) -> None:
    url = loopback.script("/drop", Reply(drop=True))
    exc = httpx_error(url)
    assert type(exc) is httpx.RemoteProtocolError
    assert classify_exception(exc) == ExceptionInfo(T, "httpx.RemoteProtocolError", None, False)


def test_requests_connection_refused(closed_port: str) -> None:
    exc = requests_error(closed_port)
    assert type(exc) is requests.ConnectionError
    assert classify_exception(exc) == ExceptionInfo(T, "urllib3.NewConnectionError", None, True)


def test_requests_read_timeout(loopback: Loopback) -> None:
    url = loopback.script("/slow", Reply(delay=0.5))
    exc = requests_error(url, timeout=0.05)
    assert type(exc) is requests.ReadTimeout
    assert classify_exception(exc) == ExceptionInfo(T, "requests.Timeout", None, False)


def test_requests_dropped_connection(loopback: Loopback) -> None:
    url = loopback.script("/drop", Reply(drop=True))
    exc = requests_error(url)
    assert type(exc) is requests.ConnectionError
    assert classify_exception(exc) == ExceptionInfo(T, "requests.ConnectionError", None, False)


def test_urllib_connection_refused(closed_port: str) -> None:
    exc = raised(urllib.request.urlopen, closed_port)
    assert type(exc) is urllib.error.URLError
    assert classify_exception(exc) == ExceptionInfo(T, "errno ECONNREFUSED", None, True)


def test_urllib_timeout(loopback: Loopback) -> None:
    url = loopback.script("/slow", Reply(delay=0.5))
    exc = raised(urllib.request.urlopen, url, timeout=0.05)
    assert isinstance(exc, TimeoutError)
    assert classify_exception(exc) == ExceptionInfo(T, "TimeoutError", None, False)


async def test_aiohttp_status(loopback: Loopback) -> None:
    url = loopback.script("/s", Reply(503, {"Retry-After": "4"}))
    async with aiohttp.ClientSession() as session, session.get(url) as response:
        exc = raised(response.raise_for_status)
    assert type(exc) is aiohttp.ClientResponseError
    assert classify_exception(exc) == ExceptionInfo(T, "HTTP 503", 4.0, False, 503)


async def test_aiohttp_connection_refused(closed_port: str) -> None:
    async with aiohttp.ClientSession() as session:
        try:
            async with session.get(closed_port):
                pass
        except aiohttp.ClientConnectorError as exc:
            info = classify_exception(exc)
        else:
            raise AssertionError("connected to a closed port")
    assert info == ExceptionInfo(T, "aiohttp.ClientConnectorError", None, True)


def test_connection_refused_socket(closed_port: str) -> None:
    port = int(closed_port.rsplit(":", 1)[1])
    exc = raised(socket.create_connection, ("127.0.0.1", port))
    assert type(exc) is ConnectionRefusedError
    assert classify_exception(exc) == ExceptionInfo(T, "errno ECONNREFUSED", None, True)


def test_name_resolution_failure_is_before_dispatch() -> None:
    temporary = socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")
    unknown = socket.gaierror(socket.EAI_NONAME, "Name or service not known")
    assert classify_exception(temporary) == ExceptionInfo(T, "name resolution failed", None, True)
    assert classify_exception(unknown) == ExceptionInfo(A, "name resolution failed", None, True)


def test_wrapped_cause_is_read() -> None:
    def fetch() -> None:
        try:
            raise httpx.ConnectError("[Errno 111] Connection refused")
        except httpx.ConnectError as exc:
            raise RuntimeError("fetch failed") from exc

    info = classify_exception(raised(fetch))
    assert info == ExceptionInfo(T, "httpx.ConnectError", None, True)


def test_implicit_context_is_not_read_as_before_dispatch() -> None:
    def tool() -> None:
        try:
            raise ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused")
        except ConnectionRefusedError:
            raise TimeoutError("read timed out") from None

    assert classify_exception(raised(tool)) == ExceptionInfo(T, "TimeoutError", None, False)


# -- OS errors, validation, databases ------------------------------------------------


@pytest.mark.parametrize(
    ("code", "kind", "before"),
    [
        (errno.EACCES, U, False),
        (errno.EPERM, U, False),
        (errno.EROFS, U, False),
        (errno.ENOSPC, U, False),
        (errno.ECONNRESET, T, False),
        (errno.ECONNREFUSED, T, True),
        (errno.ETIMEDOUT, T, False),
        (errno.EAGAIN, T, False),
        (errno.ENOENT, A, False),
    ],
)
def test_errno(code: int, kind: Kind, before: bool) -> None:
    exc = OSError(code, "message")
    name = errno.errorcode[code]
    assert classify_exception(exc) == ExceptionInfo(kind, f"errno {name}", None, before)


def test_real_file_not_found(tmp_path: Path) -> None:
    exc = raised(open, tmp_path / "missing.txt")
    assert type(exc) is FileNotFoundError
    assert classify_exception(exc) == ExceptionInfo(A, "errno ENOENT", None, False)


def test_timeout_error() -> None:
    assert classify_exception(TimeoutError()) == ExceptionInfo(T, "TimeoutError", None, False)


class Order(pydantic.BaseModel):
    quantity: int


def test_pydantic_validation_error() -> None:
    exc = raised(Order.model_validate, {"quantity": "many"})
    assert isinstance(exc, pydantic.ValidationError)
    assert classify_exception(exc) == ExceptionInfo(F, "validation error", None, False)


def _takes_one(city: str) -> str:
    return city


def test_argument_type_errors_are_fixable() -> None:
    unexpected = raised(_takes_one, town="Oslo")
    missing = raised(_takes_one)
    too_many = raised(_takes_one, "a", "b")
    for exc in (unexpected, missing, too_many):
        assert classify_exception(exc) == ExceptionInfo(F, "argument TypeError", None, False)


def test_other_type_errors_fall_back_to_text() -> None:
    exc = raised(lambda: 1 + "a")  # type: ignore[operator]
    assert classify_exception(exc) == ExceptionInfo(A, "no rule matched", None, False)


def test_sqlite_database_is_locked(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("create table t (x)")
    holder.execute("begin exclusive")
    other = sqlite3.connect(path, timeout=0)
    try:
        exc = raised(other.execute, "insert into t values (1)")
    finally:
        other.close()
        holder.close()
    assert type(exc) is sqlite3.OperationalError
    assert classify_exception(exc) == ExceptionInfo(T, "database is locked", None, False)


def _boto_error(code: str, status: int) -> BaseException:
    """botocore is not installed here: a class shaped like ``botocore.exceptions.ClientError``."""
    cls = type("ClientError", (Exception,), {"__module__": "botocore.exceptions"})
    exc = cls(f"An error occurred ({code}) when calling the PutItem operation: details")
    exc.response = {  # type: ignore[attr-defined]
        "Error": {"Code": code, "Message": "details"},
        "ResponseMetadata": {"HTTPStatusCode": status, "HTTPHeaders": {"retry-after": "2"}},
    }
    return exc


@pytest.mark.parametrize(
    ("code", "status", "kind"),
    [
        ("ThrottlingException", 400, T),
        ("ProvisionedThroughputExceededException", 400, T),
        ("AccessDeniedException", 400, U),
        ("ValidationException", 400, F),
    ],
)
def test_botocore_codes(code: str, status: int, kind: Kind) -> None:
    info = classify_exception(_boto_error(code, status))
    assert info == ExceptionInfo(kind, f"error code {code}", 2.0, False, status)


def test_botocore_unknown_code_uses_status() -> None:
    info = classify_exception(_boto_error("SomethingElse", 503))
    assert info == ExceptionInfo(T, "HTTP 503", 2.0, False, 503)


# -- MCP errors by JSON-RPC code, the Agents SDK's argument errors ---------------------


@pytest.mark.parametrize(
    ("code", "kind", "meaning"),
    [
        (-32602, F, "invalid params"),
        (-32601, F, "method not found"),
        (-32600, F, "invalid request"),
        (-32001, T, "request timeout"),
        (408, T, "request timeout"),
        (-32603, A, "internal error"),
    ],
)
def test_mcp_errors_by_code(code: int, kind: Kind, meaning: str) -> None:
    exc = MCPError(code, "the server says no")
    assert classify_exception(exc) == ExceptionInfo(kind, f"MCP error {code} ({meaning})")
    assert mcp_code(exc) == code


def test_mcp_errors_are_duck_typed() -> None:
    class McpError(Exception):
        def __init__(self, code: int) -> None:
            super().__init__("older SDK")
            self.code = code

    wrapped = type("MCPError", (Exception,), {})("wrapped")
    wrapped.error = type("ErrorData", (), {"code": -32601})()  # type: ignore[attr-defined]
    assert classify_exception(McpError(-32602)).reason == "MCP error -32602 (invalid params)"
    assert classify_exception(wrapped).reason == "MCP error -32601 (method not found)"
    assert mcp_code(ValueError("-32602")) is None
    assert mcp_code(McpError(True)) is None  # type: ignore[arg-type]


def test_the_mcp_sdk_1x_read_timeout_reads_as_a_timeout() -> None:
    """SDK 1.x raises ``McpError(ErrorData(code=408, ...))`` when a response is late."""
    text = "Timed out while waiting for response to ClientRequest. Waited 30.0 seconds."
    exc = MCPError(408, text)
    assert classify_exception(exc) == ExceptionInfo(T, "MCP error 408 (request timeout)")
    found = classify_text(f"MCP error 408: {text}")
    assert (found.kind, found.reason, found.basis) == (
        A,
        "Timed out while waiting for response to",
        "timeout",
    )


def test_unknown_mcp_codes_go_by_their_text() -> None:
    assert classify_exception(MCPError(-32000, "Connection closed")) == classify_exception(
        ValueError("Connection closed")
    )
    assert classify_exception(MCPError(-32099, "rate limit exceeded")).kind is T


def test_agents_sdk_argument_errors_are_fixable() -> None:
    exc = agents.ModelBehaviorError("Invalid JSON input for tool read_file")
    assert classify_exception(exc) == ExceptionInfo(F, "invalid tool arguments")


# -- text fallback and robustness ---------------------------------------------------------


def test_text_fallback_with_retry_hint() -> None:
    exc = ValueError("rate limit exceeded, retry in 5s")
    assert classify_exception(exc) == ExceptionInfo(T, "text 'ate limit'", 5.0, False)


def test_text_fallback_unmatched() -> None:
    exc = KeyError("customer_id")
    assert classify_exception(exc) == ExceptionInfo(A, "no rule matched", None, False)


def test_unreadable_exception_never_raises() -> None:
    class Broken(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no")

        @property
        def response(self) -> Any:
            raise RuntimeError("no")

    assert classify_exception(Broken()) == ExceptionInfo(A, "unreadable exception")


def test_describe_exception() -> None:
    assert describe_exception(TimeoutError("read timed out")) == "TimeoutError: read timed out"
    assert describe_exception(TimeoutError()) == "TimeoutError"
    assert describe_exception(httpx.ConnectError("refused")) == "httpx.ConnectError: refused"


def test_describe_drops_httpx_link(loopback: Loopback) -> None:
    url = loopback.script("/s", Reply(503))
    assert describe_exception(httpx_error(url)) == (
        f"httpx.HTTPStatusError: Server error '503 Service Unavailable' for url '{url}'"
    )


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("5", 5.0), ("5s", 5.0), ("1.5 seconds", 1.5), ("250ms", 0.25), ("2 minutes", 120.0),
     ("1m30s", 90.0), ("1 hour", 3600.0), ("soon", None), ("", None), ("5 parsecs", None)],
)  # fmt: skip
def test_parse_duration(text: str, seconds: float | None) -> None:
    assert parse_duration(text) == seconds


def test_parse_retry_after() -> None:
    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC).timestamp()
    assert parse_retry_after("120") == 120.0
    assert parse_retry_after(" 2.5 ") == 2.5
    assert parse_retry_after("-3") == 0.0
    assert parse_retry_after("Thu, 01 Jan 2026 12:01:30 GMT", now=now) == 90.0
    assert parse_retry_after("Thu, 01 Jan 2026 11:00:00 GMT", now=now) == 0.0
    assert parse_retry_after("tomorrow") is None
    assert parse_retry_after(None) is None
    assert parse_retry_after("nan") is None


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("Please retry in 5s.", 5.0), ("Rate limited; try again in 1m30s", 90.0),
     ("retry after 2 minutes", 120.0), ("Retrying in 250ms", 0.25), ("retry later", None),
     ("version 2.0 in 5s", None)],
)  # fmt: skip
def test_retry_after_in_text(text: str, seconds: float | None) -> None:
    assert retry_after_in_text(text) == seconds
