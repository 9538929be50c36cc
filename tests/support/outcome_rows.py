"""A list sink for the outcome recorder, installed for one test, and the rows' short form."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
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


def raised(test_file: str, tool: str, error: str, marker: str, attempts: int = 1) -> str:
    """The core's cause of what a tool raised on the line of ``test_file`` ending ``# marker``.

    Args:
        test_file: The test module's ``__file__``.
        tool: The tool's name (also the function's).
        error: ``Type: message``.
        marker: The comment that ends the ``raise`` line.
        attempts: The attempts the call took.
    """
    path = Path(test_file)
    lines = path.read_text().splitlines()
    line = next(i for i, text in enumerate(lines, 1) if text.endswith(f"# {marker}"))
    tries = "1 attempt" if attempts == 1 else f"{attempts} attempts"
    return f"Tool {tool!r} failed after {tries} with {error}\nWhere: {path.name}:{line} in {tool}"
