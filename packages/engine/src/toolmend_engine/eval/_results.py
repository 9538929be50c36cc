"""The evaluation's outputs: results.jsonl, summary.json, the terminal table and the plot.

Nothing written here depends on the clock or the machine, so a rerun of the
same evaluation writes byte-identical files.  The plot needs matplotlib (the
``eval`` extra); without it the plot is skipped with a note.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

__all__ = ["Progress", "format_situations", "format_table", "write_outputs", "write_plot"]

_COLUMNS = (
    ("form", "form", "{}"),
    ("kind", "kind", "{}"),
    ("n", "n", "{}"),
    ("correct", "correct", "{:.2f}"),
    ("log_odds", "log-odds", "{:+.2f}"),
    ("completed", "completed", "{:.2f}"),
    ("futile_calls", "futile", "{:.2f}"),
    ("recomputed_tokens", "recomputed", "{:g}"),
)


_SITUATION_COLUMNS = (
    ("situation", "situation", "{}"),
    ("form", "form", "{}"),
    ("feature", "feature", "{}"),
    ("n", "n", "{}"),
    ("correct", "correct", "{:.2f}"),
    ("log_odds", "log-odds", "{:+.2f}"),
    ("calls", "calls", "{}"),
    ("exact_repeat_rate", "exact-rep", "{:.2f}"),
    ("canonical_repeat_rate", "canon-rep", "{:.2f}"),
    ("recomputed_tokens", "recomputed", "{:g}"),
)


def format_table(summary: Sequence[Mapping[str, Any]]) -> str:
    """Form × kind: correct action, log-odds, completion, futile calls, recomputed tokens."""
    return _table(summary, _COLUMNS, 2)


def format_situations(summary: Sequence[Mapping[str, Any]]) -> str:
    """Situation × form × feature: next action, log-odds, repeat rates, recomputed tokens."""
    return _table(summary, _SITUATION_COLUMNS, 3)


def _table(
    summary: Sequence[Mapping[str, Any]],
    columns: Sequence[tuple[str, str, str]],
    left: int,
) -> str:
    cells = [[title for _, title, _ in columns]]
    for record in summary:
        row = []
        for key, _, fmt in columns:
            value = record.get(key)
            row.append("-" if value is None else fmt.format(value))
        cells.append(row)
    widths = [max(len(r[i]) for r in cells) for i in range(len(columns))]
    lines = []
    for j, row in enumerate(cells):
        text = "  ".join(
            c.ljust(w) if i < left else c.rjust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        )
        lines.append(text.rstrip())
        if j == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def write_plot(summary: Sequence[Mapping[str, Any]], path: Path, title: str) -> bool:
    """Correct action and log-odds by form and kind; False when matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    forms = list(dict.fromkeys(r["form"] for r in summary))
    kinds = list(dict.fromkeys(r["kind"] for r in summary))
    lookup = {(r["form"], r["kind"]): r for r in summary}
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), dpi=100)
    width = 0.8 / max(1, len(kinds))
    for ax, key, label in (
        (axes[0], "correct", "correct next action (share)"),
        (axes[1], "log_odds", "decision log-odds: log P(call) - log P(text)"),
    ):
        for k, kind in enumerate(kinds):
            values = [lookup.get((f, kind), {}).get(key) for f in forms]
            xs = [i + (k - (len(kinds) - 1) / 2) * width for i in range(len(forms))]
            ax.bar(xs, [0.0 if v is None else v for v in values], width, label=kind)
        ax.set_xticks(range(len(forms)), [f.upper() for f in forms])
        ax.set_title(label, fontsize=10)
        ax.axhline(0, color="black", linewidth=0.6)
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylim(0, 1)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(kinds), fontsize=9, frameon=False)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    fig.savefig(path, format="png", metadata={"Software": None})
    plt.close(fig)
    return True


def write_outputs(
    out: Path,
    rows: Sequence[Mapping[str, Any]],
    summary: Sequence[Mapping[str, Any]],
    title: str,
    situations: Sequence[Mapping[str, Any]] = (),
    situation_summary: Sequence[Mapping[str, Any]] = (),
) -> list[Path]:
    """Write the evaluation's rows and summary under ``out``; returns the files written.

    results.jsonl, summary.json, table.txt and plot.png; with situations, also
    situations.jsonl and situations.json, and their table after the first in table.txt.
    """
    out.mkdir(parents=True, exist_ok=True)
    written = []
    results = out / "results.jsonl"
    with results.open("w", encoding="utf-8", newline="\n") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")
    written.append(results)
    summary_path = out / "summary.json"
    summary_path.write_text(json.dumps(list(summary), indent=1) + "\n", encoding="utf-8")
    written.append(summary_path)
    if situations:
        path = out / "situations.jsonl"
        with path.open("w", encoding="utf-8", newline="\n") as f:
            for row in situations:
                f.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")
        written.append(path)
        path = out / "situations.json"
        path.write_text(json.dumps(list(situation_summary), indent=1) + "\n", encoding="utf-8")
        written.append(path)
    table = out / "table.txt"
    text = format_table(summary)
    if situation_summary:
        text += "\n\n" + format_situations(situation_summary)
    table.write_text(text + "\n", encoding="utf-8")
    written.append(table)
    plot = out / "plot.png"
    if write_plot(summary, plot, title):
        written.append(plot)
    return written


class Progress:
    """A progress bar on stderr (a line per 10% when stderr is not a terminal).

    The time left is estimated from the measured pace of each group of conversations
    (the single failed calls, then each situation), since they differ several-fold in
    length: a group's remaining conversations take its own mean so far; a group not yet
    started takes the pace per reply measured so far times its replies per conversation.

    Args:
        groups: Per group, in the order they run: its name, its number of conversations
            and the replies each may have (its weight before it is measured).
        label: The text before the bar.
        stream: Where to write (default: stderr).
        clock: Seconds from any fixed point (default: ``time.monotonic``; tests pass one).
    """

    def __init__(
        self,
        groups: Sequence[tuple[str, int, int]],
        label: str = "eval",
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.groups = {name: (count, max(1, replies)) for name, count, replies in groups}
        self.total = max(1, sum(count for count, _ in self.groups.values()))
        self.done = 0
        self.label = label
        self.stream = stream or sys.stderr
        self.clock = clock
        self.start = clock()
        self._last = self.start
        self._spent: dict[str, tuple[int, float]] = {}
        self._tty = self.stream.isatty()
        self._last_tenth = -1

    def left(self) -> float:
        """Seconds the remaining conversations should take, from the paces measured so far."""
        per_reply = [
            spent / (n * self.groups[name][1]) for name, (n, spent) in self._spent.items() if n
        ]
        reply_pace = sum(per_reply) / len(per_reply) if per_reply else 0.0
        seconds = 0.0
        for name, (count, replies) in self.groups.items():
            n, spent = self._spent.get(name, (0, 0.0))
            pace = spent / n if n else reply_pace * replies
            seconds += max(0, count - n) * pace
        return seconds

    def step(self, group: str) -> None:
        """Count one more finished conversation of ``group`` and show the time left."""
        now = self.clock()
        n, spent = self._spent.get(group, (0, 0.0))
        self._spent[group] = (n + 1, spent + (now - self._last))
        self._last = now
        self.done += 1
        elapsed = now - self.start
        eta = self.left()
        filled = int(30 * min(self.done, self.total) / self.total)
        bar = "#" * filled + "." * (30 - filled)
        text = (
            f"{self.label} [{bar}] {self.done}/{self.total} "
            f"{elapsed:5.0f}s elapsed, {eta:5.0f}s left"
        )
        if self._tty:
            self.stream.write("\r" + text)
            if self.done >= self.total:
                self.stream.write("\n")
        else:
            tenth = 10 * self.done // self.total
            if tenth != self._last_tenth:
                self._last_tenth = tenth
                self.stream.write(text + "\n")
        self.stream.flush()
