"""Policies under real conditions (issue: retry and loop-guard policies).

Each test reproduces a case where a policy did the wrong thing; it was written
before the fix and failed on the code before it.
"""

from __future__ import annotations

import socket
from typing import Any

import pytest

import toolmend
from toolmend import CallContext, RetryPolicy, ToolFailure, execute, testing
from toolmend.guidance import VERIFY_FIRST


class _Ledger:
    def __init__(self) -> None:
        self.entries: list[str] = []


@pytest.mark.parametrize(
    "raised",
    [
        ConnectionRefusedError(111, "Connection refused"),
        socket.gaierror(-3, "Temporary failure in name resolution"),
        RuntimeError("notify failed: [Errno 111] Connection refused"),
    ],
    ids=["refused", "gaierror", "wrapped"],
)
def test_a_write_that_committed_before_a_refused_follow_up_is_not_repeated(
    raised: BaseException,
) -> None:
    ledger = _Ledger()

    def place_order(ctx: CallContext) -> Any:
        ledger.entries.append("order")
        raise raised

    with testing():
        result = execute(place_order, tool="place_order", effect="write")
    assert ledger.entries == ["order"]
    assert isinstance(result, ToolFailure)
    assert result.attempts == 1
    assert result.outcome_unknown is True
    assert result.guidance == VERIFY_FIRST


def test_httpx_connect_error_after_a_write_is_not_repeated() -> None:
    httpx = pytest.importorskip("httpx")
    ledger = _Ledger()

    def place_order(ctx: CallContext) -> Any:
        ledger.entries.append("order")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        httpx.post(f"http://127.0.0.1:{port}/notify", timeout=2)

    with testing():
        result = execute(place_order, tool="place_order", effect="write")
    assert ledger.entries == ["order"]
    assert isinstance(result, ToolFailure)
    assert result.attempts == 1


def test_a_one_request_tool_may_opt_in_to_before_dispatch_retries() -> None:
    calls: list[int] = []

    def send(ctx: CallContext) -> Any:
        calls.append(ctx.attempt)
        if ctx.attempt == 1:
            raise ConnectionRefusedError(111, "Connection refused")
        return "sent"

    with testing():
        result = execute(
            send, tool="send", effect="write", policy=RetryPolicy(retry_before_dispatch=True)
        )
    assert (result, calls) == ("sent", [1, 2])
    assert toolmend.RetryPolicy().retry_before_dispatch is False
