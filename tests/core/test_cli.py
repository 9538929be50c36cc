"""The ``toolmend`` CLI contract: exact JSON out, no tracebacks, exit codes."""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import sys

import pytest

from toolmend.cli import CLASSIFY_HELP, main


def run(argv: list[str], stdin: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(argv, io.StringIO(stdin), out, err)
    return code, out.getvalue(), err.getvalue()


def test_classify_lines_in_order_json_and_plain_text_and_unreadable_lines() -> None:
    lines = [
        {"content": "Error: HTTP Error 429: Too Many Requests"},
        {"content": "all fine"},
        "{not json",
        {"content": [{"type": "text", "text": "denied"}], "is_error": True},
        {"content": "Error executing tool x: boom", "status": "error", "name": "x"},
        "[1, 2]",
        {"content": 5},
        {"content": "Command: ls\nExit Code: 1", "client": "QwenCode/0.0.9"},
        {"content": "Permission denied", "status": "success"},
        "Error: HTTP Error 503: Service Unavailable",
        "",
        "\udcff not UTF-8",
    ]
    text = "\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n"
    code, out, err = run(["classify"], text)
    assert code == 1
    rows = [json.loads(line) for line in out.splitlines()]
    clean = {"failed": False, "kind": None, "rule": None}
    none = {"basis": "none", "span": None}
    assert rows == [
        {
            "failed": True,
            "kind": "transient",
            "rule": "generic",
            "evidence": {"basis": "paper", "span": "Too Many Requests"},
            "signature": "Error: HTTP Error 429: Too Many Requests",
        },
        clean,
        {
            **clean,
            "error": "invalid JSON: Expecting property name enclosed in double quotes: "
            "line 1 column 2 (char 1)",
        },
        {
            "failed": True,
            "kind": "ambiguous",
            "rule": "is_error",
            "evidence": none,
            "signature": "denied",
        },
        {
            "failed": True,
            "kind": "ambiguous",
            "rule": "status",
            "evidence": none,
            "signature": "Error executing tool x: boom",
        },
        clean,
        {**clean, "error": "content must be a string or a list of text parts"},
        {
            "failed": True,
            "kind": "ambiguous",
            "rule": "qwen-exit",
            "evidence": none,
            "signature": "Command: ls Exit Code: 1",
        },
        clean,
        {
            "failed": True,
            "kind": "transient",
            "rule": "generic",
            "evidence": {"basis": "paper", "span": "Service Unavailable"},
            "signature": "Error: HTTP Error 503: Service Unavailable",
        },
        {**clean, "error": "not UTF-8 text"},
    ]
    assert err.splitlines() == [
        "toolmend classify: line 3: invalid JSON: Expecting property name enclosed in double "
        "quotes: line 1 column 2 (char 1)",
        "toolmend classify: line 7: content must be a string or a list of text parts",
        "toolmend classify: line 12: not UTF-8 text",
    ]


def test_classify_reads_plain_text_from_the_shell_and_exits_0() -> None:
    """The acceptance line: a plain-text error piped in gets a transient verdict."""
    shell = shutil.which("sh")
    assert shell is not None
    done = subprocess.run(
        [shell, "-c", f"printf 'Error: HTTP Error 503: Service Unavailable\\n\\377\\n' "
         f"| {sys.executable} -m toolmend.cli classify"],
        capture_output=True,
        text=True,
        check=False,
    )  # fmt: skip
    assert done.stdout.splitlines() == [
        '{"failed": true, "kind": "transient", "rule": "generic", '
        '"evidence": {"basis": "paper", "span": "Service Unavailable"}, '
        '"signature": "Error: HTTP Error 503: Service Unavailable"}',
        '{"failed": false, "kind": null, "rule": null, "error": "not UTF-8 text"}',
    ]
    assert (done.returncode, done.stderr) == (1, "toolmend classify: line 2: not UTF-8 text\n")


def test_classify_help_names_the_fields_once() -> None:
    help_text = subprocess.run(
        [sys.executable, "-m", "toolmend.cli", "classify", "--help"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    usage = "usage: toolmend classify [-h] [--rules RULES] [--precision {balanced,strict}]"
    assert help_text == usage + "\n\n" + CLASSIFY_HELP + (
        "\noptions:\n  -h, --help            show this help message and exit\n"
        "  --rules RULES         a JSON file of user or learned rules\n"
        "  --precision {balanced,strict}\n"
        "                        strict: only flags, envelopes, codes, statuses,\n"
        "                        argument readers and rules decide a kind (default: the\n"
        "                        rules file's, else balanced)\n"
    )
    fields = ("content", "is_error", "status", "tool", "client", "arguments", "schema")
    for field in (*fields, "failed", "kind", "rule", "signature"):
        assert len(re.findall(rf"^  {field} ", help_text, re.M)) == 1
    assert '"basis"' in help_text
    assert "printf 'Error: HTTP Error 503: Service Unavailable\\n' | toolmend classify" in help_text


def test_rewrite_openai_c3() -> None:
    body = {
        "messages": [
            {"role": "user", "content": "Book room B2"},
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": "1",
                        "type": "function",
                        "function": {"name": "room_status", "arguments": '{"room":"B2"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "1", "content": "Error: 503 Service Unavailable"},
        ]
    }
    code, out, _ = run(["rewrite", "--form", "c3"], json.dumps(body))
    assert code == 0
    doc = json.loads(out)
    assert doc["messages"][:3] == body["messages"]
    assert doc["messages"][3] == {
        "role": "user",
        "content": "Note from the tool runtime: the last attempt called room_status with `room=B2` "
        "and it failed with: `Error: 503 Service Unavailable`\n\nThis is a temporary failure. "
        "Retrying the same call is expected to succeed.",
    }
    assert doc["report"]["changed"] is True
    assert doc["report"]["form"] == "c3"
    assert [(d["index"], d["kind"], d["rule"]) for d in doc["report"]["detections"]] == [
        (2, "transient", "generic")
    ]


def test_rewrite_responses_uses_input_key() -> None:
    body = {
        "input": [
            {"role": "user", "content": "q"},
            {"type": "function_call", "call_id": "a", "name": "f", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "a", "output": "Error: Forbidden"},
        ]
    }
    code, out, _ = run(["rewrite", "--form", "c4", "--format", "responses"], json.dumps(body))
    assert code == 0
    doc = json.loads(out)
    assert doc["input"] == [
        {"role": "user", "content": "q"},
        {
            "role": "user",
            "content": "Note from the tool runtime: the last attempt called f with no arguments "
            "and it failed "
            "with: `Error: Forbidden`\n\nThis cannot be fixed by retrying or by changing the "
            "arguments. Tell the user what happened.",
        },
    ]


@pytest.mark.parametrize("stdin", ["{not json", ""])
def test_rewrite_invalid_json_is_one_line_on_stderr_exit_2(stdin: str) -> None:
    code, out, err = run(["rewrite", "--form", "c3"], stdin)
    assert code == 2
    assert out == ""
    assert err.startswith("toolmend rewrite: invalid JSON on stdin: ")
    assert err.count("\n") == 1


def test_rewrite_missing_key_exit_2() -> None:
    code, _, err = run(["rewrite", "--form", "c1", "--format", "responses"], '{"messages": []}')
    assert code == 2
    assert err == 'toolmend rewrite: expected a JSON object with "input"\n'


TRACE = (
    'Traceback (most recent call last):\n  File "a.py"\n'
    "PermissionError: [Errno 13] Permission denied"
)


def test_console_script_end_to_end() -> None:
    exe = shutil.which("toolmend") or str(
        __import__("pathlib").Path(sys.executable).with_name("toolmend")
    )
    proc = subprocess.run(
        [exe, "classify"],
        input=json.dumps({"content": TRACE}) + "\nbroken\n",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0
    assert proc.stderr == ""
    assert (
        proc.stdout.splitlines()[0]
        == '{"failed": true, "kind": "unrecoverable", "rule": "generic", '
        '"evidence": {"basis": "word", "span": "PermissionError"}, "signature": '
        '"Traceback (most recent call last): File \\"<v>\\" PermissionError: [Errno 13] '
        'Permission denied"}'
    )
    assert json.loads(proc.stdout.splitlines()[1])["failed"] is False
