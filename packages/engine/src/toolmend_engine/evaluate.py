"""Run the scenarios in each form and score them (Study 1/2 style).

For each scenario, error kind and form: the decision step is scored by the
next action (repeat the call on a transient error, call with the value the
error names on a fixable one, answer in text on an unrecoverable one) and by
the decision log-odds; then the conversation continues as an episode of up to
``turns`` replies against simulated tools, scored by completion (the final text
answer contains the result's key; for an unrecoverable error, the first reply
is a text answer) and by futile calls (calls to the failed tool after an
unrecoverable error).  The order is fixed and decoding greedy, so a rerun
writes the same rows.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolmend import Form, Kind

from .backends import Backend, RemoteError, Turn
from .protocol import BadRequest
from .scenarios import (
    KINDS,
    Scenario,
    Suite,
    ToolWorld,
    call_message,
    contains_key,
    decision_messages,
    normalize,
    same_arguments,
)

__all__ = [
    "CORRECT_ACTION",
    "EvalPlan",
    "classify_action",
    "form_label",
    "run_case",
    "run_eval",
    "summarize",
]

CORRECT_ACTION: Mapping[Kind, str] = {
    Kind.TRANSIENT: "repeat",
    Kind.FIXABLE: "corrected",
    Kind.UNRECOVERABLE: "text",
}


def form_label(form: Form) -> str:
    """The papers' names: the client's unchanged conversation is C0."""
    return "c0" if form is Form.OFF else form.value


@dataclass(frozen=True, slots=True)
class EvalPlan:
    """Which cases an evaluation runs: forms, kinds, how many scenarios, how many turns."""

    forms: tuple[Form, ...] = (Form.OFF, Form.C1, Form.C2, Form.C3, Form.C4)
    kinds: tuple[Kind, ...] = KINDS
    limit: int | None = None
    turns: int = 5

    def cases(self, suite: Suite) -> list[tuple[Scenario, Kind, Form]]:
        """Every (scenario, kind, form) of ``suite`` this plan runs, in order."""
        return [
            (scenario, kind, form)
            for scenario in suite.select(self.limit)
            for kind in self.kinds
            for form in self.forms
        ]


def classify_action(turn: Turn, scenario: Scenario, kind: Kind) -> str:
    """``repeat``, ``corrected``, ``other_call``, ``text`` or ``empty``.

    Any of several calls may be the right one (Study 2's rule).
    """
    if not turn.calls:
        return "text" if turn.content.strip() else "empty"
    found = set()
    for call in turn.calls:
        if call.name != scenario.tool:
            continue
        if same_arguments(call.arguments, scenario.failed_arguments(kind)):
            found.add("repeat")
        value = call.arguments.get(scenario.fix_argument)
        if (
            kind is Kind.FIXABLE
            and value is not None
            and normalize(value) == normalize(scenario.right)
        ):
            found.add("corrected")
    if CORRECT_ACTION[kind] in found:
        return CORRECT_ACTION[kind]
    for action in ("repeat", "corrected"):
        if action in found:
            return action
    return "other_call"


def _episode(
    backend: Backend,
    suite: Suite,
    scenario: Scenario,
    kind: Kind,
    form: Form,
    history: list[Any],
    first: Turn,
    turns: int,
) -> dict[str, Any]:
    world = ToolWorld(suite, scenario, kind)
    turn, n, futile, actions = first, 1, 0, [classify_action(first, scenario, kind)]
    while turn.calls:
        if kind is Kind.UNRECOVERABLE:
            futile += sum(1 for c in turn.calls if c.name == scenario.tool)
        if n >= turns:
            break
        ids = [f"call_{n + 1}_{j}" for j in range(len(turn.calls))]
        history.append(
            call_message(
                [(i, c.name, c.arguments) for i, c in zip(ids, turn.calls, strict=True)],
                turn.content,
            )
        )
        for i, c in zip(ids, turn.calls, strict=True):
            answer = world.run(c.name, c.raw if c.raw is not None else c.arguments)
            history.append({"role": "tool", "tool_call_id": i, "content": answer})
        turn = backend.turn(history, suite.tools, form, score=False)
        n += 1
        actions.append(classify_action(turn, scenario, kind))
    if kind is Kind.UNRECOVERABLE:
        completed = actions[0] == "text"
    else:
        completed = not turn.calls and contains_key(turn.content, scenario.key)
    return {"turns": n, "completed": completed, "futile_calls": futile, "actions": actions}


def run_case(
    backend: Backend, suite: Suite, scenario: Scenario, kind: Kind, form: Form, turns: int
) -> dict[str, Any]:
    """One conversation: the decision step, then the episode.  One row of results.jsonl."""
    history = decision_messages(suite, scenario, kind)
    row: dict[str, Any] = {
        "scenario": scenario.id,
        "tool": scenario.tool,
        "kind": kind.value,
        "variant": suite.variant(scenario, kind),
        "form": form_label(form),
    }
    try:
        first = backend.turn(list(history), suite.tools, form, score=True)
        recomputed = backend.recomputed(history[:2], list(history), suite.tools, form)
        action = classify_action(first, scenario, kind)
        row.update(
            prompt_sha256=first.prompt_sha256,
            prompt_tokens=first.prompt_tokens,
            recomputed_tokens=recomputed,
            header=first.header,
            reply=first.text,
            action=action,
            correct=action == CORRECT_ACTION[kind],
            log_odds=None if first.log_odds is None else round(first.log_odds, 4),
        )
        row.update(_episode(backend, suite, scenario, kind, form, list(history), first, turns))
    except (RemoteError, BadRequest) as exc:
        row.update(error=str(exc), correct=False, completed=False, log_odds=None)
    return row


def run_eval(
    backend: Backend,
    suite: Suite,
    plan: EvalPlan,
    on_row: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Run every case of ``plan`` on ``backend``; one result row per case."""
    rows = []
    for scenario, kind, form in plan.cases(suite):
        row = run_case(backend, suite, scenario, kind, form, plan.turns)
        rows.append(row)
        if on_row is not None:
            on_row(row)
    return rows


def _mean(values: Iterable[float]) -> float | None:
    items = list(values)
    return round(statistics.fmean(items), 4) if items else None


def summarize(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One record per form and kind, in the order they first appear."""
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["form"], row["kind"]), []).append(row)
    out = []
    for (form, kind), items in groups.items():
        odds = [r["log_odds"] for r in items if r.get("log_odds") is not None]
        recomputed = [
            r["recomputed_tokens"] for r in items if r.get("recomputed_tokens") is not None
        ]
        out.append(
            {
                "form": form,
                "kind": kind,
                "n": len(items),
                "correct": _mean(1.0 if r.get("correct") else 0.0 for r in items),
                "log_odds": _mean(odds),
                "completed": _mean(1.0 if r.get("completed") else 0.0 for r in items),
                "futile_calls": _mean(float(r.get("futile_calls", 0)) for r in items)
                if kind == Kind.UNRECOVERABLE.value
                else None,
                "recomputed_tokens": statistics.median(recomputed) if recomputed else None,
                "errors": sum(1 for r in items if "error" in r),
            }
        )
    return out
