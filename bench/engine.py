"""Benchmark of toolmend-engine: tokens per second with the layer on and off, and peak memory.

Two request sets from the evaluation's scenarios, each generated with the layer
off and with form C3, interleaved so that load from other processes hits both,
each request starting from the same prefix-cache state (the shared tool
schemas).  "to 1st tok s" is the prompt's evaluation (longer under C3, which
adds a note after the failed result), "decode tok/s" the generation after the
first token (median over requests), and "layer+render ms" the layer, template and tokenizer per
request:

* ``failed``: decision steps with a failed call (C3 rewrites them, so the
  prompts and the generated tokens differ between the modes);
* ``clean``: the same conversations with a successful result (the prompts are
  byte-identical, so any difference is the layer's own cost).

Then the default evaluation (``toolmend-engine eval``, as the README runs it)
in a subprocess, for its duration and peak resident memory.

    python bench/engine.py [--requests N] [--max-tokens N] [--skip-eval]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

from toolmend import Form, Kind
from toolmend_engine import ChatEngine, LocalModel, default_model_path
from toolmend_engine.inference import common_prefix
from toolmend_engine.protocol import parse_chat
from toolmend_engine.scenarios import decision_messages, load_suite


def _requests(n: int) -> dict[str, list[dict[str, Any]]]:
    suite = load_suite()
    tools = list(suite.tools)
    failed, clean = [], []
    for i, scenario in enumerate(suite.select(None)[:n]):
        kind = (Kind.TRANSIENT, Kind.FIXABLE, Kind.UNRECOVERABLE)[i % 3]
        messages = decision_messages(suite, scenario, kind)
        failed.append({"messages": messages, "tools": tools})
        ok = [*messages[:2], {**messages[2], "content": json.dumps(dict(scenario.result))}]
        clean.append({"messages": ok, "tools": tools})
    return {"failed": failed, "clean": clean}


def _prime(engine: ChatEngine, prefix: list[int]) -> None:
    """Bring the prefix cache to the same state before every measured request."""
    model = engine.model
    assert isinstance(model, LocalModel)
    with model.lock:
        model.prompt_logits(prefix)


def _run(
    engine: ChatEngine, model: LocalModel, body: dict[str, Any], form: Form, max_tokens: int
) -> tuple[float, float, float, int, int]:
    """Seconds to prepare, to the first token and for the rest; prompt and generated tokens."""
    start = time.perf_counter()
    prepared = engine.prepare_chat(parse_chat({**body, "tool_errors": form.value}))
    prepared_at = time.perf_counter()
    first_at, n = prepared_at, 0
    with model.lock:
        for _ in model.generate(prepared.tokens, max_tokens):
            n += 1
            if n == 1:
                first_at = time.perf_counter()
    end = time.perf_counter()
    return prepared_at - start, first_at - prepared_at, end - first_at, len(prepared.tokens), n


def _throughput(n: int, max_tokens: int) -> list[list[str]]:
    model = LocalModel(default_model_path())
    engine = ChatEngine(model)
    sets = _requests(n)
    prompts = [
        engine.prepare_chat(parse_chat(b)).tokens for bodies in sets.values() for b in bodies
    ]
    shared = min(common_prefix(prompts[0], p) for p in prompts)
    prefix = prompts[0][: (shared // model.settings.block) * model.settings.block]
    rows = []
    for name, bodies in sets.items():
        runs: dict[Form, list[tuple[float, float, float, int, int]]] = {Form.OFF: [], Form.C3: []}
        for body in bodies:
            for form in (Form.OFF, Form.C3):
                _prime(engine, prefix)
                runs[form].append(_run(engine, model, body, form, max_tokens))
        rates = {
            form: statistics.median((r[4] - 1) / r[2] for r in results if r[4] > 1)
            for form, results in runs.items()
        }
        for form, results in runs.items():
            change = 100 * (rates[form] / rates[Form.OFF] - 1)
            rows.append([
                name, "off" if form is Form.OFF else "c3", str(len(results)),
                str(sum(r[3] for r in results)), str(sum(r[4] for r in results)),
                f"{sum(r[1] for r in results):.1f}", f"{rates[form]:.1f}", f"{change:+.1f}%",
                f"{1000 * statistics.fmean(r[0] for r in results):.2f}",
            ])  # fmt: skip
    return rows


def _default_eval() -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "toolmend_engine.cli", "eval", "--out", out],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        seconds = time.perf_counter() - start
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return seconds, peak_kib / 1024


def _table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(c.rjust(w) for c, w in zip(header, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=24, help="requests per set (24)")
    parser.add_argument("--max-tokens", type=int, default=32, help="tokens per reply (32)")
    parser.add_argument("--skip-eval", action="store_true", help="skip the default evaluation run")
    args = parser.parse_args()
    header = [
        "set", "layer", "requests", "prompt tok", "gen tok", "to 1st tok s", "decode tok/s",
        "vs off", "layer+render ms",
    ]  # fmt: skip
    print(_table(header, _throughput(args.requests, args.max_tokens)))
    if not args.skip_eval:
        seconds, peak = _default_eval()
        print()
        print(
            _table(
                ["run", "seconds", "peak RSS MiB"],
                [["default eval", f"{seconds:.0f}", f"{peak:.0f}"]],
            )
        )


if __name__ == "__main__":
    main()
