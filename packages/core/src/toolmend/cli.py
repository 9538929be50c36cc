"""``toolmend`` command line: classify tool messages, rewrite requests, learn, mine contracts.

The output formats are a stable contract that other tooling parses: one JSON
line per input line for ``classify``, one JSON document for ``rewrite`` and
``learn``.  Fields are only ever added: ``classify`` adds ``evidence`` (the
classification rule and the span or code that decided) and ``signature`` (the
error's template, :func:`~toolmend.integrations.error_signature`) to a failed
result.  ``--rules FILE`` (both commands) loads user or learned rules;
``--precision strict`` lets only flags, envelopes, codes, statuses, argument
readers and rules decide a kind.  ``learn`` turns outcome records into a rules
file for review (see :mod:`toolmend.classify`'s ``_learn``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

from .classify._detect import classify_result
from .classify._learn import MIN_AGREEMENT, MIN_SUPPORT, learn, read_outcomes
from .classify._rules import PRECISIONS, Rules, load_rules
from .deliver._context import add_context_options, context_from_options
from .deliver._forms import rewrite

__all__ = ["main"]


def _classify_line(
    line: str, rules: Rules | None = None, precision: str | None = None
) -> dict[str, Any]:
    try:
        message = json.loads(line)
    except ValueError as exc:
        return {"failed": False, "kind": None, "rule": None, "error": f"invalid JSON: {exc}"}
    if not isinstance(message, Mapping):
        return {"failed": False, "kind": None, "rule": None, "error": "not a JSON object"}
    content = message.get("content")
    if not isinstance(content, str | list):
        return {
            "failed": False,
            "kind": None,
            "rule": None,
            "error": "content must be a string or a list of text parts",
        }
    is_error = message.get("is_error")
    status = message.get("status")
    client = message.get("client")
    tool = message.get("tool", message.get("name"))
    arguments, schema = message.get("arguments"), message.get("schema")
    verdict = classify_result(
        content,
        is_error=is_error if isinstance(is_error, bool) else None,
        status=status if isinstance(status, str) else None,
        client=client if isinstance(client, str) else None,
        tool=tool if isinstance(tool, str) else None,
        rules=rules,
        precision=precision,
        signature=True,
        arguments=arguments if isinstance(arguments, Mapping) else None,
        schema=schema if isinstance(schema, Mapping) else None,
    )
    out: dict[str, Any] = {
        "failed": verdict.failed,
        "kind": verdict.kind.value if verdict.kind else None,
        "rule": verdict.rule,
    }
    if verdict.failed:
        out["evidence"] = {"rule": verdict.basis or "none", "span": verdict.reason}
        out["signature"] = verdict.signature
    return out


def classify(
    stdin: TextIO, stdout: TextIO, rules: Rules | None = None, precision: str | None = None
) -> int:
    for line in stdin:
        if not line.strip():
            continue
        try:
            result = _classify_line(line, rules, precision)
        except Exception as exc:  # the contract: a result per line, never a traceback
            result = {"failed": False, "kind": None, "rule": None, "error": repr(exc)}
        stdout.write(json.dumps(result) + "\n")
        stdout.flush()
    return 0


def _rewrite(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    try:
        body = json.loads(stdin.read())
    except ValueError as exc:
        stderr.write(f"toolmend rewrite: invalid JSON on stdin: {exc}\n")
        return 2
    key = "input" if args.format == "responses" else "messages"
    if not isinstance(body, Mapping) or key not in body:
        stderr.write(f'toolmend rewrite: expected a JSON object with "{key}"\n')
        return 2
    result = rewrite(
        body[key],
        args.form,
        format=args.format,
        client=args.client,
        rules=args.loaded_rules,
        context=context_from_options(args),
    )
    out = {key: result.messages, "report": result.report.to_dict()}
    stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
    return 0


def _learn(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    lines: list[str] = []
    try:
        for name in args.files or ["-"]:
            if name == "-":
                lines.extend(stdin)
            else:
                with open(name, encoding="utf-8") as file:
                    lines.extend(file)
    except OSError as exc:
        stderr.write(f"toolmend learn: {exc}\n")
        return 2
    observed, skipped = read_outcomes(lines)
    learned = learn(
        observed,
        min_support=args.min_support,
        min_agreement=args.min_agreement,
        skipped=skipped,
    )
    text = json.dumps(learned.to_dict(), indent=2, ensure_ascii=False) + "\n"
    if args.output:
        with open(args.output, "w", encoding="utf-8") as file:
            file.write(text)
    else:
        stdout.write(text)
    for conflict in learned.conflicts:
        stderr.write(
            f"toolmend learn: conflict: {conflict.tool}: {conflict.signature!r}: outcomes say "
            f"{conflict.learned} ({conflict.support}), the built-in rules {conflict.built_in}; "
            f"kept {conflict.kept}\n"
        )
    for line in skipped:
        stderr.write(f"toolmend learn: skipped {line}\n")
    stderr.write(
        f"toolmend learn: {learned.read} failures read, {len(learned.rules)} rules, "
        f"{len(learned.undecided)} signatures undecided, {len(learned.conflicts)} conflicts\n"
    )
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="toolmend", description="Recover LLM agents from failed tool calls."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    cl = sub.add_parser("classify", help="classify tool messages: JSON Lines in, JSON Lines out")
    cl.add_argument("--rules", default=None, help="a JSON file of user rules")
    cl.add_argument(
        "--precision",
        default=None,
        choices=PRECISIONS,
        help="strict: only flags, envelopes, codes, statuses, argument readers and rules "
        "decide a kind (default: the rules file's, else balanced)",
    )
    rw = sub.add_parser("rewrite", help="apply a delivery form to a request body on stdin")
    rw.add_argument("--rules", default=None, help="a JSON file of user rules")
    rw.add_argument("--form", required=True, choices=["off", "c0", "c1", "c2", "c3", "c4"])
    rw.add_argument("--format", default="openai", choices=["openai", "responses", "anthropic"])
    rw.add_argument("--client", default=None, help="User-Agent that selects agent rules")
    add_context_options(rw)
    ln = sub.add_parser(
        "learn",
        help="outcome records (JSON Lines) in, a rules file for review out",
        description="Read failures and what followed them (minimal lines {tool, content, "
        "is_error, arguments, outcome}, CallRecords, or OTLP JSON spans) and write one "
        "rule per (tool, error signature) with enough agreeing outcomes.",
    )
    ln.add_argument("files", nargs="*", help="JSON Lines files (default: standard input)")
    ln.add_argument("--output", default=None, help="write the rules file here")
    ln.add_argument(
        "--min-support",
        type=int,
        default=MIN_SUPPORT,
        help=f"agreeing outcomes a signature needs (default {MIN_SUPPORT})",
    )
    ln.add_argument(
        "--min-agreement",
        type=float,
        default=MIN_AGREEMENT,
        help=f"share of a signature's outcomes that must agree (default {MIN_AGREEMENT})",
    )
    sub.add_parser("contracts", help="mine and check outcome contracts", add_help=False)
    return parser


def main(
    argv: Sequence[str] | None = None,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Entry point of the ``toolmend`` console script.

    Args:
        argv: The arguments (default: the process's).
        stdin: Where input is read (default: ``sys.stdin``).
        stdout: Where output is written (default: ``sys.stdout``).
        stderr: Where errors are written (default: ``sys.stderr``).
    """
    args_list = list(sys.argv[1:] if argv is None else argv)
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    if args_list[:1] == ["contracts"]:
        from .contracts._cli import main as contracts_main

        code: int = contracts_main(args_list[1:], stdin, stdout)
        return code
    args = _parser().parse_args(args_list)
    if args.command == "learn":
        return _learn(args, stdin, stdout, stderr)
    try:
        args.loaded_rules = load_rules(args.rules) if args.rules else None
    except (OSError, ValueError, TypeError) as exc:
        stderr.write(f"toolmend {args.command}: cannot use the rules file: {exc}\n")
        return 2
    if args.command == "classify":
        return classify(stdin, stdout, args.loaded_rules, args.precision)
    return _rewrite(args, stdin, stdout, stderr)


if __name__ == "__main__":
    raise SystemExit(main())
