"""Every LangChain adapter test runs with virtual time and fresh retry budgets."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import toolmend
from toolmend.integrations import SleepLog, reset_budgets

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(autouse=True)
def sleeps() -> Iterator[SleepLog]:
    """Retry waits are recorded, not slept; budgets start full for each test."""
    reset_budgets()
    with toolmend.testing(seed=7) as log:
        yield log
    reset_budgets()


postgres = __import__("tools.pg_cluster", fromlist=["pg_fixture"]).pg_fixture()
