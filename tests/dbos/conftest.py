"""DBOS adapter tests: the real DBOS runtime on SQLite and on a throwaway Postgres."""

from __future__ import annotations

import pytest

pytest.importorskip("dbos", reason="dbos is not installed (requirements/dev.txt pins it)")

postgres = __import__("tools.pg_cluster", fromlist=["pg_fixture"]).pg_fixture()
