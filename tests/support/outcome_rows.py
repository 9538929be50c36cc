"""A list sink for the outcome recorder, installed for one test, and the rows' short form."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from toolmend.integrations import Outcomes, record_outcomes

Row = tuple[str, str, Any, str, str | None]
"""``(tool, content, arguments, outcome, run)``: what the adapter tests assert of a row."""


class Rows:
    """A sink that keeps every row it is given, in order.

    Attributes:
        rows: The rows, as the recorder made them.
    """

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    def add(self, row: Mapping[str, Any]) -> None:
        """Keep one row.

        Args:
            row: The settled failure.
        """
        self.rows.append(dict(row))

    def brief(self) -> list[Row]:
        """Each row as ``(tool, content, arguments, outcome, run)``."""
        return [
            (r["tool"], r["content"], r["arguments"], r["outcome"], r["run"]) for r in self.rows
        ]


@contextmanager
def recording() -> Iterator[Rows]:
    """Outcomes recorded into a fresh :class:`Rows` (clock fixed at 0) for the block."""
    sink = Rows()
    record_outcomes(Outcomes(sink, clock=lambda: 0.0))
    try:
        yield sink
    finally:
        record_outcomes(None)
