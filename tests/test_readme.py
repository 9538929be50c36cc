"""Every ```python block in README.md runs as written (offline)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def test_readme_has_python_blocks() -> None:
    assert len(BLOCKS) >= 1


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_block_runs(index: int, capsys: pytest.CaptureFixture[str]) -> None:
    code = compile(BLOCKS[index], f"README.md block {index}", "exec")
    exec(code, {"__name__": f"readme_block_{index}"})
    assert capsys.readouterr().out
