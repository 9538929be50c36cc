"""A list sink for the outcome recorder, for tests that pin what an adapter reports.

``with recording() as rows:`` installs a recorder (``record_outcomes``) whose
rows land in a list, with a fixed clock, and turns recording off afterwards;
:func:`brief` keeps the fields a test states (tool, content, arguments,
outcome, run) so that each row is compared whole.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from toolmend.integrations import Outcomes, record_outcomes


class Rows:
    """A sink that keeps every row it is given, in order."""

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    def add(self, row: Mapping[str, Any]) -> None:
        self.rows.append(dict(row))

    def brief(self) -> list[tuple[Any, ...]]:
        """Each row as ``(tool, content, arguments, outcome, run)``."""
        return [
            (r["tool"], r["content"], r["arguments"], r["outcome"], r["run"]) for r in self.rows
        ]


@contextmanager
def recording() -> Iterator[Rows]:
    """Record outcomes into a fresh :class:`Rows` for the block; off again after it."""
    rows = Rows()
    record_outcomes(Outcomes(rows, clock=lambda: 0.0))
    try:
        yield rows
    finally:
        record_outcomes(None)
