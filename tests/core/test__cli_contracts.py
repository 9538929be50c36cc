"""``toolmend contracts mine|check`` through ``main`` and once through a real process."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from toolmend.contracts import Contracts, mine
from toolmend.contracts._cli import main


def call(i: int) -> dict[str, Any]:
    status = ("pending", "shipped", "delivered")[i % 3]
    subtotal = 10.0 + i
    return {
        "tool": "get_order",
        "arguments": {"order_id": f"#W{i:04d}"},
        "result": {
            "order_id": f"#W{i:04d}",
            "status": status,
            "subtotal": subtotal,
            "tax": round(subtotal * 0.1, 2),
            "total": round(subtotal + round(subtotal * 0.1, 2), 2),
        },
    }


CALLS = [call(i) for i in range(40)]
JSONL = "".join(json.dumps(c) + "\n" for c in CALLS)


def run(argv: list[str], stdin: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(argv, io.StringIO(stdin), out, err)
    return code, out.getvalue(), err.getvalue()


def test_mine_writes_the_contracts_mine_would_return() -> None:
    code, out, err = run(["mine"], JSONL)
    assert (code, err) == (0, "")
    assert out == mine(CALLS).dumps()
    assert Contracts.loads(out).tools["get_order"].samples == 40


def test_mine_reports_malformed_lines_on_stderr_and_continues() -> None:
    stdin = "not json\n\n[1, 2]\n" + '{"tool": "", "result": 1}\n' + JSONL + '{"tool": "t"}\n'
    code, out, err = run(["mine"], stdin)
    assert code == 1
    assert Contracts.loads(out) == mine(CALLS)
    lines = [json.loads(line)["error"] for line in err.splitlines()]
    assert lines[0].startswith("line 1: not JSON: ")
    assert lines[1:] == [
        "line 3: expected a JSON object",
        "line 4: 'tool' must be a non-empty string",
        "line 45: 'result' is missing",
    ]


def test_mine_with_substitutes_and_min_support(tmp_path: Path) -> None:
    subs = tmp_path / "subs.json"
    subs.write_text(json.dumps({"get_order": ["get_order_history"]}), encoding="utf-8")
    code, out, _ = run(["mine", "--substitutes", str(subs), "--min-support", "50"], JSONL)
    assert code == 0
    loaded = Contracts.loads(out)
    assert loaded.substitutes == {"get_order": ("get_order_history",)}
    assert loaded.tools["get_order"].types == {}


def test_check_writes_one_line_per_input(tmp_path: Path) -> None:
    path = tmp_path / "contracts.json"
    mine(CALLS).save(path)
    bad = call(41)
    bad["result"]["status"] = "lost"
    stdin = "".join(
        [
            json.dumps(call(40)) + "\n",
            json.dumps(bad) + "\n",
            "{broken\n",
            json.dumps({"tool": "get_order", "arguments": "[]", "result": {}}) + "\n",
            json.dumps({"tool": "unknown", "arguments": {}, "result": "x"}) + "\n",
        ]
    )
    code, out, err = run(["check", "--contracts", str(path)], stdin)
    assert (code, err) == (1, "")
    lines = [json.loads(line) for line in out.splitlines()]
    assert lines[0] == {"violations": []}
    assert lines[1] == {
        "violations": [
            {
                "code": "unseen_category",
                "path": "status",
                "expected": ["delivered", "pending", "shipped"],
                "observed": "lost",
                "detail": "field status has unseen categorical value",
            }
        ]
    }
    assert lines[2]["error"].startswith("line 3: not JSON: ")
    assert lines[3:] == [{"error": "line 4: 'arguments' must be an object"}, {"violations": []}]


def test_usage_errors_exit_2_without_a_traceback(tmp_path: Path) -> None:
    assert run([], "")[0] == 2
    code, out, err = run(["check"], "")
    assert (code, out) == (2, "")
    assert err.startswith("toolmend contracts: the following arguments are required: --contracts")
    code, _, err = run(["check", "--contracts", str(tmp_path / "missing.json")], "")
    assert code == 2
    assert err.startswith("toolmend contracts: [Errno 2] No such file or directory")
    wrong = tmp_path / "wrong.json"
    wrong.write_text('{"format": "toolmend.contracts", "version": 99}', encoding="utf-8")
    code, _, err = run(["check", "--contracts", str(wrong)], "")
    assert (code, err) == (
        2,
        "toolmend contracts: unsupported contracts version 99 (this reads 1)\n",
    )
    code, _, err = run(["frobnicate"], "")
    assert code == 2
    assert err.startswith("toolmend contracts: argument command: invalid choice: 'frobnicate'")
    code, out, _ = run(["--help"], "")
    assert (code, out.startswith("usage: toolmend contracts mine")) == (0, True)


def test_mine_then_check_through_a_process(tmp_path: Path) -> None:
    module = [sys.executable, "-m", "toolmend.contracts._cli"]
    mined = subprocess.run(
        [*module, "mine"], input=JSONL, capture_output=True, text=True, check=False, timeout=60
    )
    assert (mined.returncode, mined.stderr) == (0, "")
    path = tmp_path / "contracts.json"
    path.write_text(mined.stdout, encoding="utf-8")
    bad = call(40)
    bad["result"]["total"] = -1
    checked = subprocess.run(
        [*module, "check", "--contracts", str(path)],
        input=json.dumps(bad) + "\n",
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert (checked.returncode, checked.stderr) == (0, "")
    assert [v["code"] for v in json.loads(checked.stdout)["violations"]] == [
        "nonpositive_value",
        "affine_relation_broken",
    ]
