"""Error signatures, outcomes, ``toolmend learn``, learned rules and the precision dial."""

from __future__ import annotations

import io
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from toolmend import Kind, Rules, classify_result, load_rules
from toolmend.cli import main
from toolmend.integrations import (
    CallRecord,
    error_signature,
    follow_ups,
    learn,
    read_outcomes,
)
from tools import split

# -- signatures ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("texts", "signature"),
    [
        (
            ['relation "orders_2024" does not exist', 'relation "users_v2" does not exist'],
            'relation "<v>" does not exist',
        ),
        (
            [
                "ENOENT: no such file or directory, open /srv/data/a.csv",
                "ENOENT: no such file or directory, open /home/ann/notes/b.txt",
            ],
            "ENOENT: no such file or directory, open <path>",
        ),
        (
            [
                "Failed to fetch robots.txt https://example.invalid/robots.txt due to a "
                "connection issue",
                "Failed to fetch robots.txt http://10.0.0.7:8080/robots.txt due to a "
                "connection issue",
            ],
            "Failed to fetch robots.txt <url> due to a connection issue",
        ),
        (
            [
                "timeout after 30s at 2026-12-01T10:00:00Z request id req_8f3a2c9d1e",
                "timeout after 2.5s at 2026-11-30T23:59:59+02:00 request id req_00aa11bb22",
            ],
            "timeout after <n>s at <time> request id <id>",
        ),
        (
            ["no account for alice@example.com", "no account for bob.smith@corp.example.org"],
            "no account for <email>",
        ),
        (
            [
                '{"error": {"code": 429, "message": "Rate limit for org-abc123XYZ, retry in 20s",'
                ' "type": "rate_limit_exceeded"}}',
                '{"error": {"type": "rate_limit_exceeded", "code": 429, "message": "Rate limit'
                ' for org-zz99yy88XX, retry in 7s"}}',
            ],
            '{"error": {"code": 429, "message": "Rate limit for <id>, retry in <n>s", "type":'
            ' "rate_limit_exceeded"}}',
        ),
        (
            ['{"reason": "QUOTA", "request": "r-1"}', '{"request": "r-77", "reason": "QUOTA"}'],
            '{"reason": "QUOTA", "request": "<v>"}',
        ),
    ],
)
def test_one_error_with_other_specifics_has_one_signature(texts: list[str], signature: str) -> None:
    assert [error_signature(t) for t in texts] == [signature] * len(texts)


@pytest.mark.parametrize(
    "pair",
    [
        ("Request failed with status code 503", "Request failed with status code 404"),
        ("HTTP/1.1 429 Too Many Requests", "HTTP/1.1 500 Too Many Requests"),
        ("MCP error -32602: Invalid params", "MCP error -32601: Invalid params"),
        ("[Errno 13] Permission denied: '/x'", "[Errno 2] Permission denied: '/x'"),
        ("ORA-00942: table or view does not exist", "ORA-00904: table or view does not exist"),
        (
            "The server responded with: {'ok': False, 'error': 'invalid_auth'}",
            "The server responded with: {'ok': False, 'error': 'not_authed'}",
        ),
        (
            "Client error '400 Bad Request' for url 'http://x'",
            "Client error '401 Unauthorized' for url 'http://x'",
        ),
        ("x" * 5000 + "a", "x" * 5000 + "b"),
    ],
)
def test_codes_and_statuses_keep_errors_apart(pair: tuple[str, str]) -> None:
    first, second = (error_signature(t) for t in pair)
    assert first != second


def test_a_long_template_is_cut_and_hashed() -> None:
    signature = error_signature("word " * 100)
    assert len(signature) == 160 + 9
    assert signature[:160] == ("word " * 32)[:160]
    assert signature[160] == "#"


@pytest.mark.parametrize("value", ["[" * 5000 + "]" * 5000, "\x00\xff" * 10, "", "{" * 70000])
def test_a_signature_never_raises(value: str) -> None:
    assert isinstance(error_signature(value), str)


def test_the_real_world_test_split_rarely_merges_errors_that_differ() -> None:
    """Documented rate: on the test split's 2,073 failures (1,941 signatures), 52
    signatures join rows of different texts; 4 of them (0.21%) join rows whose labels
    differ, each one error read two ways (``KeyError: 'c'`` fixable, ``KeyError:
    'email'`` ambiguous; a Google Maps DNS failure labelled by its call's bad
    ``mode``), never two different errors."""
    rows = [r for r in split.split_rows("test") if r["label"] != "clean"]
    by: defaultdict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        content = row["content"]
        by[error_signature(content if isinstance(content, str) else str(content))].append(row)
    merged = {s: rs for s, rs in by.items() if len({str(r["content"]) for r in rs}) > 1}
    conflicting = sorted(s for s, rs in merged.items() if len({r["label"] for r in rs}) > 1)
    assert (len(rows), len(by), len(merged)) == (2073, 1941, 52)
    assert conflicting == [
        "Error: request to <url> failed, reason: getaddrinfo ENOTFOUND maps.googleapis.com",
        "KeyError: '<v>'",
        "Requested tokens (<n>) exceed context window of <n>",
        "gzip: stdin: not in gzip format tar: Child returned status 1 tar: Error is not "
        "recoverable: exiting now Exit code: 2",
    ]


# -- the verdict, the CLI ------------------------------------------------------------------


def test_the_verdict_carries_the_signature_when_asked() -> None:
    text = 'psycopg.errors.UndefinedTable: relation "orders_7" does not exist'
    assert classify_result(text, is_error=True).signature is None
    verdict = classify_result(text, is_error=True, signature=True)
    assert verdict.signature == 'psycopg.errors.UndefinedTable: relation "<v>" does not exist'
    assert classify_result("42 rows", signature=True).signature is None  # clean: no template


def _cli(args: list[str], stdin: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(args, io.StringIO(stdin), out, err)
    return code, out.getvalue(), err.getvalue()


def test_classify_prints_the_signature_and_honours_precision() -> None:
    lines = "\n".join(
        json.dumps(m)
        for m in (
            {"content": "Error: HTTP Error 503: Service Unavailable"},
            {"content": "Something went wrong: permission denied", "is_error": True},
        )
    )
    code, out, _ = _cli(["classify"], lines)
    assert code == 0
    assert [json.loads(line) for line in out.splitlines()] == [
        {
            "failed": True,
            "kind": "transient",
            "rule": "generic",
            "evidence": {"basis": "paper", "span": "Service Unavailable"},
            "signature": "Error: HTTP Error 503: Service Unavailable",
        },
        {
            "failed": True,
            "kind": "unrecoverable",
            "rule": "is_error",
            "evidence": {"basis": "paper", "span": "ermission denied"},
            "signature": "Something went wrong: permission denied",
        },
    ]
    code, out, _ = _cli(["classify", "--precision", "strict"], lines)
    assert [json.loads(line) for line in out.splitlines()] == [
        {
            "failed": True,
            "kind": "transient",
            "rule": "generic",
            "evidence": {"basis": "http", "span": "HTTP 503"},
            "signature": "Error: HTTP Error 503: Service Unavailable",
        },
        {
            "failed": True,
            "kind": "ambiguous",
            "rule": "is_error",
            "evidence": {"basis": "paper", "span": "ermission denied"},
            "signature": "Something went wrong: permission denied",
        },
    ]


# -- precision ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "balanced", "strict", "basis"),
    [
        ("Error: permission denied", Kind.UNRECOVERABLE, Kind.AMBIGUOUS, "paper"),
        ("Error: HTTP 429 rate limit exceeded", Kind.TRANSIENT, Kind.TRANSIENT, "http"),
        ("ERROR 1146 (42S02): Table 'shop.orders' doesn't exist", Kind.FIXABLE, Kind.FIXABLE, None),
        ("Error: Invalid value for 'limit': must be at most 100", Kind.FIXABLE, Kind.FIXABLE, None),
        (
            '{"error": {"code": "rate_limit_exceeded", "message": "slow down"}}',
            Kind.TRANSIENT,
            Kind.TRANSIENT,
            None,
        ),
    ],
)
def test_strict_keeps_codes_statuses_and_arguments_and_drops_wording(
    text: str, balanced: Kind, strict: Kind, basis: str | None
) -> None:
    assert classify_result(text).kind is balanced
    verdict = classify_result(text, precision="strict")
    assert verdict.kind is strict
    if basis is not None:
        assert verdict.basis == basis
    assert classify_result(text, rules=Rules(precision="strict")).kind is strict


def test_an_unknown_precision_is_refused() -> None:
    with pytest.raises(ValueError, match="precision must be one of balanced, strict"):
        Rules(precision="loose")


# -- outcomes and learning ------------------------------------------------------------------


def _line(tool: str, content: str, outcome: str, **extra: Any) -> str:
    return json.dumps(
        {"tool": tool, "content": content, "is_error": True, "outcome": outcome, **extra}
    )


QUOTA = [
    _line("billing", json.dumps({"reason": "QUOTA", "request": f"r-{i}"}), "retry_succeeded")
    for i in range(3)
]


def test_three_agreeing_outcomes_make_a_rule_that_loads_and_decides(tmp_path: Path) -> None:
    lines = [*QUOTA, _line("billing", '{"reason": "QUOTA", "request": "r-9"}', "stopped")]
    code, out, err = _cli(["learn"], "\n".join(lines))
    assert code == 0
    assert json.loads(out) == {
        "rules": [
            {
                "kind": "transient",
                "tool": "billing",
                "signature": '{"reason": "QUOTA", "request": "<v>"}',
                "support": 3,
                "agreement": 1.0,
            }
        ]
    }
    assert err == "toolmend learn: 4 failures read, 1 rules, 0 signatures undecided, 0 conflicts\n"
    path = tmp_path / "learned.json"
    path.write_text(out)
    rules = load_rules(path)
    seen = '{"reason": "QUOTA", "request": "r-12345"}'
    verdict = classify_result(seen, is_error=True, tool="billing", rules=rules)
    assert (verdict.kind, verdict.basis) == (
        Kind.TRANSIENT,
        'learned:{"reason": "QUOTA", "request": "<v>"}',
    )
    # scoped to its tool, and never making a clean result a failure
    assert classify_result(seen, is_error=True, tool="other", rules=rules).kind is Kind.AMBIGUOUS
    assert not classify_result(seen, tool="billing", rules=rules).failed


def test_too_little_or_disagreeing_evidence_makes_no_guidance() -> None:
    few = [
        _line("db", f'relation "t{i}" does not exist', "changed_arguments_succeeded")
        for i in range(1)
    ]
    mixed = [
        _line("svc", "It broke", o)
        for o in ("retry_succeeded", "failed_again", "changed_arguments_succeeded", "stopped")
    ]
    observed, skipped = read_outcomes([*few, *mixed])
    learned = learn(observed)
    assert skipped == []
    assert [(r.tool, r.kind, r.signature, r.support, r.agreement) for r in learned.rules] == [
        ("svc", "ambiguous", "It broke", 3, 0.333)
    ]
    assert learned.undecided == (
        ("db", 'relation "<v>" does not exist', {"changed_arguments_succeeded": 1}),
    )
    relaxed = learn(observed, min_support=1, min_agreement=0.3)
    assert [(r.tool, r.kind) for r in relaxed.rules] == [("db", "fixable"), ("svc", "transient")]


def test_a_learned_kind_against_a_status_is_a_conflict_kept_built_in_unless_overwhelming() -> None:
    def lines(n: int) -> list[str]:
        return [
            _line("api", f"HTTP 401 Unauthorized: token tk_{i:08d}", "retry_succeeded")
            for i in range(n)
        ]

    code, out, err = _cli(["learn"], "\n".join(lines(3)))
    assert json.loads(out) == {"rules": []}
    assert err.splitlines()[0] == (
        "toolmend learn: conflict: api: 'HTTP 401 Unauthorized: token <id>': outcomes say "
        "transient (3), the built-in rules unrecoverable (http); kept built-in"
    )
    code, out, err = _cli(["learn"], "\n".join(lines(9)))
    assert code == 0
    [rule] = json.loads(out)["rules"]
    assert rule == {
        "kind": "transient",
        "tool": "api",
        "signature": "HTTP 401 Unauthorized: token <id>",
        "support": 9,
        "agreement": 1.0,
        "overrides": True,
    }
    assert err.splitlines()[0].endswith("kept learned")


def test_every_input_format_is_read() -> None:
    record = CallRecord(
        tool="db",
        failed=True,
        attempts=1,
        kind="ambiguous",
        cause='relation "a" does not exist',
        outcome="changed_arguments_succeeded",
    )
    retried = CallRecord(
        tool="web",
        failed=False,
        attempts=3,
        history=(
            {"attempt": 1, "error": "503 Service Unavailable"},
            {"attempt": 2, "error": "503 Service Unavailable"},
        ),
    )
    span = {
        "attributes": [
            {"key": "gen_ai.tool.name", "value": {"stringValue": "mail"}},
            {"key": "toolmend.error.message", "value": {"stringValue": "mailbox full: ann@x.org"}},
            {"key": "toolmend.followed_by", "value": {"stringValue": "failed_again"}},
        ]
    }
    export = {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}
    lines = [
        _line(
            "db",
            'relation "b" does not exist',
            "changed_arguments_succeeded",
            arguments={"table": "b"},
        ),
        json.dumps(record.to_dict()),
        json.dumps(retried.to_dict()),
        json.dumps(export),
        "not json",
        json.dumps({"tool": "x", "content": "boom", "outcome": "exploded"}),
        json.dumps({"tool": "x", "content": "fine", "is_error": False, "outcome": "stopped"}),
    ]
    observed, skipped = read_outcomes(lines)
    assert [(o.tool, o.signature, o.outcome) for o in observed] == [
        ("db", 'relation "<v>" does not exist', "changed_arguments_succeeded"),
        ("db", 'relation "<v>" does not exist', "changed_arguments_succeeded"),
        ("web", "503 Service Unavailable", "retry_succeeded"),
        ("web", "503 Service Unavailable", "retry_succeeded"),
        ("mail", "mailbox full: <email>", "failed_again"),
    ]
    assert skipped == [
        "line 5: not JSON (Expecting value: line 1 column 1 (char 0))",
        "line 6: unknown outcome 'exploded'",
        "line 7: no tool, error text and outcome",
    ]


def test_follow_ups_read_what_followed_each_failure() -> None:
    def failed(tool: str, args: dict[str, Any], cause: str) -> CallRecord:
        return CallRecord(
            tool=tool, failed=True, attempts=1, kind="ambiguous", cause=cause, arguments=args
        )

    def ok(tool: str, args: dict[str, Any]) -> CallRecord:
        return CallRecord(tool=tool, failed=False, attempts=1, arguments=args)

    run = [
        failed("get", {"id": 1}, "503 busy"),
        ok("get", {"id": 1}),
        failed("sql", {"t": "ordrs"}, 'relation "ordrs" does not exist'),
        ok("sql", {"t": "orders"}),
        failed("pay", {"n": 1}, "card 4242 declined"),
        failed("pay", {"n": 2}, "card 4343 declined"),
        failed("mail", {"to": "a"}, "mailbox full"),
    ]
    assert [r.outcome for r in follow_ups(run)] == [
        "retry_succeeded",
        None,
        "changed_arguments_succeeded",
        None,
        "failed_again",
        "stopped",
        "stopped",
    ]


def test_a_rules_file_loaded_with_refresh_follows_its_changes(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import os

    path = tmp_path / "learned.json"
    rule = {"kind": "transient", "tool": "billing", "signature": "quota spent"}
    path.write_text(json.dumps({"rules": []}))
    rules = load_rules(path, refresh=0.0)
    assert classify_result("quota spent", is_error=True, tool="billing", rules=rules).kind is (
        Kind.AMBIGUOUS
    )
    path.write_text(json.dumps({"rules": [rule]}))
    os.utime(path, (1, 1))
    verdict = classify_result("quota spent", is_error=True, tool="billing", rules=rules)
    assert (verdict.kind, verdict.basis) == (Kind.TRANSIENT, "learned:quota spent")
    path.write_text("{not json")
    os.utime(path, (2, 2))
    verdict = classify_result("quota spent", is_error=True, tool="billing", rules=rules)
    assert verdict.kind is Kind.TRANSIENT  # the last good rules stay
    assert "not reloaded, the last one stays" in caplog.text


def test_the_readmes_teaching_block_runs_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The root README's "Teach toolmend your tools' errors": record, learn, review, load."""
    import shlex

    from toolmend.integrations import CallRecord, observe_call, record_outcomes

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Teach toolmend your tools' errors", 1)[1]
    python = section.split("```python\n", 1)[1].split("```", 1)[0]
    block = section.split("```bash\n", 1)[1].split("```", 1)[0]
    commands = [line.split("#")[0].strip() for line in block.splitlines()]
    monkeypatch.chdir(tmp_path)
    exec(compile(python, "README teaching block", "exec"), {})
    try:
        for n in range(3):  # three runs, as an adapter records them: a quota error, then it worked
            cause = json.dumps({"reason": "QUOTA", "request": f"r-{n}"})
            observe_call(CallRecord(tool="billing", failed=True, attempts=1, cause=cause), n)
            observe_call(CallRecord(tool="billing", failed=False, attempts=1), n)
    finally:
        record_outcomes(None)
    (tmp_path / "results.jsonl").write_text(
        json.dumps(
            {
                "tool": "billing",
                "content": '{"reason": "QUOTA", "request": "r-5"}',
                "is_error": True,
            }
        )
        + "\n"
    )
    outputs = []
    for command in filter(None, commands):
        words = shlex.split(command)
        assert words[0] == "toolmend"
        stdin = ""
        if "<" in words:
            at = words.index("<")
            stdin = (tmp_path / words[at + 1]).read_text()
            words = words[:at]
        code, out, _ = _cli(words[1:], stdin)
        assert code == 0
        outputs.append(out)
    assert len(outputs) == 2
    assert json.loads(outputs[1])["kind"] == "transient"
    assert json.loads(outputs[1])["evidence"]["basis"].startswith("learned:")
    (rule,) = load_rules(tmp_path / "learned.json").rules
    assert (rule.tool, rule.kind, rule.support) == ("billing", "transient", 3)
    # the load step the block names, as Python
    line = block.split("# load: ", 1)[1].splitlines()[0]
    import toolmend

    old = toolmend.set_rules(None)
    exec(line, {"toolmend": toolmend})
    try:
        seen = '{"reason": "QUOTA", "request": "r-9"}'
        assert classify_result(seen, is_error=True, tool="billing").kind is Kind.TRANSIENT
    finally:
        toolmend.set_rules(old)
