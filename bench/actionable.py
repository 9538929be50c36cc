"""The actionability filter on a labelled set of real error sentences.

Usage: ./dev python bench/actionable.py [--split train|dev|test|all] [--rows]

``corpus/actionable/sentences.jsonl`` holds sentences of the real-world corpus
(``corpus/realworld``), each with the row and the source it comes from, marked
``developer-facing step`` (it asks for a step an agent with only its tools cannot
take: a terminal command, a config or environment change, a web page, contacting
a person, opening an issue, a plan or billing change) or ``keep``.  A sentence
that carries the cause (an exception type, a status, a code) is ``keep`` even
when it also names a step: the filter must never remove the cause.

The filter judges each sentence alone (:func:`toolmend.deliver._actionable.is_developer_step`);
in a note it also never omits a text's first sentence, which this benchmark does
not credit, so a step in first position counts as missed.  Printed: keep
sentences omitted (target at most 1%) and developer-facing steps caught (target
at least 80%), per split and overall.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from toolmend.deliver._actionable import is_developer_step

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "corpus" / "actionable" / "sentences.jsonl"
BLIND = ROOT / "corpus" / "actionable" / "blind.jsonl"
STEP = "developer-facing step"


def load(path: Path = DATA) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def score(rows: list[dict[str, Any]]) -> tuple[int, int, int, int]:
    """(keep omitted, keep total, steps caught, steps total)."""
    keep = [r for r in rows if r["label"] != STEP]
    steps = [r for r in rows if r["label"] == STEP]
    omitted = sum(1 for r in keep if is_developer_step(r["text"]))
    caught = sum(1 for r in steps if is_developer_step(r["text"]))
    return omitted, len(keep), caught, len(steps)


def omit_expected(row: dict[str, Any]) -> bool:
    """Whether a blind sentence should be omitted: a developer step that carries no cause."""
    return row["label"] == "developer" and not row["cause"]


def score_blind(rows: list[dict[str, Any]]) -> tuple[int, int, int, int, int]:
    """(sentences, judged right, developer steps shown, model steps hidden, causes removed)."""
    right = shown = hidden = removed = 0
    for r in rows:
        omitted = is_developer_step(r["text"])
        right += omitted == omit_expected(r)
        shown += omit_expected(r) and not omitted
        hidden += r["label"] == "model" and omitted
        removed += r["label"] == "developer" and r["cause"] and omitted
    return len(rows), right, shown, hidden, removed


def print_blind(rows: list[dict[str, Any]]) -> None:
    """The table of the blind sentences, per half and overall."""
    print(f"\n{len(rows)} step sentences from the blind batches ({BLIND.relative_to(ROOT)})")
    print("half      sentences  right         developer shown   model hidden     cause removed")
    for name in ("widen", "held-out", "all"):
        part = rows if name == "all" else [r for r in rows if r["split"] == name]
        total, right, shown, hidden, removed = score_blind(part)
        developer = sum(1 for r in part if omit_expected(r))
        model = sum(1 for r in part if r["label"] == "model")
        causes = len(part) - developer - model
        print(
            f"{name:<9} {total:9}  {right:3} {_pct(right, total)}   {shown:3}/{developer:<3} "
            f"{_pct(shown, developer)}   {hidden:3}/{model:<3} {_pct(hidden, model)}   "
            f"{removed:3}/{causes}"
        )


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:5.1f}%" if whole else "    -"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="all", choices=["train", "dev", "test", "all"])
    parser.add_argument("--rows", action="store_true", help="list every disagreement")
    args = parser.parse_args(argv)
    rows = load()
    print(f"{len(rows)} labelled sentences from {DATA.relative_to(ROOT)}")
    print("split   keep  omitted          steps  caught")
    for name in ("train", "dev", "test", "all"):
        part = rows if name == "all" else [r for r in rows if r["split"] == name]
        omitted, keep, caught, steps = score(part)
        print(
            f"{name:<6} {keep:5}  {omitted:3} {_pct(omitted, keep)}   "
            f"{steps:5}  {caught:3} {_pct(caught, steps)}"
        )
    chosen = rows if args.split == "all" else [r for r in rows if r["split"] == args.split]
    omitted, keep, caught, steps = score(chosen)
    ok = omitted <= 0.01 * keep and caught >= 0.8 * steps
    print(
        f"\n{args.split}: keep sentences omitted {_pct(omitted, keep).strip()} (target <= 1%), "
        f"developer-facing steps caught {_pct(caught, steps).strip()} (target >= 80%): "
        f"{'met' if ok else 'NOT met'}"
    )
    blind = load(BLIND)
    print_blind(blind)
    if args.rows:
        for r in chosen:
            predicted = is_developer_step(r["text"])
            if predicted != (r["label"] == STEP):
                tag = "omitted keep" if predicted else "missed step "
                print(f"{tag}  {r['id']}: {r['text'][:140]}")
        for r in blind:
            omitted = is_developer_step(r["text"])
            if r["split"] == "widen" and omitted != omit_expected(r):
                tag = "hidden      " if omitted else "shown       "
                print(f"{tag}  {r['id']}: {r['text'][:140]}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
