"""``toolmend`` command line: classify tool results, rewrite requests, learn, mine contracts.

The output formats are a stable contract that other tooling parses: one JSON
line per input line for ``classify`` (its fields are named once, in
``CLASSIFY_HELP``, as :class:`toolmend.Verdict` names them), one JSON document for
``rewrite`` and ``learn``.  ``classify`` adds ``evidence`` (``basis``, the
classification rule, and ``span``, the text or code that decided) and
``signature`` (the error's template) to a failed result.  ``--rules FILE`` (both
commands) loads user or learned rules; ``--precision strict`` lets only flags,
envelopes, codes, statuses, argument readers and rules decide a kind.  ``learn``
turns outcome records into a rules file for review, from files, standard
input or an outcome store (``--store URL``).
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

from .classify._detect import classify_result
from .classify._learn import MIN_AGREEMENT, MIN_SUPPORT, learn, read_outcomes
from .classify._rules import PRECISIONS, Rules, load_rules
from .deliver._context import add_context_options, context_from_options
from .deliver._forms import rewrite

__all__ = ["main"]


CLASSIFY_HELP = """\
Reads one tool result per line from stdin and writes one JSON line per result.

A line that starts with "{" is a JSON object (JSON Lines) with these fields:
  content   the tool's output: a string, or a list of text parts (required)
  is_error  the protocol's error flag (MCP isError, Anthropic is_error), true/false
  status    the framework's status ("error", "success"; LangChain's ToolMessage)
  tool      the tool's name (also read as "name")
  client    the User-Agent of the agent whose rules apply, e.g. "QwenCode/0.0.9"
  arguments the call's arguments (an object): an argument the tool could never
            accept (a URL it cannot fetch, a value outside the schema) is evidence
  schema    the tool's input schema (JSON Schema), read with the arguments
Any other line is plain text: the whole line is the content, with no other field.

Each output line has the fields of a Verdict:
  failed    whether the result is a failure
  kind      transient, fixable, unrecoverable or ambiguous (null when not failed)
  rule      which detection rule judged it a failure: "is_error", "status", "generic",
            "envelope", an agent's rule such as "qwen-exit" (null when not failed)
  evidence  when failed: "basis", the classification rule that chose the kind
            ("paper", "word", "code:<system>", "http", "envelope/...", "none"), and
            "span", the text or code that decided (null when nothing did)
  signature when failed: the error's template, its specifics masked ("<v>", "<n>")

A line that cannot be read (a "{" line that is not a JSON object, content that is
not text, bytes that are not UTF-8) gets {"failed": false, "kind": null, "rule":
null, "error": "..."}, a message naming its line number on stderr, and exit status 1.

Example:
  printf 'Error: HTTP Error 503: Service Unavailable\\n' | toolmend classify
  {"failed": true, "kind": "transient", "rule": "generic",
   "evidence": {"basis": "paper", "span": "Service Unavailable"},
   "signature": "Error: HTTP Error 503: Service Unavailable"}
"""


class Unreadable(ValueError):
    """A line ``classify`` cannot read at all; the message says why."""


def read_line(line: str) -> dict[str, Any]:
    """One input line as the fields ``classify`` reads (``CLASSIFY_HELP``).

    A line starting with ``{`` is a JSON object; any other is plain text.  Fields of
    the wrong type are left out (read as absent), except ``content``, which must be
    text: without it there is nothing to classify.

    Args:
        line: The line, without its newline.

    Raises:
        Unreadable: A line that is not UTF-8, a ``{`` line that is not a JSON object,
            or content that is not text.
    """
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:  # bytes that were not UTF-8, read with surrogateescape
        raise Unreadable("not UTF-8 text") from None
    if not line.lstrip().startswith("{"):
        return {"content": line}
    try:
        message = json.loads(line)
    except ValueError as exc:
        raise Unreadable(f"invalid JSON: {exc}") from None
    if not isinstance(message, Mapping):
        raise Unreadable("not a JSON object")
    content = message.get("content")
    if not isinstance(content, str | list):
        raise Unreadable("content must be a string or a list of text parts")
    tool = message.get("tool", message.get("name"))
    fields = {
        "is_error": message.get("is_error"),
        "status": message.get("status"),
        "client": message.get("client"),
        "tool": tool,
        "arguments": message.get("arguments"),
        "schema": message.get("schema"),
    }
    wanted = {
        "is_error": bool,
        "status": str,
        "client": str,
        "tool": str,
        "arguments": Mapping,
        "schema": Mapping,
    }
    read = {k: v for k, v in fields.items() if isinstance(v, wanted[k])}
    return {"content": content, **read}


def _classify_fields(
    fields: Mapping[str, Any], rules: Rules | None, precision: str | None = None
) -> dict[str, Any]:
    verdict = classify_result(
        fields["content"],
        is_error=fields.get("is_error"),
        status=fields.get("status"),
        client=fields.get("client"),
        tool=fields.get("tool"),
        rules=rules,
        precision=precision,
        signature=True,
        arguments=fields.get("arguments"),
        schema=fields.get("schema"),
    )
    out: dict[str, Any] = {
        "failed": verdict.failed,
        "kind": verdict.kind.value if verdict.kind else None,
        "rule": verdict.rule,
    }
    if verdict.failed:
        out["evidence"] = {"basis": verdict.basis or "none", "span": verdict.reason}
        out["signature"] = verdict.signature
    return out


def classify(
    stdin: TextIO,
    stdout: TextIO,
    rules: Rules | None = None,
    stderr: TextIO | None = None,
    precision: str | None = None,
) -> int:
    """Classify each line of ``stdin``; 1 when some line could not be read, else 0.

    Args:
        stdin: The lines (``CLASSIFY_HELP``).
        stdout: Where the JSON lines go.
        rules: User rules, checked before the built-in ones.
        stderr: Where an unreadable line is reported (default: ``sys.stderr``).
        precision: ``balanced`` or ``strict`` (default: the rules', else balanced).
    """
    stderr = stderr or sys.stderr
    buffer = getattr(stdin, "buffer", None)
    if buffer is not None:  # bytes that are not UTF-8 are found per line, with its number
        stdin = io.TextIOWrapper(buffer, encoding="utf-8", errors="surrogateescape")
    status = 0
    number = 0
    for line in stdin:
        number += 1
        line = line.rstrip("\r\n")
        if not line.strip():
            continue
        try:
            result = _classify_fields(read_line(line), rules, precision)
        except Unreadable as exc:
            stderr.write(f"toolmend classify: line {number}: {exc}\n")
            result = {"failed": False, "kind": None, "rule": None, "error": str(exc)}
            status = 1
        except Exception as exc:  # the contract: a result per line, never a traceback
            result = {"failed": False, "kind": None, "rule": None, "error": repr(exc)}
        stdout.write(json.dumps(result) + "\n")
        stdout.flush()
    return status


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


def _store_lines(url: str, since: float | None) -> list[str]:
    """The outcome store's lines, recorded in the last ``since`` seconds if given."""
    from .durable._outcomes import open_outcomes

    store = open_outcomes(url, setup=False)
    return list(store.lines(since=None if since is None else time.time() - since))


def _learn(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    lines: list[str] = []
    try:
        for name in args.files or ([] if args.store else ["-"]):
            if name == "-":
                lines.extend(stdin)
            else:
                with open(name, encoding="utf-8") as file:
                    lines.extend(file)
    except OSError as exc:
        stderr.write(f"toolmend learn: {exc}\n")
        return 2
    if args.store:
        try:
            lines.extend(_store_lines(args.store, args.since))
        except Exception as exc:  # any driver's error: say it, do not trace back
            stderr.write(f"toolmend learn: cannot read the store: {exc}\n")
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
    cl = sub.add_parser(
        "classify",
        help="classify tool results: plain text or JSON Lines in, JSON Lines out",
        description=CLASSIFY_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    cl.add_argument("--rules", default=None, help="a JSON file of user or learned rules")
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
    ln.add_argument(
        "files", nargs="*", help="JSON Lines files (default: standard input, unless --store)"
    )
    ln.add_argument(
        "--store",
        default=None,
        metavar="URL",
        help="also read an outcome store: sqlite:///FILE (sqlite:////ABSOLUTE/FILE) "
        "or postgresql://...",
    )
    ln.add_argument(
        "--since",
        type=float,
        default=None,
        metavar="SECONDS",
        help="with --store: only outcomes recorded in the last SECONDS seconds",
    )
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
        return classify(stdin, stdout, args.loaded_rules, stderr, args.precision)
    return _rewrite(args, stdin, stdout, stderr)


if __name__ == "__main__":
    raise SystemExit(main())
