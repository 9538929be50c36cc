"""Outcome-labelled replay: how often is a failure's guidance right, judged by what then worked?

Usage: ./dev python bench/replay.py [path.jsonl]

The data (``bench/replay/streams.jsonl``) is one stream of tool calls per deployment
(a real system run here: reference MCP servers, SQLite, PostgreSQL, Redis, an HTTP
API through curl), each call really made.  A failing call's ``truth`` is not a
reader's label but what worked next: the same call after a pause
(``retry_succeeded``: transient), the call with the argument an expert would change
(``changed_arguments_succeeded``: fixable), or neither (``failed_again``:
unrecoverable).  Successful calls are there too (``truth: clean``) so false alarms
count.

For each failure a classifier is *correct* when its kind equals the truth, *wrong*
when it gives another kind, *silent* when it gives none (ambiguous, or not a
failure).  A clean result judged a failure (of any kind) is a *false alarm*.

Three ways to classify, each a :data:`Classifier` (a callable from a record and the
records before it in its stream to a kind, ``"ambiguous"`` or ``"clean"``):

- ``built-in``: today's :func:`toolmend.classify_result` on the result text, with
  the source's error flag (``flagged``) as ``is_error``;
- ``plus context``: :func:`with_context`, the hook for classification that also
  reads the call (tool, arguments) and the stream so far; today a stand-in that
  passes the tool name, so it equals the built-in rules;
- ``learned k=1, 3, 10``: a :data:`Learner` fitted on the first half of each
  stream, keeping at most ``k`` observed outcomes per key, then asked about the
  second half; where it knows nothing the built-in rules answer.  The learner here
  is :func:`stand_in_learner`, the majority outcome per exact (tool, normalized text)
  key, standing in for ``toolmend learn`` and error signatures: pass another
  learner to :func:`learned_rows`.

To regenerate the data (a few minutes; the servers come from ``./dev test``'s cache,
PostgreSQL from ``tools/pg_cluster.py``, ``redis-server``, ``curl`` and ``node`` from
PATH)::

    ./dev python tools/replay_record.py            # writes bench/replay/streams.jsonl
    ./dev python tools/replay_record.py --only redis --out /tmp/redis.jsonl

The recorder's docstring says how each failure is produced; each record's
``source`` says it for that call.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import toolmend
from toolmend.integrations import MIN_SUPPORT, Observed, learn, read_outcomes

DATA = Path(__file__).resolve().parent / "replay" / "streams.jsonl"
KINDS = ("transient", "fixable", "unrecoverable")
TRUTHS = (*KINDS, "clean")
OUTCOME_TRUTH = {
    "retry_succeeded": "transient",
    "changed_arguments_succeeded": "fixable",
    "failed_again": "unrecoverable",
}
"""What each outcome proves.  ``stopped`` (the agent gave up) proves nothing and is not learned."""
LEARN_K = (1, 3, 10)

Record = dict[str, Any]
Classifier = Callable[[Record, Sequence[Record]], str]
"""``(record, earlier records of its stream) -> kind | "ambiguous" | "clean"``."""
Learner = Callable[[Sequence[Record], int], Classifier]
"""``(training records with outcomes, k) -> classifier`` using at most k outcomes per key."""


def load(path: Path = DATA) -> list[Record]:
    """Every record of the data file, in file order (each stream's order)."""
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def streams(records: Iterable[Record]) -> dict[str, list[Record]]:
    """The records grouped by deployment, each group in its recorded order."""
    grouped: dict[str, list[Record]] = defaultdict(list)
    for record in records:
        grouped[record["deployment"]].append(record)
    return dict(grouped)


def halves(stream: Sequence[Record]) -> tuple[list[Record], list[Record]]:
    """The first half of a stream (to learn from) and the second (to judge on)."""
    middle = len(stream) // 2
    return list(stream[:middle]), list(stream[middle:])


def built_in(record: Record, history: Sequence[Record] = ()) -> str:
    """Today's rules on the result text, with the source's error flag where it had one."""
    flag = True if record.get("flagged") else None
    verdict = toolmend.classify_result(record["content"], is_error=flag)
    return str(verdict.kind) if verdict.failed and verdict.kind else "clean"


def with_context(
    record: Record, history: Sequence[Record] = (), rules: toolmend.Rules | None = None
) -> str:
    """Classification with the call: the tool, its arguments and the stream so far.

    ``classify_result(arguments=...)`` reads what the tool could never accept (a URL
    it cannot fetch, a value outside its schema); ``history`` the calls before it in
    its stream (an unclear failure of a call that worked before); ``rules`` adds
    learned rules.
    """
    flag = True if record.get("flagged") else None
    arguments = record.get("arguments")
    verdict = toolmend.classify_result(
        record["content"],
        is_error=flag,
        tool=record["tool"],
        arguments=arguments if isinstance(arguments, dict) else None,
        rules=rules,
        history=[_earlier(r) for r in history],
    )
    return str(verdict.kind) if verdict.failed and verdict.kind else "clean"


def _earlier(record: Record) -> dict[str, Any]:
    """A recorded call as the history reader takes it (a ``CallRecord``'s dict form)."""
    return {
        "tool": record["tool"],
        "failed": bool(record.get("is_error")),
        "arguments": record.get("arguments"),
        "cause": record["content"],
    }


def toolmend_learner(
    training: Sequence[Record], k: int, min_support: int | None = None
) -> Classifier:
    """``toolmend learn`` on the first half: at most ``k`` outcomes per (tool, signature).

    The outcome lines are the minimal ones ``toolmend learn`` reads; a signature needs
    ``min(k, 3)`` agreeing outcomes (the default is 3), so k=1 trusts one outcome.
    """
    lines = [
        json.dumps(
            {
                "tool": r["tool"],
                "content": r["content"],
                "is_error": True,
                "arguments": r.get("arguments"),
                "outcome": r["outcome"],
            }
        )
        for r in training
        if r.get("outcome") in OUTCOME_TRUTH
    ]
    observed, _ = read_outcomes(lines)
    kept: list[Observed] = []
    count: Counter[tuple[str, str]] = Counter()
    for item in observed:
        key = (item.tool, item.signature)
        if count[key] < k:
            count[key] += 1
            kept.append(item)
    support = min(k, MIN_SUPPORT) if min_support is None else min_support
    rules = toolmend.Rules(learn(kept, min_support=support).rules)

    def classify(record: Record, history: Sequence[Record] = ()) -> str:
        return with_context(record, history, rules)

    return classify


_SPACE = re.compile(r"\s+")


def exact_key(record: Record) -> tuple[str, str]:
    """The stand-in's key: the tool and its text with whitespace collapsed, nothing masked."""
    return record["tool"], _SPACE.sub(" ", record["content"]).strip()


def stand_in_learner(
    training: Sequence[Record],
    k: int,
    key: Callable[[Record], Any] = exact_key,
    fallback: Classifier = built_in,
) -> Classifier:
    """A trivial learner standing in for ``toolmend learn``: majority outcome per key.

    Each key keeps the first ``k`` outcomes observed for it, in stream order; its
    kind is their majority (ties go to the earliest).  A record whose key was not
    seen is left to ``fallback``.  Swap ``key`` for an error signature to measure it.
    """
    seen: dict[Any, list[str]] = defaultdict(list)
    for record in training:
        outcome = record.get("outcome")
        if outcome in OUTCOME_TRUTH and len(seen[key(record)]) < k:
            seen[key(record)].append(OUTCOME_TRUTH[outcome])
    learned = {found: Counter(kinds).most_common(1)[0][0] for found, kinds in seen.items()}

    def classify(record: Record, history: Sequence[Record] = ()) -> str:
        return learned.get(key(record)) or fallback(record, history)

    return classify


@dataclass
class Score:
    """Counts for one classifier over some records.

    Attributes:
        failures: Records whose truth is a kind.
        correct: Failures given their true kind.
        wrong: Failures given another kind.
        silent: Failures given no kind (ambiguous, or judged clean).
        cleans: Records whose truth is clean.
        false_alarms: Clean records judged failed, of any kind.
    """

    failures: int = 0
    correct: int = 0
    wrong: int = 0
    silent: int = 0
    cleans: int = 0
    false_alarms: int = 0

    def add(self, truth: str, said: str) -> None:
        if truth == "clean":
            self.cleans += 1
            self.false_alarms += said != "clean"
            return
        self.failures += 1
        if said == truth:
            self.correct += 1
        elif said in KINDS:
            self.wrong += 1
        else:
            self.silent += 1

    def merge(self, other: Score) -> None:
        for name in vars(self):
            setattr(self, name, getattr(self, name) + getattr(other, name))


def score(stream: Sequence[Record], classifier: Classifier, start: int = 0) -> Score:
    """Judge ``stream[start:]`` with ``classifier``, each record seeing those before it."""
    result = Score()
    for i in range(start, len(stream)):
        result.add(stream[i]["truth"], classifier(stream[i], stream[:i]))
    return result


def learned_rows(
    grouped: dict[str, list[Record]],
    learner: Learner = stand_in_learner,
    ks: Sequence[int] = LEARN_K,
) -> dict[str, dict[str, Score]]:
    """Per ``learned k=...`` row, per deployment: the second half judged after the first.

    Learning is per deployment (a rules file per deployment), from the first half's
    outcomes only.
    """
    rows: dict[str, dict[str, Score]] = {}
    for k in ks:
        row: dict[str, Score] = {}
        for name, stream in grouped.items():
            first, _ = halves(stream)
            row[name] = score(stream, learner(first, k), start=len(first))
        rows[f"learned k={k}"] = row
    return rows


def second_half_rows(
    grouped: dict[str, list[Record]],
    classifiers: dict[str, Classifier],
    learner: Learner = stand_in_learner,
) -> dict[str, dict[str, Score]]:
    """Every method on the second half of every stream, so that the rows compare."""
    rows = {
        label: {
            name: score(stream, classify, start=len(stream) // 2)
            for name, stream in grouped.items()
        }
        for label, classify in classifiers.items()
    }
    rows.update(learned_rows(grouped, learner))
    return rows


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:5.1f}%" if whole else "    -"


def _line(label: str, s: Score) -> str:
    return (
        f"{label:<16} | {s.failures:>8} | {s.correct:>4} {_pct(s.correct, s.failures)} | "
        f"{s.wrong:>4} {_pct(s.wrong, s.failures)} | {s.silent:>4} {_pct(s.silent, s.failures)} | "
        f"{s.cleans:>6} | {s.false_alarms:>4} {_pct(s.false_alarms, s.cleans)}"
    )


HEADER = (
    f"{'':<16} | failures |    correct   |     wrong    |    silent    |  clean | false alarms\n"
    f"{'-' * 16}-+----------+--------------+--------------+--------------+--------+-------------"
)


def table(rows: dict[str, Score], total_line: bool = True) -> str:
    """A score table, one line a row, and a total line (rows of deployments) if asked."""
    lines = [HEADER]
    total = Score()
    for label, s in rows.items():
        lines.append(_line(label, s))
        total.merge(s)
    if total_line:
        lines.append(_line("all", total))
    return "\n".join(lines)


def truths_table(grouped: dict[str, list[Record]]) -> str:
    """What the data holds: per deployment, the failures by truth and the clean results."""
    lines = [
        f"{'deployment':<16} | transient | fixable | unrecoverable | clean",
        f"{'-' * 16}-+-----------+---------+---------------+------",
    ]
    total: Counter[str] = Counter()
    for name, stream in grouped.items():
        counts = Counter(r["truth"] for r in stream)
        total.update(counts)
        lines.append(
            f"{name:<16} | {counts['transient']:>9} | {counts['fixable']:>7} | "
            f"{counts['unrecoverable']:>13} | {counts['clean']:>5}"
        )
    lines.append(
        f"{'all':<16} | {total['transient']:>9} | {total['fixable']:>7} | "
        f"{total['unrecoverable']:>13} | {total['clean']:>5}"
    )
    return "\n".join(lines)


def confusion(records: Sequence[Record], classifier: Classifier = built_in) -> str:
    """What a classifier said for each truth, over every record: where the misses are."""
    said: dict[str, Counter[str]] = defaultdict(Counter)
    for stream in streams(records).values():
        for i, record in enumerate(stream):
            said[record["truth"]][classifier(record, stream[:i])] += 1
    columns = (*KINDS, "ambiguous", "clean")
    lines = [f"{'truth / said':<16} | " + " | ".join(f"{c:>13}" for c in columns)]
    lines.append(f"{'-' * 16}-+" + "+".join("-" * 15 for _ in columns))
    for truth in TRUTHS:
        lines.append(f"{truth:<16} | " + " | ".join(f"{said[truth][c]:>13}" for c in columns))
    return "\n".join(lines)


def report(records: Sequence[Record], learner: Learner | None = None) -> str:
    """The whole printout: the data, built-in rules on everything, then the second halves."""
    grouped = streams(records)
    whole = {name: score(stream, built_in) for name, stream in grouped.items()}
    halves_rows = second_half_rows(
        grouped, {"built-in": built_in, "plus context": with_context}, learner or toolmend_learner
    )
    stand_in = learned_rows(grouped, stand_in_learner, ks=(3,))["learned k=3"]
    halves_rows["stand-in k=3 (exact text)"] = stand_in
    overall = {label: _total(row.values()) for label, row in halves_rows.items()}
    parts = [
        "The data: failing calls by what worked next, and clean results",
        truths_table(grouped),
        "",
        "Built-in rules alone, every record",
        table(whole),
        "",
        confusion(records),
        "",
        "Second half of each stream (learned rows: toolmend learn on the first half, "
        "at most k outcomes per (tool, signature), with the call's arguments; the "
        "stand-in: majority outcome per exact (tool, text))",
        table(overall, total_line=False),
    ]
    support = {
        f"min_support={n}": _total(
            score(stream, toolmend_learner(halves(stream)[0], 10, n), start=len(stream) // 2)
            for stream in grouped.values()
        )
        for n in (1, 2, 3)
    }
    parts += [
        "",
        f"The default support (toolmend learn's MIN_SUPPORT is {MIN_SUPPORT}), "
        "every outcome of the first half (k=10)",
        table(support, total_line=False),
    ]
    for label, row in halves_rows.items():
        if label.startswith("learned"):
            parts += ["", f"Second halves, {label}, per deployment", table(row)]
    return "\n".join(parts)


def _total(scores: Iterable[Score]) -> Score:
    total = Score()
    for s in scores:
        total.merge(s)
    return total


def main(argv: Sequence[str] = ()) -> None:
    path = Path(argv[0]) if argv else DATA
    print(report(load(path)))


if __name__ == "__main__":
    main(sys.argv[1:])
