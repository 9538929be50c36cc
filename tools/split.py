"""Assign every group of the real-world corpus to train, dev or test, deterministically.

Splits are by group (one server, SDK, CLI or report site), never by row, so the
test split measures generalisation to origins the rules were not tuned on.
Within each family the groups are ordered by a hash of their name and dealt out
in turns of four: train, train, dev, test.  A family with fewer than four groups
has no test group.  A group that appears in several families keeps the split it
got first, so no origin straddles two splits.  A row whose ``split`` field is
set pins its group to that split; pinned groups are left out of the dealing, so
adding them does not move any other group.

Run as a script to print the groups of each split.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[1] / "corpus" / "realworld"
LABELS = ("transient", "fixable", "unrecoverable", "ambiguous", "clean")
_TURN = ("train", "train", "dev", "test")


def rows() -> Iterator[dict[str, Any]]:
    """Every row of every ``*.jsonl`` file here, in file and line order."""
    for _, row in _files():
        yield row


def _files() -> Iterator[tuple[str, dict[str, Any]]]:
    for path in sorted(HERE.glob("*.jsonl")):
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    yield path.stem, json.loads(line)


def origins() -> Iterator[tuple[str, str, str | None]]:
    """(row id, the file's stem, the split it is pinned to or None) for every row."""
    for stem, row in _files():
        yield row["id"], stem, row.get("split") or None


def _key(name: str) -> str:
    return hashlib.sha256(name.encode("utf-8")).hexdigest()


def assignment(all_rows: list[dict[str, Any]]) -> dict[tuple[str, str], str]:
    """(family, group) -> split."""
    pinned: dict[str, str] = {}
    for row in all_rows:
        if row.get("split") and pinned.setdefault(row["group"], row["split"]) != row["split"]:
            raise ValueError(f"group {row['group']!r} is pinned to two splits")
    groups: dict[str, set[str]] = {}
    out: dict[tuple[str, str], str] = {}
    for row in all_rows:
        if row["group"] in pinned:
            out[row["family"], row["group"]] = pinned[row["group"]]
        else:
            groups.setdefault(row["family"], set()).add(row["group"])
    chosen: dict[str, str] = {}
    for family in sorted(groups):
        ordered = sorted(groups[family], key=_key)
        for i, name in enumerate(ordered):
            turn = _TURN[i % 4] if len(ordered) >= 4 else ("train", "dev")[i % 2]
            out[family, name] = chosen.setdefault(name, turn)
    return out


def split_rows(name: str) -> list[dict[str, Any]]:
    """The rows of one split: ``train``, ``dev`` or ``test``."""
    all_rows = list(rows())
    table = assignment(all_rows)
    return [r for r in all_rows if table[r["family"], r["group"]] == name]


if __name__ == "__main__":
    all_rows = list(rows())
    table = assignment(all_rows)
    for split in ("train", "dev", "test"):
        chosen = sorted({k for k, v in table.items() if v == split})
        count = sum(1 for r in all_rows if table[r["family"], r["group"]] == split)
        print(f"{split}: {count} rows, {len(chosen)} groups")
        for family, group in chosen:
            print(f"  {family}: {group}")
