"""``toolmend contracts mine|check``: contracts from a JSONL of calls, and checks against them.

Each input line is ``{"tool": str, "arguments": {...}, "result": <JSON value or
string>}``.  A malformed line never stops a run: ``check`` answers it with an
``error`` field in its output line, ``mine`` names it on stderr; both exit 1
when any line was malformed, 2 on a usage error, 0 otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, NoReturn, TextIO

from ._check import check
from ._contract import Contracts
from ._mine import Miner, MiningOptions
from ._values import json_text

__all__ = ["main"]

USAGE = """\
usage: toolmend contracts mine [--min-support N] [--substitutes FILE] < calls.jsonl > contracts.json
       toolmend contracts check --contracts FILE < calls.jsonl
"""


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _UsageError(message)


@dataclass(frozen=True, slots=True)
class _Call:
    tool: str
    arguments: Any
    result: Any
    is_error: bool | None


def _calls(stdin: TextIO) -> Iterator[tuple[int, _Call | str]]:
    """Each non-blank line as a call, or as the reason it is not one."""
    for number, line in enumerate(stdin, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except (ValueError, RecursionError) as exc:
            yield number, f"line {number}: not JSON: {exc}"
            continue
        if not isinstance(data, Mapping):
            yield number, f"line {number}: expected a JSON object"
            continue
        tool = data.get("tool")
        if not isinstance(tool, str) or not tool:
            yield number, f"line {number}: 'tool' must be a non-empty string"
            continue
        if "result" not in data:
            yield number, f"line {number}: 'result' is missing"
            continue
        arguments = data.get("arguments", {})
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except (ValueError, RecursionError):
                arguments = False
        if arguments is not None and not isinstance(arguments, Mapping):
            yield number, f"line {number}: 'arguments' must be an object"
            continue
        is_error = data.get("is_error")
        yield number, _Call(tool, arguments or {}, data["result"], is_error is True)


def _parser() -> _Parser:
    parser = _Parser(prog="toolmend contracts", add_help=False)
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    mine = sub.add_parser("mine", add_help=False)
    mine.add_argument("--min-support", type=int, default=MiningOptions().min_support)
    mine.add_argument("--substitutes", default=None)
    checker = sub.add_parser("check", add_help=False)
    checker.add_argument("--contracts", required=True)
    return parser


def _mine(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    substitutes: dict[str, list[str]] = {}
    if args.substitutes:
        with open(args.substitutes, encoding="utf-8") as handle:
            loaded = json.load(handle)
        if not isinstance(loaded, Mapping):
            raise _UsageError("--substitutes must hold a JSON object of tool -> [tools]")
        substitutes = {str(k): list(v) for k, v in loaded.items()}
    if args.min_support < 1:
        raise _UsageError("--min-support must be at least 1")
    default = MiningOptions()
    options = MiningOptions(
        min_support=args.min_support,
        category_support=max(args.min_support, default.category_support),
    )
    miner = Miner(options)
    malformed = 0
    for _, item in _calls(stdin):
        if isinstance(item, str):
            malformed += 1
            stderr.write(json_text({"error": item}) + "\n")
            continue
        miner.add(item.tool, item.arguments, item.result, is_error=item.is_error)
    contracts = miner.contracts()
    if substitutes:
        contracts = contracts.with_substitutes(substitutes)
    stdout.write(contracts.dumps())
    return 1 if malformed else 0


def _check(args: argparse.Namespace, stdin: TextIO, stdout: TextIO) -> int:
    contracts = Contracts.load(args.contracts)
    malformed = 0
    for _, item in _calls(stdin):
        if isinstance(item, str):
            malformed += 1
            stdout.write(json_text({"error": item}) + "\n")
            continue
        found = check(contracts, item.tool, item.arguments, item.result)
        stdout.write(json_text({"violations": [v.to_dict() for v in found]}) + "\n")
    return 1 if malformed else 0


def main(argv: list[str], stdin: TextIO, stdout: TextIO, stderr: TextIO | None = None) -> int:
    """Run ``toolmend contracts <argv>``; returns the exit code and never raises."""
    err = stderr if stderr is not None else sys.stderr
    if not argv or argv[0] in ("-h", "--help", "help"):
        (stdout if argv else err).write(USAGE)
        return 0 if argv else 2
    try:
        args = _parser().parse_args(argv)
        if args.command == "mine":
            return _mine(args, stdin, stdout, err)
        return _check(args, stdin, stdout)
    except _UsageError as exc:
        err.write(f"toolmend contracts: {exc}\n{USAGE}")
        return 2
    except (OSError, ValueError) as exc:
        err.write(f"toolmend contracts: {exc}\n")
        return 2
    except Exception as exc:
        err.write(f"toolmend contracts: internal error: {exc!r}\n")
        return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:], sys.stdin, sys.stdout, sys.stderr))
