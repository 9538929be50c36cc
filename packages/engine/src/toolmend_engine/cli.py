"""``toolmend-engine``: serve, proxy, eval, render, info.

Exit codes: 0 success, 1 runtime failure (model, upstream), 2 usage error.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toolmend import Form, Kind
from toolmend.integrations import add_context_options, context_from_options

from ._layer import FORM_CHOICES, header_value, parse_form
from .eval._scenarios import SITUATIONS, Situation
from .http._base import Limits

__all__ = ["main"]

log = logging.getLogger("toolmend.engine")

DEFAULT_LIMIT = 1
"""Scenarios per tool in a default ``eval``: 6 scenarios × 3 kinds × 5 forms = 90 conversations.

About 5 minutes on 2 shared CPU cores with the embedded model; ``--limit all``
runs the 60 scenarios (900 conversations).
"""

DEFAULT_ALIASES = ("local", "*")
"""The names ``serve`` answers to besides the file name, unless ``--model-name`` is given.

One server holds one model, so the name a request gives can only mean that model:
``local`` is the name the examples and the docs use, and ``*`` accepts the default
model names of client libraries (the Agents SDK's ``Agent()`` asks for the newest
OpenAI model, langchain-openai's ``ChatOpenAI()`` for ``gpt-3.5-turbo``), which change
with their releases, so a list of them would always be behind.  llama.cpp's own server
accepts any name for the same reason.  Naming the model (``--model-name``) turns the
check on: other names are then the provider's 404.
"""


def _form(value: str) -> Form:
    try:
        return parse_form(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _forms(value: str) -> tuple[Form, ...]:
    return tuple(_form(v) for v in value.split(",") if v.strip())


def _kinds(value: str) -> tuple[Kind, ...]:
    kinds = []
    for v in value.split(","):
        try:
            kind = Kind(v.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"unknown kind {v!r}") from None
        if kind is Kind.AMBIGUOUS:
            raise argparse.ArgumentTypeError("ambiguous errors have no correct action to score")
        kinds.append(kind)
    return tuple(kinds)


def _situations(value: str) -> tuple[Situation, ...]:
    if value.strip() == "none":
        return ()
    names = [v.strip() for v in value.split(",") if v.strip()]
    by_name = {s.name: s for s in SITUATIONS}
    unknown = [n for n in names if n not in by_name]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"situations are {', '.join(by_name)} or none; got {value!r}"
        )
    return tuple(by_name[n] for n in names)


def _positive(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value!r}")
    return n


def _seconds(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        seconds = 0.0
    if not (math.isfinite(seconds) and seconds > 0):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {value!r}")
    return seconds


def _limit_options(parser: argparse.ArgumentParser) -> None:
    """Connections and timeouts towards clients (``Limits``; the README's Limits section)."""
    d = Limits()
    parser.add_argument(
        "--max-connections",
        type=_positive,
        default=d.max_connections,
        help=f"connections served at once, a thread each; more are answered 503 "
        f"({d.max_connections})",
    )
    parser.add_argument(
        "--header-timeout",
        type=_seconds,
        default=d.header_timeout,
        help=f"seconds for a request's line and headers; also for a new connection's first "
        f"request ({d.header_timeout:g})",
    )
    parser.add_argument(
        "--body-timeout",
        type=_seconds,
        default=d.body_timeout,
        help=f"seconds for a request's whole body; 408 after ({d.body_timeout:g})",
    )
    parser.add_argument(
        "--idle-timeout",
        type=_seconds,
        default=d.idle_timeout,
        help=f"seconds a kept-alive connection may wait for its next request ({d.idle_timeout:g})",
    )
    parser.add_argument(
        "--write-timeout",
        type=_seconds,
        default=d.write_timeout,
        help=f"seconds a client may accept no byte of a response before it is cut off "
        f"({d.write_timeout:g})",
    )


def _limits(args: argparse.Namespace) -> Limits:
    return Limits(
        max_connections=args.max_connections,
        header_timeout=args.header_timeout,
        body_timeout=args.body_timeout,
        idle_timeout=args.idle_timeout,
        write_timeout=args.write_timeout,
    )


def _limit(value: str) -> int | None:
    if value == "all":
        return None
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            "--limit takes a number of scenarios per tool, or 'all'"
        ) from None
    if n < 1:
        raise argparse.ArgumentTypeError("--limit must be at least 1")
    return n


def _model_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model", type=Path, help="a GGUF file (default: the embedded SmolLM2-135M)"
    )
    parser.add_argument(
        "--threads", type=_positive, default=2, help="CPU threads, fixed for identical reruns (2)"
    )
    parser.add_argument(
        "--n-ctx", type=_positive, default=4096, help="context length in tokens (4096)"
    )


def _listen_options(parser: argparse.ArgumentParser, port: int) -> None:
    """The default form and the address of ``serve`` and ``proxy``."""
    parser.add_argument(
        "--tool-errors",
        type=_form,
        default=None,
        help=f"default form: {', '.join(FORM_CHOICES)} (off)",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    parser.add_argument("--port", type=int, default=port, help=f"port, 0 for any free one ({port})")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="toolmend-engine", description=__doc__)
    parser.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        help="log detections and requests; -vv adds llama.cpp's own loading and timing output",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="OpenAI-compatible server with the recovery layer")
    _model_options(serve)
    _listen_options(serve, 8080)
    serve.add_argument(
        "--model-name",
        action="append",
        metavar="NAME",
        help="a name requests may give for the model; repeat for aliases, the first is the "
        "one replies carry, '*' accepts any name, other names get a 404 (default: the "
        "file name, 'local' and '*', so clients' default model names work)",
    )
    _limit_options(serve)
    add_context_options(serve)

    proxy = sub.add_parser("proxy", help="the layer in front of another OpenAI-compatible server")
    proxy.add_argument("--upstream", required=True, help="base URL, e.g. http://gpu-node:8000/v1")
    _listen_options(proxy, 8081)
    proxy.add_argument(
        "--timeout", type=float, default=600.0, help="seconds to wait for the upstream (600)"
    )
    _limit_options(proxy)
    add_context_options(proxy)

    ev = sub.add_parser("eval", help="score the delivery forms on synthetic failed calls")
    _model_options(ev)
    ev.add_argument("--base-url", help="evaluate an OpenAI-compatible server instead")
    ev.add_argument("--model-name", help="the model name to send with --base-url")
    ev.add_argument("--api-key", default=os.environ.get("OPENAI_API_KEY"), help="for --base-url")
    ev.add_argument(
        "--forms",
        type=_forms,
        default=(Form.OFF, Form.C1, Form.C2, Form.C3, Form.C4),
        help=f"comma-separated delivery forms to compare, of {', '.join(FORM_CHOICES)} "
        "(off,c1,c2,c3,c4)",
    )
    ev.add_argument(
        "--kinds",
        type=_kinds,
        default=(Kind.TRANSIENT, Kind.FIXABLE, Kind.UNRECOVERABLE),
        help="comma-separated kinds of failed call to score: transient, fixable, "
        "unrecoverable (all three)",
    )
    ev.add_argument(
        "--limit",
        type=_limit,
        default=DEFAULT_LIMIT,
        help=f"scenarios per tool, or 'all' ({DEFAULT_LIMIT})",
    )
    ev.add_argument("--turns", type=_positive, default=5, help="episode length in replies (5)")
    ev.add_argument(
        "--situations",
        type=_situations,
        default=SITUATIONS,
        help="errors in context over several turns: resolved,repeated,devstep (all), or none",
    )
    ev.add_argument(
        "--situation-limit",
        type=_limit,
        default=2,
        help="scenarios per situation (the first tools'), or 'all' (2)",
    )
    ev.add_argument("--max-tokens", type=_positive, default=64, help="tokens per reply (64)")
    ev.add_argument(
        "--scenarios", type=Path, help="another scenario file (default: the shipped one)"
    )
    ev.add_argument(
        "--out", type=Path, default=Path("toolmend-eval"), help="output folder (toolmend-eval)"
    )

    render = sub.add_parser("render", help="print the prompt the model reads for a request")
    _model_options(render)
    render.add_argument("request", help="a request body as JSON: a file, or - for stdin")
    render.add_argument(
        "--anthropic", action="store_true", help="the body is an Anthropic Messages request"
    )
    render.add_argument(
        "--responses", action="store_true", help="the body is an OpenAI Responses request"
    )
    render.add_argument("--tool-errors", type=_form, default=None)
    render.add_argument(
        "--json", action="store_true", help="print prompt, tokens and report as JSON"
    )

    sub.add_parser("info", help="where the default model is and how it renders tools")
    return parser


def _load_model(args: argparse.Namespace) -> Any:
    from .inference._model import LocalModel, ModelSettings
    from .inference._modelfile import default_model_path

    path = args.model or default_model_path()
    return LocalModel(
        path, ModelSettings(n_ctx=args.n_ctx, n_threads=args.threads, verbose=args.verbose >= 2)
    )


def _serve(args: argparse.Namespace) -> int:
    from .http._server import make_server
    from .inference._service import ChatEngine

    model = _load_model(args)
    names = args.model_name or [model.name, *DEFAULT_ALIASES]
    engine = ChatEngine(
        model,
        form=args.tool_errors,
        name=names[0],
        aliases=names[1:],
        context=context_from_options(args),
    )
    server = make_server(engine, args.host, args.port, limits=_limits(args))
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print(f"warning: listening on {args.host}, reachable from other machines", file=sys.stderr)
    form = args.tool_errors.value if args.tool_errors else "off"
    print(
        f"toolmend-engine: serving {engine.name} on http://{args.host}:{server.server_port}/v1 "
        f"(tool errors: {form})",
        file=sys.stderr,
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        model.close()
    return 0


def _proxy(args: argparse.Namespace) -> int:
    from .http._proxy import make_proxy

    try:
        server = make_proxy(
            args.upstream,
            form=args.tool_errors,
            host=args.host,
            port=args.port,
            timeout=args.timeout,
            context=context_from_options(args),
            limits=_limits(args),
        )
    except ValueError as exc:
        print(f"toolmend-engine proxy: {exc}", file=sys.stderr)
        return 2
    print(
        f"toolmend-engine: proxy on http://{args.host}:{server.server_port} -> "
        f"{server.upstream.base}",
        file=sys.stderr,
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


def _eval(args: argparse.Namespace) -> int:
    from .eval._backends import Backend, LocalBackend, RemoteBackend
    from .eval._evaluate import EvalPlan, run_eval, run_situations, summarize, summarize_situations
    from .eval._results import Progress, format_situations, format_table, write_outputs
    from .eval._scenarios import load_suite

    if args.base_url and not args.model_name:
        print("toolmend-engine eval: --base-url needs --model-name", file=sys.stderr)
        return 2
    if args.base_url and args.model:
        print("toolmend-engine eval: give --model or --base-url, not both", file=sys.stderr)
        return 2
    suite = load_suite(args.scenarios)
    plan = EvalPlan(
        forms=args.forms, kinds=args.kinds, limit=args.limit, turns=args.turns,
        situations=args.situations, situation_limit=args.situation_limit,
    )  # fmt: skip
    model = None
    backend: Backend
    if args.base_url:
        backend = RemoteBackend(
            args.base_url, args.model_name, max_tokens=args.max_tokens, api_key=args.api_key
        )
    else:
        model = _load_model(args)
        backend = LocalBackend(model, max_tokens=args.max_tokens)
    situation_cases = plan.situation_cases(suite)
    groups = [("failed call", len(plan.cases(suite)), plan.turns)] + [
        (s.name, sum(1 for case in situation_cases if case[1] is s), plan.situation_turns)
        for s in plan.situations
    ]
    progress = Progress(groups, f"eval {backend.label}")
    started = time.monotonic()
    try:
        rows = run_eval(backend, suite, plan, lambda _row: progress.step("failed call"))
        situations = run_situations(
            backend, suite, plan, lambda row: progress.step(row["situation"])
        )
    finally:
        if model is not None:
            model.close()
    summary = summarize(rows)
    situation_summary = summarize_situations(situations)
    title = f"toolmend-engine eval: {backend.label}, {len(suite.select(args.limit))} scenarios"
    written = write_outputs(args.out, rows, summary, title, situations, situation_summary)
    print(format_table(summary))
    if situation_summary:
        print("\n" + format_situations(situation_summary))
    elapsed = time.monotonic() - started
    print(
        f"\n{len(rows) + len(situations)} conversations in {elapsed:.0f}s; "
        f"wrote {', '.join(str(p) for p in written)}",
        file=sys.stderr,
    )
    if "plot.png" not in {p.name for p in written}:
        print(
            "(no plot: install the eval extra, pip install 'toolmend-engine[eval]')",
            file=sys.stderr,
        )
    errors = sum(1 for r in [*rows, *situations] if "error" in r)
    if errors:
        print(
            f"{errors} conversations failed; see the error field in results.jsonl", file=sys.stderr
        )
        return 1
    return 0


def _render(args: argparse.Namespace) -> int:
    from .http._requests import BadRequest, parse_anthropic, parse_chat
    from .http._responses_request import parse_responses
    from .inference._service import ChatEngine

    raw = sys.stdin.read() if args.request == "-" else Path(args.request).read_text("utf-8")
    try:
        body = json.loads(raw)
    except ValueError as exc:
        print(f"toolmend-engine render: not JSON: {exc}", file=sys.stderr)
        return 2
    model = _load_model(args)
    try:
        engine = ChatEngine(model, form=args.tool_errors)
        if args.anthropic:
            prepared = engine.prepare_anthropic(parse_anthropic(body))
        elif args.responses:
            prepared = engine.prepare_responses(parse_responses(body))
        else:
            prepared = engine.prepare_chat(parse_chat(body))
    except BadRequest as exc:
        print(f"toolmend-engine render: {exc.message}", file=sys.stderr)
        return 2
    finally:
        model.close()
    if args.json:
        print(
            json.dumps(
                {
                    "prompt": prepared.prompt,
                    "prompt_tokens": len(prepared.tokens),
                    "prompt_sha256": prepared.digest,
                    "report": prepared.report.to_dict(),
                },
                indent=1,
                ensure_ascii=False,
            )
        )
    else:
        sys.stdout.write(prepared.prompt)
        print(
            f"\n[{len(prepared.tokens)} tokens] X-Tool-Errors: {header_value(prepared.report)}",
            file=sys.stderr,
        )
    return 0


def _info(args: argparse.Namespace) -> int:
    from .inference._modelfile import default_model_path
    from .inference._template import ChatTemplate

    try:
        path = default_model_path()
    except FileNotFoundError as exc:
        print(f"default model: {exc}")
        return 1
    print(f"default model: {path} ({path.stat().st_size / 1e6:.0f} MB)")
    args.model, args.threads, args.n_ctx = path, 2, 512
    model = _load_model(args)
    try:
        template = ChatTemplate.for_model(model.chat_template, model.bos_text, model.eos_text)
        mode = (
            "the GGUF's template" if template.native_tools else "the fallback (<tool_call> in text)"
        )
        print(f"tools rendered with: {mode}")
    finally:
        model.close()
    return 0


class _Prefixed(logging.Formatter):
    """``logger: message``, unless the message already names its source (``toolmend: ...``).

    Most of toolmend's messages start with their component so that they read well in any
    host's log; prefixing the logger's name again printed ``toolmend: toolmend: ...``.
    """

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        if text.split(":", 1)[0].startswith("toolmend") and ": " in text:
            return text
        return f"{record.name}: {text}"


def main(argv: Sequence[str] | None = None) -> int:
    """The ``toolmend-engine`` command; returns its exit status.

    Args:
        argv: The arguments (default: the process's).
    """
    args = _parser().parse_args(argv)
    handler = logging.StreamHandler()
    handler.setFormatter(_Prefixed())
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, handlers=[handler])
    if args.command in ("serve", "proxy"):
        logging.getLogger("toolmend").setLevel(logging.INFO)
    commands = {"serve": _serve, "proxy": _proxy, "eval": _eval, "render": _render, "info": _info}
    try:
        return commands[args.command](args)
    except FileNotFoundError as exc:
        print(f"toolmend-engine: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
