"""The evaluation's scenarios: data from ``data/scenarios.json``, conversations, simulated tools.

Each scenario is a user request, the call that answers it, and the tool's
eventual result with a key the answer must contain.  At the decision step the
call has just failed with one of three kinds of error; the error text is one of
five variants per kind, filled with the tool's own service name, argument and
values.  For a fixable error the failed call used a wrong value and the error
names the right one.  Every conversation offers all six tools, in the same
order, with no system message (Study 1's design).
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from toolmend import Kind
from toolmend.integrations import check_call

__all__ = [
    "KINDS",
    "SITUATIONS",
    "Scenario",
    "Situation",
    "Suite",
    "ToolWorld",
    "call_message",
    "contains_key",
    "decision_messages",
    "load_suite",
    "normalize",
    "same_arguments",
    "situation_messages",
]

KINDS: tuple[Kind, ...] = (Kind.TRANSIENT, Kind.FIXABLE, Kind.UNRECOVERABLE)
NOT_FOUND = '{"error": "no record matches these arguments"}'
FIRST_CALL_ID = "call_1"


@dataclass(frozen=True, slots=True)
class Scenario:
    """One evaluation scenario: a request, the call it needs, and the argument to fix.

    ``index`` is its place among its tool's scenarios, which picks its error text.
    """

    id: str
    tool: str
    request: str
    arguments: Mapping[str, Any]
    fix_argument: str
    fix_wrong: Any
    result: Mapping[str, Any]
    key: str
    index: int

    @property
    def right(self) -> Any:
        """The value the fixed argument must have."""
        return self.arguments[self.fix_argument]

    def failed_arguments(self, kind: Kind) -> dict[str, Any]:
        """The arguments of the failed call: the wrong value only for a fixable error."""
        args = dict(self.arguments)
        if kind is Kind.FIXABLE:
            args[self.fix_argument] = self.fix_wrong
        return args


@dataclass(frozen=True, slots=True)
class Suite:
    """The scenarios with their tools, services, fix rules and error texts."""

    tools: tuple[Mapping[str, Any], ...]
    services: Mapping[str, str]
    fix_rules: Mapping[str, str]
    errors: Mapping[Kind, tuple[str, ...]]
    scenarios: tuple[Scenario, ...]

    @property
    def tool_names(self) -> tuple[str, ...]:
        """The names of the suite's tools, in order."""
        return tuple(t["function"]["name"] for t in self.tools)

    @property
    def schemas(self) -> dict[str, Mapping[str, Any] | None]:
        """Each tool's parameter schema, for the core's check of a call."""
        return {t["function"]["name"]: t["function"].get("parameters") for t in self.tools}

    def variant(self, scenario: Scenario, kind: Kind) -> int:
        """Which of the kind's error texts the scenario uses (spread over the scenarios)."""
        return scenario.index % len(self.errors[kind])

    def error_text(self, scenario: Scenario, kind: Kind) -> str:
        """The error text the scenario's failed call returns for ``kind``."""
        template = self.errors[kind][self.variant(scenario, kind)]
        return template.format(
            service=self.services[scenario.tool],
            tool=scenario.tool,
            argument=scenario.fix_argument,
            wrong=scenario.fix_wrong,
            right=scenario.right,
            rule=self.fix_rules[scenario.tool],
        )

    def select(self, limit: int | None) -> tuple[Scenario, ...]:
        """The first ``limit`` scenarios of each tool, in the file's order, tools interleaved."""
        by_tool: dict[str, list[Scenario]] = {}
        for s in self.scenarios:
            by_tool.setdefault(s.tool, []).append(s)
        rounds = max((len(v) for v in by_tool.values()), default=0)
        if limit is not None:
            rounds = min(rounds, limit)
        return tuple(
            group[i] for i in range(rounds) for group in by_tool.values() if i < len(group)
        )


def _scenario(raw: Mapping[str, Any], index: int) -> Scenario:
    return Scenario(
        id=raw["id"],
        tool=raw["tool"],
        request=raw["request"],
        arguments=dict(raw["arguments"]),
        fix_argument=raw["fix"]["argument"],
        fix_wrong=raw["fix"]["wrong"],
        result=dict(raw["result"]),
        key=str(raw["key"]),
        index=index,
    )


def load_suite(path: str | Path | None = None) -> Suite:
    """The scenario file shipped with the package, or another with the same shape."""
    if path is None:
        text = resources.files("toolmend_engine").joinpath("data/scenarios.json").read_text("utf-8")
    else:
        text = Path(path).read_text("utf-8")
    data = json.loads(text)
    per_tool: dict[str, int] = {}
    scenarios = []
    for raw in data["scenarios"]:
        index = per_tool.get(raw["tool"], 0)
        per_tool[raw["tool"]] = index + 1
        scenarios.append(_scenario(raw, index))
    return Suite(
        tools=tuple(data["tools"]),
        services=dict(data["services"]),
        fix_rules=dict(data["fix_rules"]),
        errors={Kind(k): tuple(v) for k, v in data["errors"].items()},
        scenarios=tuple(scenarios),
    )


def _call(call_id: str, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)},
    }


def decision_messages(suite: Suite, scenario: Scenario, kind: Kind) -> list[dict[str, Any]]:
    """The conversation as the client sends it at the decision step (form C0)."""
    return [
        {"role": "user", "content": scenario.request},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [_call(FIRST_CALL_ID, scenario.tool, scenario.failed_arguments(kind))],
        },
        {
            "role": "tool",
            "tool_call_id": FIRST_CALL_ID,
            "content": suite.error_text(scenario, kind),
        },
    ]


def normalize(value: Any) -> str:
    """A value as a tool would compare it: surrounding space and Unicode form do not matter.

    Case does: one of the fixable errors is exactly about case.
    """
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return unicodedata.normalize("NFKC", text).strip()


def contains_key(text: str, key: str) -> bool:
    """Whether an answer reports the result's key, in any case."""
    return normalize(key).casefold() in normalize(text).casefold()


def same_arguments(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether two argument sets are the same once their values are normalised."""
    return set(a) == set(b) and all(normalize(a[k]) == normalize(b[k]) for k in a)


@dataclass(frozen=True, slots=True)
class ToolWorld:
    """The simulated tools of one episode.

    The failed tool keeps failing on an unrecoverable error and on the wrong
    value of a fixable one; called with the right arguments it returns the
    scenario's result.  Anything else finds no record.
    """

    suite: Suite
    scenario: Scenario
    kind: Kind
    error: str | None = None
    """When set, every call of the scenario's tool fails with this text (an outage)."""

    def run(self, name: str, arguments: Mapping[str, Any] | str) -> str:
        """The tool's answer to one call of the scenario.

        The tool's answer; a malformed call gets the core's fixable error, as every
        adapter answers it (unknown tool, arguments not an object, schema errors).
        """
        s = self.scenario
        check = check_call(name, arguments, self.suite.schemas)
        if check.failure is not None:
            return check.failure.cause
        arguments = check.arguments
        if name != s.tool:
            return NOT_FOUND
        if self.error is not None:
            return self.error
        if self.kind is Kind.UNRECOVERABLE:
            return self.suite.error_text(s, self.kind)
        if same_arguments(arguments, s.arguments):
            return json.dumps(s.result, ensure_ascii=False)
        if self.kind is Kind.FIXABLE and same_arguments(arguments, s.failed_arguments(self.kind)):
            return self.suite.error_text(s, self.kind)
        return NOT_FOUND


def call_message(
    calls: Sequence[tuple[str, str, Mapping[str, Any]]], content: str
) -> dict[str, Any]:
    """An assistant turn with these ``(id, name, arguments)`` calls, as a client stores it."""
    return {
        "role": "assistant",
        "content": content or None,
        "tool_calls": [_call(i, n, a) for i, n, a in calls],
    }


# -- situations: errors in context over several turns ---------------------------------

DEVSTEP_ERROR = (
    "Error: 401 Unauthorized: the access token for the {service} has expired. "
    "Run `gcloud auth login` to obtain new credentials, then retry the request."
)
"""Expired credentials with a step only the developer can take (Xu, Sep 2026)."""

TRACE = (
    "\nTraceback (most recent call last):\n"
    '  File "/srv/tools/{tool}.py", line 88, in handle\n'
    "    return client.lookup(**arguments)\n"
    '  File "/srv/tools/client.py", line 41, in lookup\n'
    "    raise ToolInputError(message)\n"
    "ToolInputError: {argument} was rejected"
)
"""What a tool wrapper appends to the resolved failure: the trace a stub leaves out."""


@dataclass(frozen=True, slots=True)
class Situation:
    """A conversation shape that tests one practice of keeping errors in context.

    ``feature`` is the :class:`toolmend.ContextPolicy` field it measures; ``kind``
    the kind of the error in it; ``correct`` the right next action; ``failing``
    whether the tool keeps failing in the episode (else it answers when called right).
    """

    name: str
    feature: str
    kind: Kind
    correct: str
    failing: bool


SITUATIONS: tuple[Situation, ...] = (
    Situation("resolved", "collapse_resolved", Kind.FIXABLE, "text", False),
    Situation("repeated", "pile_up_after", Kind.TRANSIENT, "text", True),
    Situation("devstep", "filter_steps", Kind.UNRECOVERABLE, "text", True),
)
"""- ``resolved``: a fixable error (with the tool's trace), then the corrected call
  succeeded; the answer is due.
- ``repeated``: the same call failed three times with the same temporary error (an
  outage that does not end); the runtime should stop and tell the user.
- ``devstep``: expired credentials whose error says to run ``gcloud auth login``;
  the agent cannot, so it should tell the user."""

REPEATS = 3


def situation_error(suite: Suite, scenario: Scenario, situation: Situation) -> str:
    """The error text the situation's failed calls return.

    Args:
        suite: the scenarios and their error templates.
        scenario: the scenario whose tool failed.
        situation: the conversation's shape.
    """
    if situation.name == "devstep":
        return DEVSTEP_ERROR.format(service=suite.services[scenario.tool])
    error = suite.error_text(scenario, situation.kind)
    if situation.name == "resolved":
        error += TRACE.format(tool=scenario.tool, argument=scenario.fix_argument)
    return error


def situation_messages(
    suite: Suite, scenario: Scenario, situation: Situation
) -> tuple[list[dict[str, Any]], int]:
    """The conversation at the decision step, and the length of the previous request.

    The conversation is as the client sends it; the previous request is the one
    that produced the last assistant turn.

    Args:
        suite: the scenarios and their error templates.
        scenario: the scenario the conversation is built from.
        situation: the conversation's shape.
    """
    failed = scenario.failed_arguments(situation.kind)
    error = situation_error(suite, scenario, situation)
    messages: list[dict[str, Any]] = [{"role": "user", "content": scenario.request}]
    if situation.name == "resolved":
        messages += [
            call_message([(FIRST_CALL_ID, scenario.tool, failed)], ""),
            {"role": "tool", "tool_call_id": FIRST_CALL_ID, "content": error},
            call_message([("call_2", scenario.tool, scenario.arguments)], ""),
            {
                "role": "tool",
                "tool_call_id": "call_2",
                "content": json.dumps(scenario.result, ensure_ascii=False),
            },
        ]
        return messages, 3
    count = REPEATS if situation.name == "repeated" else 1
    for n in range(1, count + 1):
        call_id = f"call_{n}"
        messages += [
            call_message([(call_id, scenario.tool, failed)], ""),
            {"role": "tool", "tool_call_id": call_id, "content": error},
        ]
    return messages, len(messages) - 2
