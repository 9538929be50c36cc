"""Connect to the demo server in memory or over stdio: every test runs both ways."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import pytest
from mcp.client.stdio import StdioServerParameters
from mcp_demo_server import build_server
from mcp_sdk import Connect, open_connection

import toolmend
from toolmend.integrations import SleepLog, reset_budgets

SERVER = Path(__file__).with_name("mcp_demo_server.py")


@pytest.fixture(params=["memory", "stdio"])
def connect(request: pytest.FixtureRequest) -> Connect:
    """A factory of unentered connections: ``async with connect() as client``.

    The client is an ``mcp.Client`` on the SDK's 2.x line and a ``ClientSession``
    on 1.x; keyword arguments (``message_handler=``) go to it.
    """

    def factory(**kwargs: Any) -> AbstractAsyncContextManager[Any]:
        if request.param == "memory":
            return open_connection(build_server(), **kwargs)
        params = StdioServerParameters(command=sys.executable, args=[str(SERVER)])
        return open_connection(params, **kwargs)

    return factory


@pytest.fixture(autouse=True)
def sleeps() -> Iterator[SleepLog]:
    """No real sleeping, and fresh per-tool retry budgets, in every test."""
    reset_budgets()
    with toolmend.testing(seed=7) as log:
        yield log
    reset_budgets()
