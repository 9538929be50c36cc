"""How often two people following the labelling guide agree, and how toolmend fares on each.

Usage: ./dev python bench/agreement.py

``corpus/realworld/agreement/second_reader.jsonl`` holds a second, blind label for a
random sample of 320 test-split rows (seed 20261201; the ``fresh5``-``fresh8`` batches
are not in it): a helper who read only ``docs/labelling.md`` and each row's family,
origin, tool, flag and text, never the first label.  Agreement between the two readers bounds
what any classifier can be measured to reach on these labels; toolmend's outcomes are
shown against the first label, the second, and on the rows where both agree.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from realworld import GUIDED, ROOT, corpus, judge

LABELS = ("transient", "fixable", "unrecoverable", "ambiguous", "clean")
SECOND = ROOT / "corpus" / "realworld" / "agreement" / "second_reader.jsonl"


def outcome(row: dict[str, Any], label: str) -> str:
    """The outcome of toolmend's verdict on a row judged against ``label``."""
    return judge({**row, "label": label})[0]


def main() -> None:
    rows = {row["id"]: row for row in corpus.rows()}
    second = [json.loads(line) for line in SECOND.read_text(encoding="utf-8").splitlines()]
    pairs = [(rows[s["id"]], s["label"]) for s in second]
    agree = sum(row["label"] == label for row, label in pairs)
    failures = [(row, label) for row, label in pairs if row["label"] != "clean"]
    agree_f = sum(row["label"] == label for row, label in failures)
    print(f"Second reader, {len(pairs)} test-split rows ({len(failures)} failures by the first)")
    print(
        f"agreement: {agree}/{len(pairs)} = {100 * agree / len(pairs):.1f}%;"
        f" on failures {agree_f}/{len(failures)} = {100 * agree_f / len(failures):.1f}%\n"
    )
    print("| first \\ second | " + " | ".join(LABELS) + " |")
    print("|---|" + "---:|" * len(LABELS))
    confusion = Counter((row["label"], label) for row, label in pairs)
    for first in LABELS:
        cells = " | ".join(str(confusion[first, other]) for other in LABELS)
        print(f"| {first} | {cells} |")
    print("\ntoolmend on the failures (first reader's label unless said):\n")
    print("| rows | n | correct | wrong | silent |")
    print("|---|---:|---:|---:|---:|")
    both = [(row, label) for row, label in failures if row["label"] == label]
    split = [(row, label) for row, label in failures if row["label"] != label]
    second_failures = [(row, label) for row, label in pairs if label in GUIDED | {"ambiguous"}]
    for name, chosen, against_second in (
        ("all, first label", failures, False),
        ("all, second label", second_failures, True),
        ("both readers agree", both, False),
        ("readers disagree, first label", split, False),
    ):
        c = Counter(
            outcome(row, label if against_second else row["label"]) for row, label in chosen
        )
        n = len(chosen)
        cells = " | ".join(f"{100 * c[k] / n:.1f}%" for k in ("correct", "wrong", "silent"))
        print(f"| {name} | {n} | {cells} |")


if __name__ == "__main__":
    main()
