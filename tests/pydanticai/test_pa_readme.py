"""The package README's quickstart, and the root README's, print what they say.

tests/test_readme.py runs every block too; this checks the exact output.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = ["packages/pydantic_ai/README.md", "docs/getting-started/pydantic-ai.md"]


def block(page: str, marker: str) -> str:
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / page).read_text(encoding="utf-8"), re.S)
    (found,) = [b for b in blocks if marker in b]
    return str(found)


def run(code: str, name: str) -> None:
    exec(compile(code, name, "exec"), {"__name__": "readme"})


@pytest.mark.parametrize("page", PAGES)
def test_the_quickstart_prints_what_the_readme_shows(
    page: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = block(page, "RecoveringToolset(")
    run(code, "quickstart.py")
    line = next(i for i, text in enumerate(code.splitlines(), 1) if "raise TimeoutError" in text)
    shown = re.search(r"\nprints\n\n```\n(.*?)```", (ROOT / page).read_text(), re.S)
    assert shown is not None
    expected = shown.group(1).replace("<your file>:<line>", f"quickstart.py:{line}")
    assert capsys.readouterr().out == expected


def test_the_root_readme_section_prints_the_cause_and_next_step(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = block("README.md", "toolmend_pydantic_ai")
    run(code, "root.py")
    line = next(i for i, text in enumerate(code.splitlines(), 1) if "raise TimeoutError" in text)
    assert capsys.readouterr().out == (
        "Note from the tool runtime: the last attempt called pay with `invoice=7` and it failed "
        "with:\n> Tool 'pay' failed after 1 attempt with TimeoutError: the bank did not answer "
        f"in 30s\n> Where: root.py:{line} in pay\n\nThis call may already have taken effect. Check "
        "whether it did before calling it again.\n"
    )
