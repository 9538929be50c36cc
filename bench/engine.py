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

Then decode speed against llama-cpp-python's stock ``Llama`` on the same GGUF and
prompt (``decode_vs_stock``; the target is at least 0.95 of the stock speed), and
the default evaluation (``toolmend-engine eval``, as the README runs it)
in a subprocess, for its duration and peak resident memory.

Then HTTP latency on loopback: short requests (``max_tokens=1``, a prompt the
engine has just evaluated, so the model costs little) to a live ``serve``,
each on a fresh connection or all on one kept-alive connection, and through a
live ``proxy`` in front of it (kept alive on both sides).  Targets: a request
on a kept-alive connection is no slower than on a fresh one (ratio <= 1.0),
and the proxy adds at most 2 ms (proxy median minus direct median).  The modes
alternate in a shuffled order; the same is then measured with Nagle's algorithm
left on in the server (what TCP_NODELAY removes), for reference.

    python bench/engine.py [--requests N] [--max-tokens N] [--skip-eval] [--rounds N]
                           [--stock-only] [--latency-only] [--latency-requests N]
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import ThreadingHTTPServer
from typing import Any

from toolmend import Form, Kind
from toolmend_engine import ChatEngine, LocalModel, default_model_path, make_proxy, make_server
from toolmend_engine.eval._scenarios import decision_messages, load_suite
from toolmend_engine.http._requests import parse_chat
from toolmend_engine.http._server import EngineHandler
from toolmend_engine.inference._model import common_prefix


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


STOCK_PROMPT = [{"role": "user", "content": "Write a long story about a lighthouse keeper."}]
STORY_FORMAT = {
    "type": "json_schema",
    "json_schema": {
        "name": "story",
        "schema": {
            "type": "object",
            "properties": {"title": {"type": "string"}, "story": {"type": "string"}},
            "required": ["title", "story"],
        },
    },
}


def _timed(steps: Iterator[int], limit: int) -> tuple[list[int], float]:
    """The tokens, and the seconds from the first token to the last (the decode phase)."""
    tokens: list[int] = []
    first = 0.0
    for token in steps:
        tokens.append(token)
        if len(tokens) == 1:
            first = time.perf_counter()
        if len(tokens) == limit:
            break
    return tokens, time.perf_counter() - first


def decode_vs_stock(max_tokens: int, rounds: int) -> list[list[str]]:
    """Decode tokens/s of the engine and of llama-cpp-python's stock ``Llama``.

    Same GGUF, prompt tokens, context size and thread count; greedy decoding in
    both (``temp=0``).  The stock ``Llama`` keeps its defaults otherwise (its
    batch size, repacked weights).  The two run interleaved, ``rounds`` times,
    so load from other processes hits both.  The best round is compared: on a
    shared machine the median moves by tens of percent with the load, the best
    round much less.  A third row is the engine under a grammar (a JSON schema
    with a title and a story), which also checks each greedy token against the
    grammar.  "same tokens" compares a row's tokens with the engine's free ones.
    """
    from llama_cpp import Llama

    path = default_model_path()
    model = LocalModel(path)
    engine = ChatEngine(model)
    prompt = engine.prepare_chat(parse_chat({"messages": STOCK_PROMPT}))
    constrained = engine.prepare_chat(
        parse_chat({"messages": STOCK_PROMPT, "response_format": STORY_FORMAT})
    )
    threads = model.settings.n_threads
    stock = Llama(
        str(path), n_ctx=model.n_ctx, n_threads=threads, n_threads_batch=threads, verbose=False
    )

    def ours(grammar: str | None) -> tuple[list[int], float]:
        steps = model.generate(prompt.tokens, max_tokens, grammar=grammar)
        return _timed((s.token for s in steps if not s.end), max_tokens)

    def theirs() -> tuple[list[int], float]:
        steps = stock.generate(prompt.tokens, temp=0.0, top_k=1, reset=True)
        return _timed((t for t in steps if not model.is_end(t)), max_tokens)

    runs: dict[str, list[tuple[list[int], float]]] = {"engine": [], "stock": [], "grammar": []}
    for _ in range(rounds):
        runs["engine"].append(ours(None))
        runs["stock"].append(theirs())
        runs["grammar"].append(ours(constrained.grammar))
    every = {
        name: [(len(t) - 1) / s for t, s in results if len(t) > 1] for name, results in runs.items()
    }
    rates = {name: max(values) for name, values in every.items()}
    reference = runs["engine"][0][0]
    labels = {
        "stock": "llama_cpp.Llama (stock)",
        "engine": "toolmend-engine",
        "grammar": "toolmend-engine, json_schema",
    }
    rows = []
    for name in ("stock", "engine", "grammar"):
        tokens = runs[name][0][0]
        rows.append([
            labels[name], str(rounds), str(len(tokens)), f"{rates[name]:.1f}",
            f"{statistics.median(every[name]):.1f}", f"{rates[name] / rates['stock']:.2f}",
            "yes" if tokens == reference else "no",
        ])  # fmt: skip
    model.close()
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


@contextmanager
def _serving(server: ThreadingHTTPServer) -> Iterator[tuple[str, int]]:
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield str(host), int(port)
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


class _NagleHandler(EngineHandler):
    """The server as it was before TCP_NODELAY, for the reference row."""

    disable_nagle_algorithm = False


def _post(connection: http.client.HTTPConnection, body: bytes) -> float:
    start = time.perf_counter()
    connection.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
    response = connection.getresponse()
    response.read()
    elapsed = time.perf_counter() - start
    if response.status != 200:
        raise RuntimeError(f"the request failed with {response.status}")
    return elapsed


def _latency(n: int) -> tuple[list[list[str]], list[list[str]]]:
    model = LocalModel(default_model_path())
    engine = ChatEngine(model)
    body = json.dumps(
        {
            "model": engine.name,
            "messages": [{"role": "user", "content": "Say hi."}],
            "max_tokens": 1,
        }
    ).encode()
    nagle = make_server(engine, port=0)
    nagle.RequestHandlerClass = _NagleHandler
    with (
        _serving(make_server(engine, port=0)) as direct,
        _serving(make_proxy(f"http://{direct[0]}:{direct[1]}/v1", port=0)) as proxy,
        _serving(nagle) as before,
    ):
        kept = {
            name: http.client.HTTPConnection(*address)
            for name, address in (("direct", direct), ("proxy", proxy), ("nagle", before))
        }

        def fresh(address: tuple[str, int]) -> Callable[[], float]:
            def run() -> float:
                connection = http.client.HTTPConnection(*address)
                try:
                    return _post(connection, body)
                finally:
                    connection.close()

            return run

        modes: dict[tuple[str, str], Callable[[], float]] = {
            ("direct", "fresh"): fresh(direct),
            ("direct", "keep-alive"): lambda: _post(kept["direct"], body),
            ("proxy", "fresh"): fresh(proxy),
            ("proxy", "keep-alive"): lambda: _post(kept["proxy"], body),
            ("direct, Nagle on", "fresh"): fresh(before),
            ("direct, Nagle on", "keep-alive"): lambda: _post(kept["nagle"], body),
        }
        for run in modes.values():
            for _ in range(5):
                run()
        times: dict[tuple[str, str], list[float]] = {mode: [] for mode in modes}
        order = random.Random(0)
        for phase in (
            [m for m in modes if "Nagle" not in m[0]],
            [m for m in modes if "Nagle" in m[0]],
        ):
            for _ in range(n):
                for mode in order.sample(phase, len(phase)):
                    times[mode].append(modes[mode]())
        for connection in kept.values():
            connection.close()
    model.close()
    median = {mode: 1000 * statistics.median(t) for mode, t in times.items()}
    rows = [
        [path, connection, str(len(t)), f"{median[(path, connection)]:.2f}",
         f"{1000 * statistics.quantiles(t, n=10)[-1]:.2f}"]
        for (path, connection), t in times.items()
    ]  # fmt: skip
    ratio = median[("direct", "keep-alive")] / median[("direct", "fresh")]
    overhead = median[("proxy", "keep-alive")] - median[("direct", "keep-alive")]
    before = median[("direct, Nagle on", "keep-alive")] / median[("direct, Nagle on", "fresh")]
    checks = [
        ["keep-alive / fresh (serve)", f"{ratio:.2f}", "<= 1.0"],
        ["proxy overhead ms (keep-alive)", f"{overhead:.2f}", "<= 2"],
        ["keep-alive / fresh, Nagle on", f"{before:.2f}", "(before)"],
    ]
    return rows, checks


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
    parser.add_argument("--rounds", type=int, default=7, help="rounds of the stock comparison (7)")
    parser.add_argument(
        "--stock-only", action="store_true", help="only the comparison with the stock Llama"
    )
    parser.add_argument(
        "--latency-only", action="store_true", help="only the HTTP latency measurement"
    )
    parser.add_argument(
        "--latency-requests", type=int, default=200, help="requests per latency mode (200)"
    )
    args = parser.parse_args()
    if args.stock_only:
        print(_table(STOCK_HEADER, decode_vs_stock(64, args.rounds)))
        return
    if not args.latency_only:
        _throughput_and_eval(args)
        print()
    rows, checks = _latency(args.latency_requests)
    print(_table(["path", "connection", "requests", "median ms", "p90 ms"], rows))
    print()
    print(_table(["check", "value", "target"], checks))


STOCK_HEADER = [
    "decoder", "rounds", "gen tok", "best tok/s", "median tok/s", "best vs stock", "same tokens",
]  # fmt: skip


def _throughput_and_eval(args: argparse.Namespace) -> None:
    stock_rows = decode_vs_stock(64, args.rounds)
    header = [
        "set", "layer", "requests", "prompt tok", "gen tok", "to 1st tok s", "decode tok/s",
        "vs off", "layer+render ms",
    ]  # fmt: skip
    print(_table(header, _throughput(args.requests, args.max_tokens)))
    print()
    print(_table(STOCK_HEADER, stock_rows))
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
