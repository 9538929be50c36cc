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

import dataclasses
import json
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolmend import ContextPolicy, Form, Kind

from ..http._requests import BadRequest
from ._backends import Backend, RemoteError, Turn
from ._scenarios import (
    KINDS,
    SITUATIONS,
    Scenario,
    Situation,
    Suite,
    ToolWorld,
    call_message,
    contains_key,
    decision_messages,
    normalize,
    same_arguments,
    situation_error,
    situation_messages,
)

__all__ = [
    "CORRECT_ACTION",
    "EvalPlan",
    "classify_action",
    "form_label",
    "run_case",
    "run_eval",
    "run_situation",
    "summarize",
    "summarize_situations",
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
    situations: tuple[Situation, ...] = SITUATIONS
    situation_limit: int | None = 2
    """Scenarios per situation (the first tools'); the situations' episodes have 2 replies."""
    situation_turns: int = 2

    def situation_cases(self, suite: Suite) -> list[tuple[Scenario, Situation, Form, bool]]:
        """Per situation, scenario and form: without the feature, then with it.

        Not for c0, where the layer is off.
        """
        chosen = suite.select(self.limit)
        if self.situation_limit is not None:
            chosen = chosen[: self.situation_limit]
        return [
            (scenario, situation, form, on)
            for situation in self.situations
            for scenario in chosen
            for form in self.forms
            for on in ((False,) if form is Form.OFF else (False, True))
        ]

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
            prompt_sha256=first.prompt_sha256, prompt_tokens=first.prompt_tokens,
            recomputed_tokens=recomputed, header=first.header, reply=first.text,
            action=action, correct=action == CORRECT_ACTION[kind],
            log_odds=None if first.log_odds is None else round(first.log_odds, 4),
        )  # fmt: skip
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


# -- situations: errors in context over several turns ---------------------------------


def feature_policy(situation: Situation, on: bool) -> ContextPolicy:
    """Every feature off but the situation's own, so each is measured alone.

    Args:
        situation: the situation whose feature is measured.
        on: whether the feature is on.
    """
    off = ContextPolicy.off()
    if not on:
        return off
    value: Any = True if situation.feature != "pile_up_after" else 3
    return dataclasses.replace(off, **{situation.feature: value})


def _situation_action(turn: Turn, scenario: Scenario, failed: Mapping[str, Any]) -> str:
    if not turn.calls:
        return "text" if turn.content.strip() else "empty"
    for call in turn.calls:
        if call.name == scenario.tool and same_arguments(call.arguments, failed):
            return "repeat"
    return "other_call"


def _repeats(turn: Turn, scenario: Scenario, failed: Mapping[str, Any]) -> tuple[int, int, int]:
    """(calls, exact repeats, canonical repeats) of the failed call in one reply.

    Exact: the same tool and the very argument text the failed call sent; canonical:
    the same arguments once key order, spacing and Unicode form are set aside.
    """
    exact_text = json.dumps(failed, ensure_ascii=False)
    exact = canonical = 0
    for call in turn.calls:
        if call.name != scenario.tool:
            continue
        if json.dumps(call.arguments, ensure_ascii=False) == exact_text:
            exact += 1
        if same_arguments(call.arguments, failed):
            canonical += 1
    return len(turn.calls), exact, canonical


def run_situation(
    backend: Backend,
    suite: Suite,
    scenario: Scenario,
    situation: Situation,
    form: Form,
    on: bool,
    turns: int,
) -> dict[str, Any]:
    """One conversation of a situation, with or without its feature.  One row.

    Args:
        backend: where the replies come from.
        suite: the scenarios and their tools.
        scenario: the scenario the conversation is built from.
        situation: the conversation's shape.
        form: the delivery form.
        on: whether the situation's feature is on.
        turns: the episode's length in replies.
    """
    history, previous = situation_messages(suite, scenario, situation)
    failed = scenario.failed_arguments(situation.kind)
    policy = feature_policy(situation, on)
    row: dict[str, Any] = {
        "situation": situation.name,
        "scenario": scenario.id,
        "tool": scenario.tool,
        "form": form_label(form),
        "feature": situation.feature,
        "on": on,
    }
    error = situation_error(suite, scenario, situation) if situation.failing else None
    world = ToolWorld(suite, scenario, situation.kind, error)
    try:
        first = backend.turn(list(history), suite.tools, form, score=True, context=policy)
        recomputed = backend.recomputed_since(
            history[:previous], list(history), suite.tools, form, policy
        )
        action = _situation_action(first, scenario, failed)
        calls, exact, canonical = _repeats(first, scenario, failed)
        turn, n, conversation = first, 1, list(history)
        while turn.calls and n < turns:
            ids = [f"call_s{n}_{j}" for j in range(len(turn.calls))]
            conversation.append(
                call_message(
                    [(i, c.name, c.arguments) for i, c in zip(ids, turn.calls, strict=True)],
                    turn.content,
                )
            )
            for i, c in zip(ids, turn.calls, strict=True):
                answer = world.run(c.name, c.raw if c.raw is not None else c.arguments)
                conversation.append({"role": "tool", "tool_call_id": i, "content": answer})
            turn = backend.turn(conversation, suite.tools, form, score=False, context=policy)
            n += 1
            more = _repeats(turn, scenario, failed)
            calls, exact, canonical = calls + more[0], exact + more[1], canonical + more[2]
        row.update(
            prompt_tokens=first.prompt_tokens,
            recomputed_tokens=recomputed,
            header=first.header,
            reply=first.text,
            action=action,
            correct=action == situation.correct,
            log_odds=None if first.log_odds is None else round(first.log_odds, 4),
            turns=n,
            calls=calls,
            exact_repeats=exact,
            canonical_repeats=canonical,
        )
    except (RemoteError, BadRequest) as exc:
        row.update(error=str(exc), correct=False, log_odds=None)
    return row


def run_situations(
    backend: Backend,
    suite: Suite,
    plan: EvalPlan,
    on_row: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Every situation case of ``plan``, in order; ``on_row`` is called after each."""
    rows = []
    for scenario, situation, form, on in plan.situation_cases(suite):
        row = run_situation(backend, suite, scenario, situation, form, on, plan.situation_turns)
        rows.append(row)
        if on_row is not None:
            on_row(row)
    return rows


def _rate(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def summarize_situations(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One record per situation, form and feature setting, in the order they first appear.

    Args:
        rows: the rows of :func:`run_situation`.
    """
    groups: dict[tuple[str, str, bool], list[Mapping[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["situation"], row["form"], row["on"]), []).append(row)
    out = []
    for (situation, form, on), items in groups.items():
        odds = [r["log_odds"] for r in items if r.get("log_odds") is not None]
        recomputed = [
            r["recomputed_tokens"] for r in items if r.get("recomputed_tokens") is not None
        ]
        calls = sum(int(r.get("calls", 0)) for r in items)
        out.append(
            {
                "situation": situation,
                "form": form,
                "feature": "-" if form == "c0" else ("on" if on else "off"),
                "n": len(items),
                "correct": _mean(1.0 if r.get("correct") else 0.0 for r in items),
                "log_odds": _mean(odds),
                "calls": calls,
                "exact_repeat_rate": _rate(
                    sum(int(r.get("exact_repeats", 0)) for r in items), calls
                ),
                "canonical_repeat_rate": _rate(
                    sum(int(r.get("canonical_repeats", 0)) for r in items), calls
                ),
                "recomputed_tokens": statistics.median(recomputed) if recomputed else None,
                "errors": sum(1 for r in items if "error" in r),
            }
        )
    return out
