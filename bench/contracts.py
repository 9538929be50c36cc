"""Benchmark outcome contracts: recall per invariant class, clean false positives, throughput.

Mines contracts from a seeded corpus of realistic tool results
(``bench/contract_corpus.py``), injects one fault of each class into held-out
results, and prints recall per class (any violation, and the class's own code),
the false-positive rate on the held-out clean results (target <= 2%), and
mining and checking throughput (target >= 10,000 results/s).

    ./dev python bench/contracts.py [--per-tool 600] [--train 400] [--seed N]
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter

from contract_corpus import BOUNDARY, CLASSES, SUBSTITUTES, Call, corpus, inject

from toolmend.contracts import Contracts, check, mine


def _best(seconds: list[float]) -> float:
    return min(seconds)


SHORT = {
    "missing_learned_field": "miss",
    "unexpected_field": "unexp",
    "learned_type_mismatch": "type",
    "unseen_category": "cat",
    "nonpositive_value": "pos",
    "learned_echo_mismatch": "echo",
    "affine_relation_broken": "affine",
    "explicit_error": "error",
}


def _sweep(data: dict[str, list[Call]], args: argparse.Namespace) -> None:
    """Recall and false positives as the recorded traffic per tool grows."""
    held = {tool: calls[args.train :] for tool, calls in data.items()}
    print("\nby training size (results per tool; recall of the class's own code):")
    print(f"{'train':>6} {'clean FP':>9} " + " ".join(f"{SHORT[c]:>6}" for c in CLASSES))
    for size in (30, 45, 100, 200, args.train):
        contracts = mine([c for calls in data.values() for c in calls[:size]])
        flagged = sum(
            bool(check(contracts, t, c["arguments"], c["result"]))
            for t, calls in held.items()
            for c in calls
        )
        total = sum(len(calls) for calls in held.values())
        rng = random.Random(args.seed)
        cells = []
        for fault in CLASSES:
            injected = own = 0
            for tool, calls in held.items():
                for call in calls:
                    bad = inject(call, fault, rng)
                    if bad is None:
                        continue
                    injected += 1
                    found = check(contracts, tool, bad["arguments"], bad["result"])
                    own += any(v.code.value == fault for v in found)
            cells.append(f"{own / injected:>6.0%}")
        print(f"{size:>6} {flagged / total:>9.2%} " + " ".join(cells))


def main() -> int:
    parser = argparse.ArgumentParser(description="outcome-contract benchmark")
    parser.add_argument("--seed", type=int, default=20260718)
    parser.add_argument("--per-tool", type=int, default=600)
    parser.add_argument("--train", type=int, default=400)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    data = corpus(args.seed, args.per_tool)
    train = [c for calls in data.values() for c in calls[: args.train]]
    held = {tool: calls[args.train :] for tool, calls in data.items()}

    mining: list[float] = []
    contracts = Contracts()
    for _ in range(args.repeat):
        start = time.perf_counter()
        contracts = mine(train, substitutes=SUBSTITUTES)
        mining.append(time.perf_counter() - start)

    print(f"corpus: {len(data)} tools, {len(train)} training results, seed {args.seed}\n")
    print(f"{'tool':<18} {'train':>5} {'held':>5} {'types':>5} {'keys':>5} {'cat':>4} "
          f"{'pos':>4} {'echo':>4} {'aff':>4} {'err':>4} {'clean FP':>9}")  # fmt: skip
    clean_total = clean_flagged = 0
    fired: Counter[str] = Counter()
    for tool, calls in held.items():
        c = contracts.tools[tool]
        flagged = 0
        for call in calls:
            found = check(contracts, tool, call["arguments"], call["result"])
            if found:
                flagged += 1
                fired.update(v.code.value for v in found)
        clean_total += len(calls)
        clean_flagged += flagged
        keys = sum(len(r.required) + (r.allowed is not None) for r in c.objects.values())
        print(
            f"{tool:<18} {c.samples:>5} {len(calls):>5} {len(c.types):>5} {keys:>5} "
            f"{len(c.domains):>4} {len(c.positive):>4} {len(c.echoes):>4} {len(c.affine):>4} "
            f"{'yes' if c.error_free else 'no':>4} {flagged / len(calls):>8.2%}"
        )
    print()
    rng = random.Random(args.seed)
    print(f"{'fault class':<24} {'injected':>8} {'detected':>8} {'recall':>7} {'own code':>8}")
    faulted = []
    for fault in CLASSES:
        injected = detected = own = 0
        for tool, calls in held.items():
            for call in calls:
                bad = inject(call, fault, rng)
                if bad is None:
                    continue
                faulted.append(bad)
                injected += 1
                found = check(contracts, tool, bad["arguments"], bad["result"])
                detected += bool(found)
                own += any(v.code.value == fault for v in found)
        print(
            f"{fault:<24} {injected:>8} {detected:>8} {detected / injected:>7.1%} "
            f"{own / injected:>8.1%}"
        )
    print(f"{'outside the vocabulary':<24}")
    for fault in BOUNDARY:
        injected = detected = 0
        for tool, calls in held.items():
            for call in calls:
                bad = inject(call, fault, rng)
                if bad is None:
                    continue
                injected += 1
                detected += bool(check(contracts, tool, bad["arguments"], bad["result"]))
        print(f"  {fault:<22} {injected:>8} {detected:>8} {detected / injected:>7.1%} {'-':>8}")
    rate = clean_flagged / clean_total
    verdict = "ok" if rate <= 0.02 else "ABOVE TARGET"
    print(f"\nclean held-out false positives: {clean_flagged}/{clean_total} = {rate:.2%} "
          f"(target <= 2%: {verdict})")  # fmt: skip
    if fired:
        print("  by class: " + ", ".join(f"{k} {n}" for k, n in sorted(fired.items())))

    everything = [c for calls in held.values() for c in calls] + faulted
    checking: list[float] = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        for call in everything:
            check(contracts, call["tool"], call["arguments"], call["result"])
        checking.append(time.perf_counter() - start)
    mine_rate = len(train) / _best(mining)
    check_rate = len(everything) / _best(checking)
    _sweep(data, args)
    print(f"\nmining:   {len(train):>6} results in {_best(mining):.3f} s = "
          f"{mine_rate:>9,.0f} results/s (target >= 10,000)")  # fmt: skip
    print(f"checking: {len(everything):>6} results in {_best(checking):.3f} s = "
          f"{check_rate:>9,.0f} results/s (target >= 10,000)")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
