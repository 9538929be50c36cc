"""``toolmend-engine eval`` end to end, and the other commands."""

from __future__ import annotations

import json
import math
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from engine_fakes import FakeModel, running

from toolmend_engine import ChatEngine, make_server
from toolmend_engine.cli import main

SCENARIO_FILE = Path(str(resources.files("toolmend_engine") / "data" / "scenarios.json"))
ROW_KEYS = {
    "scenario",
    "tool",
    "kind",
    "variant",
    "form",
    "prompt_sha256",
    "prompt_tokens",
    "recomputed_tokens",
    "header",
    "reply",
    "action",
    "correct",
    "log_odds",
    "turns",
    "completed",
    "futile_calls",
    "actions",
}


def _small_file(tmp_path: Path, ids: set[str]) -> Path:
    data = json.loads(SCENARIO_FILE.read_text("utf-8"))
    data["scenarios"] = [s for s in data["scenarios"] if s["id"] in ids]
    path = tmp_path / "scenarios.json"
    path.write_text(json.dumps(data), "utf-8")
    return path


def _rows(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text("utf-8").splitlines()]


@pytest.mark.engine
def test_eval_end_to_end_on_the_embedded_model_reruns_identically(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenarios = _small_file(tmp_path, {"parcel-01", "order-01"})
    args = [
        "eval",
        "--scenarios",
        str(scenarios),
        "--limit",
        "1",
        "--forms",
        "c0,c3",
        "--kinds",
        "transient,unrecoverable",
        "--turns",
        "2",
        "--situations",
        "resolved",
        "--situation-limit",
        "1",
    ]
    assert main([*args, "--out", str(tmp_path / "a")]) == 0
    captured = capsys.readouterr()
    assert main([*args, "--out", str(tmp_path / "b")]) == 0
    names = ("results.jsonl", "summary.json", "situations.jsonl", "situations.json", "table.txt")
    for name in (*names, "plot.png"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    situations = [
        json.loads(line)
        for line in (tmp_path / "a" / "situations.jsonl").read_text("utf-8").splitlines()
    ]
    assert [(r["situation"], r["scenario"], r["form"], r["on"]) for r in situations] == [
        ("resolved", "order-01", "c0", False),
        ("resolved", "order-01", "c3", False),
        ("resolved", "order-01", "c3", True),
    ]
    assert [r["header"].split("; ", 1)[1] for r in situations] == [
        "form=off; changed=false",
        "form=c3; changed=false",
        "form=c3; changed=true; collapsed=1",
    ]
    rows = _rows(tmp_path / "a")
    assert [(r["scenario"], r["kind"], r["form"]) for r in rows] == [
        (s, k, f)
        for s in ("order-01", "parcel-01")
        for k in ("transient", "unrecoverable")
        for f in ("c0", "c3")
    ]
    for row in rows:
        assert set(row) == ROW_KEYS
        assert isinstance(row["log_odds"], float)
        assert math.isfinite(row["log_odds"])
        assert row["header"].endswith(
            f"; form={'off' if row['form'] == 'c0' else 'c3'}; "
            f"changed={'false' if row['form'] == 'c0' else 'true'}"
        )
        assert row["header"].startswith(f"failed=2:{row['tool']}:{row['kind']}:generic")
        assert 1 <= row["turns"] <= 2
        assert len(row["actions"]) == row["turns"]
        assert row["correct"] == (
            row["action"] == {"transient": "repeat", "unrecoverable": "text"}[row["kind"]]
        )
    c0, c3 = rows[0], rows[1]
    assert c3["recomputed_tokens"] > c0["recomputed_tokens"] > 0
    assert c3["prompt_tokens"] > c0["prompt_tokens"]
    summary = json.loads((tmp_path / "a" / "summary.json").read_text("utf-8"))
    assert [(s["form"], s["kind"], s["n"]) for s in summary] == [
        ("c0", "transient", 2),
        ("c3", "transient", 2),
        ("c0", "unrecoverable", 2),
        ("c3", "unrecoverable", 2),
    ]
    table = (tmp_path / "a" / "table.txt").read_text("utf-8")
    assert captured.out == table
    assert table.split("\n\n")[1].splitlines()[0].split() == [
        "situation",
        "form",
        "feature",
        "n",
        "correct",
        "log-odds",
        "calls",
        "exact-rep",
        "canon-rep",
        "recomputed",
    ]
    assert table.splitlines()[0].split() == [
        "form",
        "kind",
        "n",
        "correct",
        "log-odds",
        "completed",
        "futile",
        "recomputed",
    ]
    assert "eval SmolLM2-135M-Instruct.Q4_1 [" in captured.err
    assert (tmp_path / "a" / "plot.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_eval_against_a_server_by_base_url(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = FakeModel("I cannot look that up.")
    with running(make_server(ChatEngine(fake), port=0)) as url:
        code = main(
            [
                "eval",
                "--base-url",
                url + "/v1",
                "--model-name",
                "fake-model",
                "--limit",
                "1",
                "--forms",
                "c0,c3",
                "--kinds",
                "fixable",
                "--situations",
                "none",
                "--out",
                str(tmp_path),
            ]
        )
    assert code == 0
    assert not (tmp_path / "situations.jsonl").exists()
    rows = _rows(tmp_path)
    assert len(rows) == 12
    assert {r["action"] for r in rows} == {"text"}
    assert {r["recomputed_tokens"] for r in rows} == {None}
    assert {r["log_odds"] for r in rows} == {
        round(math.log(math.exp(-0.5)) - math.log1p(-math.exp(-0.5)), 4)
    }
    assert (
        sum("Note from the tool runtime: the last attempt called" in p for p in fake.prompts) == 6
    )
    assert "fake-model" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["eval", "--base-url", "http://127.0.0.1:9"], "--base-url needs --model-name"),
        (
            ["eval", "--base-url", "http://127.0.0.1:9", "--model-name", "m", "--model", "x.gguf"],
            "give --model or --base-url, not both",
        ),
    ],
)
def test_eval_usage_errors(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(args) == 2
    assert message in capsys.readouterr().err


def test_unknown_form_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["eval", "--forms", "c0,c9"])
    assert info.value.code == 2
    assert "tool_errors must be one of off, c0, c1, c2, c3, c4; got 'c9'" in capsys.readouterr().err


def test_unreachable_server_rows_record_the_error(tmp_path: Path) -> None:
    code = main(
        [
            "eval",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--model-name",
            "m",
            "--limit",
            "1",
            "--forms",
            "c0",
            "--kinds",
            "transient",
            "--out",
            str(tmp_path),
        ]
    )
    assert code == 1
    rows = _rows(tmp_path)
    assert len(rows) == 6
    assert all(r["error"].startswith("http://127.0.0.1:9/v1/chat/completions: ") for r in rows)


@pytest.mark.engine
def test_render_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    request = tmp_path / "request.json"
    request.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"}]}), "utf-8")
    assert main(["render", str(request)]) == 0
    captured = capsys.readouterr()
    assert captured.out == (
        "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, "
        "trained by Hugging Face<|im_end|>\n"
        "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
    )
    assert "X-Tool-Errors: failed=none; form=off; changed=false" in captured.err
    request.write_text(json.dumps({"input": "hi"}), "utf-8")
    assert main(["render", "--responses", str(request)]) == 0
    assert capsys.readouterr().out == captured.out
    assert main(["info"]) == 0
    assert "tools rendered with: the fallback (<tool_call> in text)" in capsys.readouterr().out
