"""Real-world classification: accuracy per family on the real-world corpus, and cost.

Usage: ./dev python bench/realworld.py [--split test|dev|train|fresh|all] [--rows]

``fresh`` is the part of the test split collected blind, after the rules of the
other splits were written (rows pinned with ``"split": "test"``: ``fresh.jsonl``,
``fresh2.jsonl`` and the training batches' groups whose software those cover).

For each labelled failure the outcome is *correct* (the kind equals the label;
for an ``ambiguous`` label, no guidance), *wrong* (guidance of another kind) or
*silent* (no guidance where the label asks for some).  Clean rows count as false
positives when toolmend judges them failed with guidance (``fp``) or failed at
all (``flagged``).  The cost is the median time of ``toolmend.classify_result`` per
result under 1 KB, over every row of the corpus.

A second table gives the same rows by where they came from: the groups dealt
to their split when the corpus was built, each blind batch (``fresh*.jsonl``, every
row pinned to test and measured once when it arrived), and training batches' groups
pinned to test unread because a test group has the same software.  A third is the
precision dial the rules offer: the failures' outcomes if guidance came only from
some kinds of evidence (the verdict's basis).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

import toolmend  # noqa: E402
from tools import split as corpus  # noqa: E402

GUIDED = {"transient", "fixable", "unrecoverable"}


def judge(row: dict[str, Any]) -> tuple[str, toolmend.Verdict]:
    flag = row.get("is_error")
    verdict = toolmend.classify_result(
        row["content"], is_error=flag if flag is True else None, tool=row.get("tool")
    )
    predicted = verdict.kind.value if verdict.failed and verdict.kind else None
    label = row["label"]
    if label == "clean":
        if predicted in GUIDED:
            return "fp", verdict
        return ("flagged" if verdict.failed else "ok"), verdict
    if label == "ambiguous":
        return ("wrong" if predicted in GUIDED else "correct"), verdict
    if predicted == label:
        return "correct", verdict
    return ("wrong" if predicted in GUIDED else "silent"), verdict


def cost(rows: list[dict[str, Any]]) -> float:
    small = [r for r in rows if len(r["content"]) < 1024]
    times = []
    for row in small:
        flag = row.get("is_error") is True or None
        best = float("inf")
        for _ in range(5):
            start = time.perf_counter_ns()
            for _ in range(20):
                toolmend.classify_result(row["content"], is_error=flag, tool=row.get("tool"))
            best = min(best, (time.perf_counter_ns() - start) / 20)
        times.append(best / 1000)
    return statistics.median(times)


Judged = list[tuple[dict[str, Any], str, toolmend.Verdict]]


def table(judged: Judged, show: bool) -> None:
    per: dict[str, Counter[str]] = defaultdict(Counter)
    for row, outcome, verdict in judged:
        per[row["family"]][outcome] += 1
        per[row["family"]]["clean" if row["label"] == "clean" else "failures"] += 1
        if show and outcome in ("wrong", "silent", "fp", "flagged"):
            got = verdict.kind.value if verdict.failed and verdict.kind else "clean"
            print(f"{outcome:7} {row['label']:13} got {got:13} {row['id']}: "
                  f"{row['content'][:150]!r}")  # fmt: skip
    total: Counter[str] = Counter()
    print("| family | failures | correct | wrong | silent | clean | fp | flagged |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for family in sorted(per):
        c = per[family]
        total.update(c)
        print(_line(family, c))
    print(_line("**all**", total))


def part_of() -> dict[str, str]:
    """Row id -> the part of the corpus it came from."""
    found: dict[str, str] = {}
    for row_id, stem, pinned in corpus.origins():
        if pinned == "test":
            blind = stem.startswith("fresh")
            found[row_id] = f"blind batch `{stem}`" if blind else "training groups pinned unread"
        elif pinned:
            found[row_id] = f"batch `{stem}`"
        else:
            found[row_id] = "dealt when the corpus was built"
    return found


def by_part(judged: Judged) -> None:
    parts = part_of()
    per: dict[str, Counter[str]] = defaultdict(Counter)
    for row, outcome, _ in judged:
        part = parts[row["id"]]
        names = [part, "**all**"]
        if part.startswith("blind"):
            names.append("all blind batches")
        for name in names:
            per[name][outcome] += 1
            per[name]["clean" if row["label"] == "clean" else "failures"] += 1
    print("| part | failures | correct | wrong | silent | clean | fp | flagged |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    first = ["dealt when the corpus was built"]
    last = ["training groups pinned unread", "all blind batches", "**all**"]
    middle = sorted((n for n in per if n not in first + last), key=lambda n: (len(n), n))
    for name in [n for n in first + middle + last if n in per]:
        print(_line(name, per[name]))


EVIDENCE = {
    "every rule": lambda basis: True,
    "every rule but words": lambda basis: basis != "word",
    "codes, statuses and argument readers only": lambda basis: (
        basis.startswith("code:")
        or basis in ("override", "value", "type", "missing", "retry-hint", "http")
    ),
}


def _guided(verdict: toolmend.Verdict) -> str | None:
    """The kind a verdict guides toward, or None (not failed, or ambiguous)."""
    kind = verdict.kind.value if verdict.failed and verdict.kind else None
    return kind if kind in GUIDED else None


def _outcome(label: str, kind: str | None) -> str:
    """A labelled failure's outcome for the guidance ``kind`` (None: no guidance)."""
    if kind is None:
        return "correct" if label == "ambiguous" else "silent"
    return "correct" if kind == label else "wrong"


def _shares(c: Counter[str], n: int) -> str:
    return " | ".join(f"{100 * c[k] / n:.1f}%" for k in ("correct", "wrong", "silent"))


def by_evidence(judged: Judged) -> None:
    print("| guidance from | failures | correct | wrong | silent |")
    print("|---|---:|---:|---:|---:|")
    failures = [(row, verdict) for row, _, verdict in judged if row["label"] != "clean"]
    for name, allowed in EVIDENCE.items():
        c: Counter[str] = Counter()
        for row, verdict in failures:
            kind = _guided(verdict)
            if kind is not None and not allowed((verdict.basis or "").split("/")[-1]):
                kind = None
            c[_outcome(row["label"], kind)] += 1
        print(f"| {name} | {len(failures)} | {_shares(c, len(failures))} |")
    strict: Counter[str] = Counter()
    for row, _ in failures:
        flag = row.get("is_error")
        verdict = toolmend.classify_result(
            row["content"],
            is_error=flag if flag is True else None,
            tool=row.get("tool"),
            precision="strict",
        )
        strict[_outcome(row["label"], _guided(verdict))] += 1
    n, shares = len(failures), _shares(strict, len(failures))
    print(f'| `precision="strict"` (codes, statuses, arguments re-read) | {n} | {shares} |')


def with_the_call(rows: list[dict[str, Any]]) -> None:
    """The rows that carry their call (``arguments``, ``schema``): the text alone, then the call.

    ``fresh9.jsonl`` is the first blind batch collected with each call's arguments
    and, for MCP tools, the tool's input schema.
    """
    called = [r for r in rows if isinstance(r.get("arguments"), dict)]
    if not called:
        return
    failures = [r for r in called if r["label"] != "clean"]
    clean = [r for r in called if r["label"] == "clean"]
    print("| rows with their call | failures | correct | wrong | silent | clean | fp |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, extra in (
        ("the text alone", {}),
        ("plus arguments and schema", {"context": True}),
        ('plus arguments and schema, `precision="strict"`', {"context": True, "strict": True}),
    ):
        c: Counter[str] = Counter()
        for row in called:
            flag = row.get("is_error")
            verdict = toolmend.classify_result(
                row["content"],
                is_error=flag if flag is True else None,
                tool=row.get("tool"),
                arguments=row["arguments"] if extra.get("context") else None,
                schema=row.get("schema") if extra.get("context") else None,
                precision="strict" if extra.get("strict") else None,
            )
            kind = _guided(verdict)
            if row["label"] == "clean":
                c["fp"] += kind is not None
            else:
                c[_outcome(row["label"], kind)] += 1
        n, k = len(failures), len(clean)
        print(f"| {name} | {n} | {_shares(c, n)} | {k} | {100 * c['fp'] / k if k else 0:.1f}% |")


def _line(name: str, c: Counter[str]) -> str:
    f, k = c["failures"], c["clean"]

    def pct(n: int, d: int) -> str:
        return f"{100 * n / d:.1f}%" if d else "-"

    return (
        f"| {name} | {f} | {pct(c['correct'], f)} | {pct(c['wrong'], f)} | {pct(c['silent'], f)}"
        f" | {k} | {pct(c['fp'], k)} | {pct(c['fp'] + c['flagged'], k)} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", default="test", choices=["train", "dev", "test", "fresh", "all"])
    parser.add_argument("--rows", action="store_true", help="list every miss")
    args = parser.parse_args()
    if args.split == "all":
        rows = list(corpus.rows())
    elif args.split == "fresh":
        rows = [row for row in corpus.rows() if row.get("split") == "test"]
    else:
        rows = corpus.split_rows(args.split)
    print(f"Real-world corpus, split {args.split}: {len(rows)} rows")
    judged = [(row, *judge(row)) for row in rows]
    table(judged, args.rows)
    print()
    by_part(judged)
    print()
    by_evidence(judged)
    print()
    with_the_call(rows)
    print(f"\nmedian classify_result() per result under 1 KB: {cost(list(corpus.rows())):.2f} µs")


if __name__ == "__main__":
    main()
