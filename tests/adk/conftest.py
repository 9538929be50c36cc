"""ADK adapter tests: virtual time, fresh retry budgets, and no connection past loopback.

ADK ships telemetry and Google clients; a test run must not reach beyond this
machine, so every socket connection to a non-loopback address fails here and is
recorded (``offline`` lists them; tests/adk/test_adk_offline.py asserts it stays empty).
"""

from __future__ import annotations

import ipaddress
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import toolmend
from toolmend.integrations import SleepLog, reset_budgets

sys.path.insert(0, str(Path(__file__).parent))

REFUSED: list[Any] = []
"""Every address a test tried to reach beyond loopback."""
_connect = socket.socket.connect
_connect_ex = socket.socket.connect_ex


def _loopback(address: Any) -> bool:
    if not isinstance(address, tuple):  # a Unix socket path
        return True
    host = str(address[0])
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _guarded(connect: Any) -> Any:
    def guarded(self: socket.socket, address: Any) -> Any:
        if not _loopback(address):
            REFUSED.append(address)
            raise OSError(f"tests/adk: no network beyond loopback ({address!r})")
        return connect(self, address)

    return guarded


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Connections beyond loopback fail; the list holds what was tried."""
    monkeypatch.setattr(socket.socket, "connect", _guarded(_connect))
    monkeypatch.setattr(socket.socket, "connect_ex", _guarded(_connect_ex))
    return REFUSED


@pytest.fixture(autouse=True)
def sleeps() -> Iterator[SleepLog]:
    """Retry waits are recorded, not slept; budgets start full for each test."""
    reset_budgets()
    with toolmend.testing(seed=7) as log:
        yield log
    reset_budgets()
