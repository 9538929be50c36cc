"""Detection and classification rules, one behaviour per test (paper, appendices A-B)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolmend import Kind, Verdict, classify_result
from toolmend.classify._detect import agent_of, is_error_text
from toolmend.integrations import Classification, Source, classify_text, text_of

T, F, U, A = Kind.TRANSIENT, Kind.FIXABLE, Kind.UNRECOVERABLE, Kind.AMBIGUOUS


def verdict(content: Any, **flags: Any) -> tuple[bool, Kind | None, str | None]:
    found = classify_result(content, **flags)
    return found.failed, found.kind, found.rule


# -- text_of and agent_of ------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "text"),
    [
        ("plain", "plain"),
        ("", ""),
        (["a", "b"], "a\nb"),
        ([{"type": "text", "text": "a"}, {"type": "output_text", "text": "b"}], "a\nb"),
        ([{"type": "input_text", "text": "a"}, {"text": "b"}], "a\nb"),
        ([{"type": "image_url", "image_url": {"url": "x"}}, {"type": "text", "text": "t"}], "t"),
        ([{"type": "image_url", "image_url": {"url": "x"}}], None),
        ([], ""),
        (b"bytes", None),
        ({"text": "a dict"}, None),
        (None, None),
        (42, None),
    ],
)
def test_text_of(content: Any, text: str | None) -> None:
    assert text_of(content) == text


@pytest.mark.parametrize(
    ("client", "agent"),
    [
        ("QwenCode/0.0.14 (linux; x64)", "qwen"),
        ("codex_cli_rs/0.46.0", "codex"),
        ("Kilo-Code/4.97.0", "kilo"),
        ("opencode/0.15.8 ai-sdk", "opencode"),
        ("  opencode/1", "opencode"),
        ("claude-cli/1.0 (external, cli)", None),
        ("python-httpx/0.28", None),
        ("", None),
        (None, None),
    ],
)
def test_agent_of(client: str | None, agent: str | None) -> None:
    assert agent_of(client) == agent


# -- explicit flags (rules 1-3, 14) -------------------------------------------------------


def test_is_error_flag_wins_over_clean_text() -> None:
    assert verdict("12 C, light rain", is_error=True) == (True, A, "is_error")


def test_status_error_flag() -> None:
    assert verdict("Too Many Requests", status="error") == (True, T, "status")


def test_flag_without_readable_text_is_ambiguous() -> None:
    found = classify_result([{"type": "image"}], is_error=True)
    assert found == Verdict(True, A, "is_error", Source.FLAG)
    assert classify_result(object(), status="error") == Verdict(True, A, "status", Source.FLAG)


def test_false_flags_do_not_hide_generic_rules() -> None:
    assert verdict("Error: ECONNRESET", is_error=False) == (True, T, "generic")
    assert verdict("Error: ECONNRESET", status="success") == (True, T, "generic")


def test_flags_apply_for_agent_clients() -> None:
    mcp = '{"content":[{"type":"text","text":"Unauthorized"}],"isError":true}'
    assert verdict(mcp, client="codex_cli_rs/0.46") == (True, U, "mcp-iserror")
    assert verdict("x", is_error=True, client="codex_cli_rs/0.46") == (True, A, "is_error")


def test_flagged_command_output_gets_common_words_only() -> None:
    output = "Exit code 1\nE   ConnectionRefusedError: [Errno 111] Connection refused"
    assert verdict(output, is_error=True) == (True, A, "is_error")
    assert verdict("Connection refused", is_error=True) == (True, T, "is_error")
    assert verdict("Error: x\nConnection refused", is_error=True) == (True, T, "is_error")


def test_mcp_result_is_judged_by_its_text_parts() -> None:
    text = '{"content":[{"type":"text","text":"x"},{"type":"text","text":"Bad Gateway"}],'
    assert verdict(text + '"isError":true}') == (True, T, "mcp-iserror")
    assert verdict(text + '"isError":false}') == (False, None, None)
    assert verdict('{"isError": "true"}') == (False, None, None)


def test_cline_needs_its_exact_start_and_success_false() -> None:
    assert verdict('{"query":"q","success":false}') == (True, A, "cline")
    assert verdict('{"query":"q","success":true}') == (False, None, None)
    assert verdict(' {"query":"q","success":false}') == (False, None, None)
    assert verdict('{"query": "q", "success": false}') == (True, A, "cline")
    assert verdict('{ "query": "q", "success": false}') == (False, None, None)


def test_opencode_prefix_is_enough() -> None:
    assert verdict('{"error":{"type":"tool.execution","message":"EPERM"') == (
        True, U, "opencode",
    )  # fmt: skip
    assert verdict('{"error": {"type": "tool.execution"}}') == (True, A, "generic")


# -- agent rules (4-13) ------------------------------------------------------------------

QWEN, CODEX, KILO, OPENCODE = "QwenCode/1", "codex_cli_rs/1", "Kilo-Code/1", "opencode/1"


@pytest.mark.parametrize(
    ("client", "text", "expected"),
    [
        (QWEN, "File not found: a.py", (True, A, "qwen-notfound")),
        (QWEN, "Command: x\nExit Code: 2", (True, A, "qwen-exit")),
        (QWEN, "Command: x\nExit Code: 0\nError: EACCES", (True, U, "qwen-exit")),
        (QWEN, "Command: x\nError: (none)\nExit Code: (none)", (False, None, None)),
        (QWEN, "Command: x\nError: ETIMEDOUT\nError: (none)\nExit Code: 0", (False, None, None)),
        (QWEN, "Errors: 0", (True, A, "qwen-error")),
        (QWEN, "File a.py has not been read", (True, F, "qwen-error")),
        (QWEN, "File a.py saved", (False, None, None)),
        (QWEN, " Error: leading space", (False, None, None)),
        (CODEX, "Exit code: 3\nOutput:", (True, A, "codex-exit")),
        (CODEX, "Exit code: 0\nOutput:", (False, None, None)),
        (CODEX, "ran\nProcess exited with code -1", (True, A, "codex-exit")),
        (CODEX, "Process exited with code 0", (False, None, None)),
        (CODEX, "x\ncommand timed out after 5s", (True, A, "codex-timeout")),
        (CODEX, "apply_patch verification failed: x", (True, F, "codex-patch")),
        (CODEX, "Traceback (most recent call last):\nKeyError: 1", (False, None, None)),
        (KILO, "File not found: a", (True, A, "kilo-notfound")),
        (KILO, "Unknown: FileSystem.EROFS", (True, A, "kilo-fs")),
        (KILO, "oldString not found", (True, A, "kilo-usage")),
        (KILO, "Error: ECONNRESET", (False, None, None)),
        (OPENCODE, "x\nExited with code 1\n", (True, A, "opencode-exit")),
        (OPENCODE, "Exited with code 1\nmore", (False, None, None)),
        (OPENCODE, "Exited with code 0", (False, None, None)),
        (OPENCODE, "x\nProcess Exited with code 2", (False, None, None)),
    ],
)
def test_agent_rules(client: str, text: str, expected: tuple[Any, ...]) -> None:
    assert verdict(text, client=client) == expected


def test_agent_rules_use_common_words_only() -> None:
    assert verdict("Exit code: 1\nUnauthorized", client=CODEX) == (True, A, "codex-exit")
    assert verdict("Exit code: 1\nForbidden", client=CODEX) == (True, U, "codex-exit")


# -- generic rule (15) ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Error: x", "ERROR: x", "error: x", "Error executing tool t", "MCP error -1: x",
        "An error occurred while running the tool. Please try again.",
        "Traceback (most recent call last):\n  File", "HTTP Error 418: teapot", "HTTP 418",
        "HTTP 500", "Client error '418 x'", "Server error '599 x'", "TypeError: x",
        "ConnectionResetError(104, 'x')", "my.pkg.SomeException: x", "httpx.ReadTimeout: x",
        "socket.timeout: timed out", "requests.exceptions.Timeout: x", "Exception: x",
        "418 Client Error: x", "599 Server Error: x",
        '{"error": {"code": 1}}', '{"error":"x"}', '{ "error" : { } }', "Error code: 418",
        "Tool 't' failed after 1 attempt with X: y", "Tool 't' timed out after 5 seconds.",
        "[Errno 5] Input/output error", "<urlopen error x>",
        "HTTPSConnectionPool(host='a', port=443): x", "('Connection aborted.', x)",
        "2 validation errors for M\nx", "Unknown tool: t", "Error invoking tool 't' x",
        "f() got an unexpected keyword argument 'a'", "C.m() missing 1 required positional",
        "'a' is a required property\n\nFailed validating 'required' in schema:\n  {}",
        "ValueError", '{"jsonrpc": "2.0", "id": 1, "error": {"code": -32000}}',
        # The same error body printed as a Python dict.
        "{'error': 'x'}", "{'error': {'code': 1}}",
    ],
)  # fmt: skip
def test_generic_start_texts(text: str) -> None:
    assert is_error_text(text)
    found = classify_result("  \n" + text)
    assert (found.failed, found.rule, found.source) == (True, "generic", Source.GENERIC)


@pytest.mark.parametrize(
    "text",
    [
        "", "   ", "ok", "Errors: none", "Error handling is described below.",
        "ErrorBoundary renders", "setTimeout(() => x, 5)", "connect_timeout: 5",
        "on_error: retry", "HTTP/1.1 200 OK", "HTTP 200", "200 OK", "log\nError: x",
        '{"error": null}', '{"error": false}', '{"error": ""}', '{"error": 0}',
        '{"error": true}', '{"error": []}', '{"result": 1, "error": "x"}', "{'error': None}",
        '[{"error": "x"}]', '{"jsonrpc": "2.0", "id": 1, "result": {}}', "Exit code 1",
        "Exception", "timeout: x", "Timeout: 30s", "A TypeError: inside", "requests.Timeout",
    ],
)  # fmt: skip
def test_not_generic_start_texts(text: str) -> None:
    assert not is_error_text(text)
    assert classify_result(text) == Verdict(False)


# -- classification ------------------------------------------------------------------------


def test_priority_unrecoverable_then_transient_then_fixable() -> None:
    assert classify_text("Invalid arguments; rate limit; Forbidden") == Classification(
        U, "Forbidden"
    )
    assert classify_text("Invalid arguments; rate limit") == Classification(T, "ate limit")
    assert classify_text("Invalid arguments") == Classification(F, "Invalid arguments")
    assert classify_text("nothing known") == Classification(A, None)


def test_words_are_case_sensitive_substrings() -> None:
    assert classify_text("permission denied").kind is U
    assert classify_text("Permission denied").kind is U
    assert classify_text("PERMISSION DENIED").kind is A
    assert classify_text("APITimeoutError").kind is T


def test_only_the_first_4_kb_counts() -> None:
    assert classify_text("x" * 4090 + " Forbidden").kind is A
    assert classify_text("x" * 4080 + " Forbidden").kind is U


def test_wide_words_only_when_asked() -> None:
    assert classify_text("Unauthorized", wide=True).kind is U
    assert classify_text("Unauthorized", wide=False).kind is A
    assert classify_text("HTTP Error 503", wide=False).kind is A


def test_own_timeout_makes_the_result_ambiguous() -> None:
    for text in (
        "Command timed out; Forbidden",
        "command timeout, ECONNRESET",
        "Execution timed out: HTTP 503",
        "the command timed out. Retry in 5 s",
    ):
        assert classify_text(text).kind is A
        assert classify_text(text, wide=False).kind is A
    assert classify_text("the request timed out").kind is T


def test_http_status_decides_only_when_no_word_does() -> None:
    assert classify_text("Error code: 429 - x") == Classification(T, "HTTP 429")
    assert classify_text("Error code: 403 - rate limit hit") == Classification(T, "ate limit")
    assert classify_text('{"status": 401}') == Classification(U, "HTTP 401")
    assert classify_text("{'code': '403'}") == Classification(U, "HTTP 403")
    assert classify_text("Error code: 400 - x") == Classification(F, "HTTP 400")
    assert classify_text('502 {"error": "Server Error"}') == Classification(T, "HTTP 502")
    assert classify_text("status_code=503") == Classification(T, "HTTP 503")
    assert classify_text("HTTP/1.1 502 x") == Classification(T, "HTTP 502")
    assert classify_text("422 Client Error: x") == Classification(F, "HTTP 422")
    # A bare 400 or 422 outside an HTTP library's own wording says nothing to change.
    bare = ("{'code': '400'}", "status code 400", '422 {"message": "x"}', "returned error: 400")
    plain = ("Error code: 404", "HTTP Error 409", "line 429", "port 5000", "v1.500", "4290")
    for text in (*plain, *bare):
        assert classify_text(text) == Classification(A, None)


def test_retry_hint_is_the_last_resort() -> None:
    assert classify_text("quota full, retry after 30s") == Classification(T, "retry hint")
    assert classify_text("Retry-After: 7") == Classification(T, "retry hint")
    assert classify_text("retry after 30s", wide=False) == Classification(A, None)


def test_traceback_is_judged_by_its_exception_lines() -> None:
    frames = '  File "rate_limit.py", line 3, in fetch\n    get(timeout=5, note="Forbidden")\n'
    trace = "Traceback (most recent call last):\n" + frames
    assert classify_text(trace + "KeyError: 'x'") == Classification(A, None)
    assert classify_text(trace + "PermissionError: [Errno 13] Permission denied").kind is U
    chained = (
        trace + "ConnectionResetError: x\n\nDuring handling of the above exception, another "
        "exception occurred:\n\n" + trace + "RuntimeError: lookup failed"
    )
    assert classify_text(chained) == Classification(T, "ConnectionResetError")


def test_long_traceback_final_line_counts() -> None:
    frames = '  File "x.py", line 1, in f\n    f(note="Forbidden")\n' * 300
    trace = "Traceback (most recent call last):\n" + frames + "TimeoutError: timed out"
    assert len(trace) > 10_000
    assert classify_text(trace) == Classification(T, "TimeoutError")
    assert classify_text(trace.replace("TimeoutError: timed out", "KeyError: 1")).kind is A


def test_echoed_call_text_does_not_decide() -> None:
    assert classify_text("Error executing tool check_Forbidden: bad date").kind is A
    assert classify_text("Tool 'Forbidden' failed after 3 attempts with X: y").kind is A
    pydantic = (
        "1 validation error for M\nx\n  bad [type=t, input_value='Forbidden', input_type=str]"
    )
    assert classify_text(pydantic) == Classification(F, "validation error")
    langgraph = "Error executing tool 't' with kwargs {'q': 'Forbidden'} with error:\n boom"
    assert classify_text(langgraph).kind is A
    invoking = "Error invoking tool 't' with kwargs {'q': 'timed out'} with error:\n x: bad"
    assert classify_text(invoking) == Classification(F, "ToolInvocationError")
    schema = "5 is bad\n\nFailed validating 'type' in schema:\n  {'description': 'Forbidden'}"
    assert classify_text(schema) == Classification(F, "Failed validating '")


def test_classification_shares_frozen_instances() -> None:
    assert classify_text("Forbidden") is classify_text("Forbidden!")
    assert classify_result("Error: Forbidden") is classify_result("Error: Forbidden?")
    with pytest.raises(dataclasses.FrozenInstanceError):
        classify_result("Error: Forbidden").kind = T  # type: ignore[misc]


# -- robustness ------------------------------------------------------------------------------

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=30),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
_starts = st.sampled_from(
    ["", "Error: ", "Traceback (most recent call last):\n", '{"isError": true, "content": ',
     '{"query":', '{"error":', "Command:", "Exit code: ", "Tool 'x' failed after 1 attempt with "]
)  # fmt: skip


@given(
    content=_json | st.binary(max_size=20) | st.tuples(_starts, st.text()).map("".join),
    is_error=st.none() | st.booleans(),
    status=st.none() | st.sampled_from(["error", "success", ""]),
    client=st.none() | st.sampled_from([QWEN, CODEX, KILO, OPENCODE, "other/1", ""]),
)
def test_inspect_never_raises(content: Any, is_error: Any, status: Any, client: Any) -> None:
    found = classify_result(content, is_error=is_error, status=status, client=client)
    assert isinstance(found, Verdict)
    assert found.failed == (found.kind is not None) == (found.rule is not None)


class _Exploding(list[Any]):
    def __iter__(self) -> Any:
        raise RuntimeError("boom")


def test_inspect_survives_hostile_input(caplog: pytest.LogCaptureFixture) -> None:
    assert classify_result('{"isError": true, "content": ' + "[" * 100_000) == Verdict(False)
    assert classify_result('{"query":' + "[" * 100_000) == Verdict(False)
    assert classify_result("Error: x", client=42) == Verdict(False)  # type: ignore[arg-type]
    assert classify_result(_Exploding()) == Verdict(False)
    assert classify_result(_Exploding(), status="error") == Verdict(True, A, "status", Source.FLAG)
    assert [r.name for r in caplog.records] == ["toolmend"] * 3


@pytest.mark.parametrize(
    ("text", "failed"),
    [
        # An HTTP tool's printout: a success status line, then an error body (GraphQL).
        (
            'HTTP 200 OK\n{"errors": [{"message": "Cannot query field \\"x\\" on \\"Query\\"."}]}',
            True,
        ),
        ('HTTP/1.1 200 OK\n\n{"ok": false, "error": "ratelimited"}', True),
        ('HTTP/2 200\n{"ok": false, "error": "ratelimited"}', True),
        ('HTTP 200: {"errors": [{"message": "Field \\"y\\" is not defined"}]}', True),
        # The same line before a success body, or before text that is not JSON.
        ('HTTP 200 OK\n{"data": {"items": []}, "errors": []}', False),
        ('HTTP 200 OK\n{"error": null, "result": 1}', False),
        ("HTTP 200 OK\nerror: none", False),
    ],
)
def test_an_error_body_after_a_success_status_line(text: str, failed: bool) -> None:
    verdict = classify_result(text)
    assert verdict.failed is failed
    assert verdict.rule == ("envelope" if failed else None)
