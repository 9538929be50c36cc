"""Fixtures for the retry and exception tests (the server lives in core_support)."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from core_support import Loopback

from toolmend.integrations import reset_budgets


@pytest.fixture(scope="session")
def _server() -> Iterator[Loopback]:
    server = Loopback()
    server.thread.start()
    yield server
    server.server.shutdown()
    server.server.server_close()


@pytest.fixture
def loopback(_server: Loopback) -> Loopback:
    with _server.lock:
        _server.scripts.clear()
        _server.seen.clear()
    return _server


@pytest.fixture
def closed_port() -> str:
    """A loopback URL on which nothing listens: connecting is refused."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@pytest.fixture(autouse=True)
def _fresh_budgets() -> Iterator[None]:
    reset_budgets()
    yield
    reset_budgets()


postgres = __import__("tools.pg_cluster", fromlist=["pg_fixture"]).pg_fixture()
