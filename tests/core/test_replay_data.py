"""The outcome-labelled replay data (``bench/replay/streams.jsonl``) and its bench.

The data is recorded by ``tools/replay_record.py`` from real systems; these tests hold
its shape (every line an outcome record whose outcome proves its truth) and the
bench's arithmetic: scoring, the half split, the k cap of the stand-in learner.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest

from bench import replay

OUTCOMES = {
    "retry_succeeded": "transient",
    "changed_arguments_succeeded": "fixable",
    "failed_again": "unrecoverable",
}


@pytest.fixture(scope="module")
def records() -> list[dict[str, Any]]:
    return replay.load()


def test_every_line_is_an_outcome_record_or_a_clean_result(
    records: list[dict[str, Any]],
) -> None:
    bad = []
    for i, r in enumerate(records):
        base = (
            isinstance(r.get("deployment"), str)
            and isinstance(r.get("tool"), str)
            and isinstance(r.get("content"), str)
            and isinstance(r.get("arguments"), dict)
            and isinstance(r.get("source"), str)
            and r["source"] != ""
            and isinstance(r.get("flagged"), bool)
        )
        if r.get("truth") == "clean":
            shaped = r.get("is_error") is False and "outcome" not in r
        else:
            shaped = r.get("is_error") is True and OUTCOMES.get(r.get("outcome", "")) == r["truth"]
        if not (base and shaped):
            bad.append(i)
    assert bad == []


def test_the_data_is_large_enough_to_learn_from(records: list[dict[str, Any]]) -> None:
    truths = Counter(r["truth"] for r in records)
    failures = sum(truths[k] for k in replay.KINDS)
    assert failures >= 400
    assert truths["clean"] >= 150
    assert len({r["deployment"] for r in records}) >= 6
    assert set(truths) == {"transient", "fixable", "unrecoverable", "clean"}


def test_failures_recur_with_different_specifics(records: list[dict[str, Any]]) -> None:
    """Each deployment's failures repeat under different texts, not one text copied."""
    texts: dict[str, set[str]] = {}
    counts: Counter[str] = Counter()
    for r in records:
        if r["truth"] != "clean":
            texts.setdefault(r["deployment"], set()).add(r["content"])
            counts[r["deployment"]] += 1
    assert {d: len(t) > counts[d] // 4 for d, t in texts.items()} == dict.fromkeys(texts, True)


def _r(truth: str, text: str = "x", outcome: str | None = None, tool: str = "t") -> dict[str, Any]:
    record = {"deployment": "d", "tool": tool, "content": text, "truth": truth, "flagged": True}
    if outcome is not None:
        record["outcome"] = outcome
    return record


def _says(kind: str) -> replay.Classifier:
    def classify(record: dict[str, Any], history: Sequence[dict[str, Any]] = ()) -> str:
        return kind

    return classify


def test_a_score_counts_correct_wrong_silent_and_false_alarms() -> None:
    stream = [_r("transient"), _r("fixable"), _r("unrecoverable"), _r("clean"), _r("clean")]
    assert vars(replay.score(stream, _says("fixable"))) == {
        "failures": 3,
        "correct": 1,
        "wrong": 2,
        "silent": 0,
        "cleans": 2,
        "false_alarms": 2,
    }
    assert vars(replay.score(stream, _says("ambiguous"))) == {
        "failures": 3,
        "correct": 0,
        "wrong": 0,
        "silent": 3,
        "cleans": 2,
        "false_alarms": 2,
    }
    assert vars(replay.score(stream, _says("clean"), start=3)) == {
        "failures": 0,
        "correct": 0,
        "wrong": 0,
        "silent": 0,
        "cleans": 2,
        "false_alarms": 0,
    }


def test_the_stand_in_learner_keeps_k_outcomes_per_key_and_falls_back() -> None:
    first = [
        _r("transient", "busy", "retry_succeeded"),
        _r("unrecoverable", "busy", "failed_again"),
        _r("unrecoverable", "busy", "failed_again"),
        _r("clean", "ok"),
    ]
    one = replay.stand_in_learner(first, 1, fallback=_says("ambiguous"))
    three = replay.stand_in_learner(first, 3, fallback=_says("ambiguous"))
    assert [one(_r("x", "busy"), []), three(_r("x", "busy"), []), one(_r("x", "ok"), [])] == [
        "transient",
        "unrecoverable",
        "ambiguous",
    ]
    assert one(_r("x", "busy", tool="other"), []) == "ambiguous"  # the key holds the tool


def test_learning_reads_the_first_half_and_judges_the_second() -> None:
    stream = [
        _r("fixable", "a", "changed_arguments_succeeded"),
        _r("clean", "ok"),
        _r("fixable", "a", "changed_arguments_succeeded"),
        _r("transient", "b", "retry_succeeded"),
    ]
    assert replay.halves(stream) == (stream[:2], stream[2:])
    rows = replay.learned_rows({"d": stream}, ks=(1,))
    assert vars(rows["learned k=1"]["d"])["failures"] == 2
    assert rows["learned k=1"]["d"].correct >= 1  # "a" learned; "b" left to the built-in rules


def test_the_bench_runs_on_a_slice(records: list[dict[str, Any]]) -> None:
    part = records[:60]
    printed = replay.report(part).splitlines()
    truths = Counter(r["truth"] for r in part)
    name = part[0]["deployment"]
    assert printed[0] == "The data: failing calls by what worked next, and clean results"
    assert printed[3] == (
        f"{name:<16} | {truths['transient']:>9} | {truths['fixable']:>7} | "
        f"{truths['unrecoverable']:>13} | {truths['clean']:>5}"
    )
    labels = [line.split(" |")[0].strip() for line in printed if " | " in line]
    for label in ("built-in", "plus context", "learned k=1", "learned k=3", "learned k=10"):
        assert label in labels
