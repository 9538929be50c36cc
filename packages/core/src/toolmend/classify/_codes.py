"""Published code tables: what a code or standard message of a known system means.

Each system's table is a data file beside this module (``codes/<system>.json``)
with the source it was read from, so a table is reviewed against its source and
extended without touching code.  Entries are case-sensitive substrings, like the
word lists: a code counts wherever it stands in the deciding part of an error.
A table marked ``"match": "printed"`` holds bare numbers, which count only where
their system prints them (:mod:`toolmend.classify._printed`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources

from .._types import Kind

__all__ = ["SYSTEMS", "CodeTable", "code_kinds", "system_of", "table_named"]


@dataclass(frozen=True, slots=True)
class CodeTable:
    """One system's codes and the next action each one means."""

    name: str
    system: str
    source: str
    codes: Mapping[str, Kind]
    printed: bool = False
    """Whether the codes count only where the system prints them (see ``_printed``)."""


def _load() -> tuple[CodeTable, ...]:
    tables = []
    folder = resources.files(__package__).joinpath("codes")
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".json"):
            continue
        data = json.loads(entry.read_text(encoding="utf-8"))
        codes = {code: Kind(kind) for code, kind in data["codes"].items()}
        printed = data.get("match", "substring") == "printed"
        tables.append(CodeTable(entry.name[:-5], data["system"], data["source"], codes, printed))
    return tuple(tables)


SYSTEMS: tuple[CodeTable, ...] = _load()
_SYSTEM_OF: dict[str, str] = {}
for _table in SYSTEMS:
    if _table.printed:
        continue
    for _code in _table.codes:
        _SYSTEM_OF.setdefault(_code, _table.name)


def code_kinds() -> dict[str, Kind]:
    """Every code of every substring table; where two share a code, the first table's kind."""
    merged: dict[str, Kind] = {}
    for table in SYSTEMS:
        if table.printed:
            continue
        for code, kind in table.codes.items():
            merged.setdefault(code, kind)
    return merged


def system_of(code: str) -> str | None:
    """The table a code comes from (for the evidence of a verdict)."""
    return _SYSTEM_OF.get(code)


def table_named(name: str) -> CodeTable:
    """The table of one system, by its file name (``redis`` for ``codes/redis.json``).

    Args:
        name: The table's file name without ``.json``.
    """
    return next(table for table in SYSTEMS if table.name == name)
