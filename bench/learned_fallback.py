"""Would a learned fallback help?  Cross-validation on the training and dev splits.

Usage: ./dev python bench/learned_fallback.py

The issue allows a small learned fallback after the rules: a linear model over
tokens that abstains unless confident.  This measures one before shipping it.
A multinomial logistic regression (token unigrams and bigrams of the deciding
region, tokens seen in at least three training groups, each group weighted by the
square root of its size) is fitted on all but one fold and asked about the held-out
fold's failures that the rules leave without guidance, which is the only place a
fallback would speak.  Two ways to fold the train and dev rows: five folds by group
(no origin in both halves), and one fold per family (leave-one-family-out: the held
-out family's groups leave the training rows too), which asks the real question,
software of a kind nobody wrote rules for.  For each confidence threshold the
tables give the guidance it would add: right, wrong and the precision.  A fallback
is worth shipping only if its precision is far above the rules' (about 95% on
unseen origins): wrong guidance is worse than none.  The test split is not read.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent

import toolmend  # noqa: E402
from toolmend.classify import _text as classify  # noqa: E402
from tools import split as corpus  # noqa: E402

KINDS = ("transient", "fixable", "unrecoverable", "ambiguous")
TOKEN = re.compile(r"[a-z][a-z0-9]+")
FOLDS = 5


def features(text: str) -> set[str]:
    region = classify._scrub(classify._region(text.lstrip()))[:2048]
    tokens = TOKEN.findall(region.lower())
    return set(tokens) | {f"{a} {b}" for a, b in itertools.pairwise(tokens)}


def fit(rows: list[dict[str, Any]]) -> tuple[dict[str, int], np.ndarray]:
    seen: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        for feature in row["_features"]:
            seen[feature].add(row["group"])
    vocabulary = {f: i for i, f in enumerate(sorted(f for f, g in seen.items() if len(g) >= 3))}
    x = np.zeros((len(rows), len(vocabulary) + 1))
    x[:, -1] = 1
    for i, row in enumerate(rows):
        for feature in row["_features"]:
            if feature in vocabulary:
                x[i, vocabulary[feature]] = 1
    y = np.eye(len(KINDS))[[KINDS.index(row["label"]) for row in rows]]
    sizes = Counter(row["group"] for row in rows)
    weight = np.array([1 / math.sqrt(sizes[row["group"]]) for row in rows])
    weight /= weight.mean()
    w = np.zeros((x.shape[1], len(KINDS)))
    for _ in range(300):
        z = x @ w
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        gradient = x.T @ ((p - y) * weight[:, None]) / len(rows) + w / len(rows)
        w -= 5.0 * gradient
    return vocabulary, w


def probabilities(model: tuple[dict[str, int], np.ndarray], row: dict[str, Any]) -> np.ndarray:
    vocabulary, w = model
    z = w[-1].copy()
    for feature in row["_features"]:
        if feature in vocabulary:
            z += w[vocabulary[feature]]
    z -= z.max()
    p = np.exp(z)
    return p / p.sum()  # type: ignore[no-any-return]


def table(title: str, asked: list[tuple[dict[str, Any], np.ndarray]]) -> None:
    labels = Counter(row["label"] for row, _ in asked)
    print(f"{title}: {len(asked)} failures the rules leave without guidance "
          f"({', '.join(f'{k} {labels[k]}' for k in KINDS)})\n")  # fmt: skip
    print("| threshold | guidance added | right | wrong | precision |")
    print("|---:|---:|---:|---:|---:|")
    for threshold in (0.5, 0.6, 0.7, 0.8, 0.9):
        right = wrong = 0
        for row, p in asked:
            best = int(p.argmax())
            if KINDS[best] == "ambiguous" or p[best] < threshold:
                continue
            right += KINDS[best] == row["label"]
            wrong += KINDS[best] != row["label"]
        added = right + wrong
        share = f"{100 * right / added:.0f}%" if added else "-"
        print(f"| {threshold:.1f} | {added} | {right} | {wrong} | {share} |")
    print()


def held_out(
    rows: list[dict[str, Any]], folds: list[set[str]], fold_of: Callable[[dict[str, Any]], int]
) -> list[tuple[dict[str, Any], np.ndarray]]:
    """Each fold's silent failures with the probabilities of a model fitted without its groups."""
    asked: list[tuple[dict[str, Any], np.ndarray]] = []
    for k, held in enumerate(folds):
        model = fit([row for row in rows if row["group"] not in held])
        asked += [(r, probabilities(model, r)) for r in rows if r["_silent"] and fold_of(r) == k]
    return asked


def main() -> None:
    rows = [
        row for s in ("train", "dev") for row in corpus.split_rows(s) if row["label"] != "clean"
    ]
    for row in rows:
        flag = row.get("is_error")
        verdict = toolmend.classify_result(
            row["content"], is_error=flag if flag is True else None, tool=row.get("tool")
        )
        row["_silent"] = verdict.failed and verdict.kind is toolmend.Kind.AMBIGUOUS
        row["_features"] = features(row["content"])
    groups = sorted({row["group"] for row in rows}, key=corpus._key)
    fold = {group: i % FOLDS for i, group in enumerate(groups)}
    by_group = [{g for g in groups if fold[g] == k} for k in range(FOLDS)]
    asked = held_out(rows, by_group, lambda row: fold[row["group"]])
    table(f"Train and dev, {FOLDS} folds by group", asked)
    families: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        families[row["family"]].add(row["group"])
    names = sorted(families)
    asked = held_out(rows, [families[n] for n in names], lambda row: names.index(row["family"]))
    table(f"Train and dev, leave one family out ({len(names)} families)", asked)


if __name__ == "__main__":
    main()
