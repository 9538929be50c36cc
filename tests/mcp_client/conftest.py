"""Connect to the demo server in memory or over stdio: every test runs both ways."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_demo_server import build_server

import toolmend
from toolmend.retry import SleepLog, reset_budgets

SERVER = Path(__file__).with_name("mcp_demo_server.py")

Connect = Callable[..., Client]


@pytest.fixture(params=["memory", "stdio"])
def connect(request: pytest.FixtureRequest) -> Connect:
    """A factory of unentered clients: ``async with connect() as client``."""

    def factory(**kwargs: Any) -> Client:
        if request.param == "memory":
            return Client(build_server(), **kwargs)
        params = StdioServerParameters(command=sys.executable, args=[str(SERVER)])
        return Client(params, **kwargs)

    return factory


@pytest.fixture(autouse=True)
def sleeps() -> Iterator[SleepLog]:
    """No real sleeping, and fresh per-tool retry budgets, in every test."""
    reset_budgets()
    with toolmend.testing(seed=7) as log:
        yield log
    reset_budgets()
