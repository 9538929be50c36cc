"""Errors in context: collapse them once resolved, count repeated ones, filter developer steps.

Every adapter gets the same behaviour through :func:`toolmend.rewrite`'s
``context`` argument: the policy says what to do, the codecs read and write the
messages, and this module decides.  Only the model's request changes; the
history the caller keeps is never touched (edited messages are copies).

- **Collapse once resolved.**  A failed tool result that a later successful
  call of the same tool resolved becomes one line (:data:`STUB`: the tool, the
  error's first line, and that a later call succeeded).  Of a run of identical
  errors of one tool, only the first stays in full (:data:`REPEAT_STUB`).  The
  decision step's results are never collapsed: the model must read the error it
  is deciding on.  Collapsing changes the prompt prefix where the first stub
  lands, so a prefix cache recomputes from there once (the engine's evaluation
  measures it: see the engine README).
- **Pile-up.**  :mod:`toolmend.deliver._pileup`'s rule, counted over the conversation.
- **Developer steps.**  :mod:`toolmend.deliver._actionable`'s filter on the error the
  note quotes, unless switched off or the tool's agent can take such steps.
"""

from __future__ import annotations

import argparse
from collections.abc import Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..classify._detect import Verdict, classify_result, text_of
from ..classify._rules import Rules
from ._codecs import Codec, Result
from ._pileup import Streaks, error_class

__all__ = [
    "REPEAT_STUB",
    "STUB",
    "ContextPolicy",
    "Seen",
    "add_context_options",
    "collapse_plan",
    "context_from_options",
    "read_history",
    "streaks_at",
]

STUB = "[Earlier failure of {tool}, resolved by a later successful call: {error}]"
REPEAT_STUB = "[{tool} failed again with the same error as its earlier call above: {error}]"
STUB_ERROR = 160
"""The error's first line in a stub: at most this many characters."""


@dataclass(frozen=True, slots=True)
class ContextPolicy:
    """What the rewrite does with errors in context, beyond the decision step's form.

    Args:
        collapse_resolved: collapse failed results that a later success of the
            same tool resolved, and repeats of an identical error, to one line
            each (in the model's request only).
        pile_up_after: after this many consecutive failures of one tool with the
            same error class, the note recommends stopping or asking the user
            (``None`` or 0: never).
        filter_steps: omit sentences of quoted error text that ask for a step
            the agent cannot take (a terminal command, a config change, a web
            page, contacting someone, opening an issue, a plan upgrade).
        agent_steps: tools whose agent can take such steps (a coding agent with
            a shell): their errors are quoted whole.  ``True``: every tool.
    """

    collapse_resolved: bool = False
    pile_up_after: int | None = 3
    filter_steps: bool = True
    agent_steps: Collection[str] | bool = frozenset()

    def __post_init__(self) -> None:
        if self.pile_up_after is not None and self.pile_up_after < 0:
            raise ValueError("pile_up_after must be >= 0 or None")
        if not isinstance(self.agent_steps, bool):
            object.__setattr__(self, "agent_steps", frozenset(self.agent_steps))

    def filters(self, tool: str | None) -> bool:
        """Whether the error text of ``tool`` is filtered for developer steps.

        Args:
            tool: The tool's name.
        """
        if not self.filter_steps or self.agent_steps is True:
            return False
        return not (isinstance(self.agent_steps, frozenset) and tool in self.agent_steps)

    @classmethod
    def off(cls) -> ContextPolicy:
        """Nothing beyond the form: no collapsing, no pile-up note, no filter."""
        return cls(collapse_resolved=False, pile_up_after=None, filter_steps=False)


@dataclass(frozen=True, slots=True)
class Seen:
    """One tool result of the conversation with the verdict on it."""

    result: Result
    verdict: Verdict

    @property
    def failed(self) -> bool:
        """The verdict says the call failed."""
        return self.verdict.failed

    @property
    def succeeded(self) -> bool:
        """Not failed, and not flagged as an error either (a flag is hard evidence)."""
        flagged = self.result.is_error is True or self.result.status == "error"
        return not self.verdict.failed and not flagged

    def text(self) -> str:
        """The result's text, stripped (empty for a result without text)."""
        return (text_of(self.result.content) or "").strip()


def read_history(
    codec: Codec,
    messages: Any,
    *,
    recorded: Mapping[str, Verdict] | None = None,
    client: str | None = None,
    rules: Rules | None = None,
) -> list[Seen]:
    """Every tool result with its verdict: recorded first, else read from the text.

    Args:
        codec: the format's codec (``toolmend.deliver._codecs.CODECS[format]``).
        messages: the whole conversation.
        recorded: call id -> verdict an adapter already holds.
        client: the User-Agent that selects agent rules.
        rules: user rules checked before the built-in ones.
    """
    seen = []
    for result in codec.results(messages):
        verdict = None
        if recorded is not None and result.call_id is not None:
            verdict = recorded.get(result.call_id)
        if verdict is None:
            verdict = classify_result(
                result.content,
                is_error=result.is_error,
                status=result.status,
                client=client,
                tool=result.name,
                rules=rules,
            )
        seen.append(Seen(result, verdict))
    return seen


def _first_line(text: str) -> str:
    """The first line, cut to :data:`STUB_ERROR`: only that much of the text is split."""
    stripped = text.strip()
    line = stripped[: STUB_ERROR + 1].splitlines()[0] if stripped else ""
    return line if len(line) <= STUB_ERROR else line[: STUB_ERROR - 3] + "..."


def collapse_plan(seen: Sequence[Seen], keep: Collection[Hashable] = ()) -> dict[Hashable, str]:
    """Loc -> stub for the results to collapse; those in ``keep`` never are.

    Args:
        seen: the conversation's tool results, oldest first.
        keep: locs left whole whatever they hold (the decision step's results).
    """
    plan: dict[Hashable, str] = {}
    resolved: set[str] = set()
    for item in reversed(seen):
        name = item.result.name
        if name is None:
            continue
        if item.succeeded:
            resolved.add(name)
        elif item.failed and name in resolved and item.result.loc not in keep:
            plan[item.result.loc] = STUB.format(tool=name, error=_first_line(item.text()))
    first: dict[str, str] = {}
    for item in seen:
        name = item.result.name
        if name is None:
            continue
        if not item.failed:
            first.pop(name, None)
            continue
        text = item.text()
        if first.get(name) != text:
            first[name] = text
        elif item.result.loc not in keep and item.result.loc not in plan:
            plan[item.result.loc] = REPEAT_STUB.format(tool=name, error=_first_line(text))
    return plan


def streaks_at(seen: Sequence[Seen]) -> dict[Hashable, tuple[str, int]]:
    """Loc -> (error class, length of the tool's failure streak) at each failed result.

    Args:
        seen: the conversation's tool results, oldest first.
    """
    streaks = Streaks()
    found: dict[Hashable, tuple[str, int]] = {}
    for item in seen:
        name = item.result.name
        if name is None:
            continue
        if item.failed:
            cls = error_class(item.verdict.kind, item.text())
            found[item.result.loc] = (cls, streaks.failed(name, cls))
        elif item.succeeded:
            streaks.succeeded(name)
    return found


def add_context_options(parser: argparse.ArgumentParser) -> None:
    """The command-line options of a :class:`ContextPolicy` (``toolmend rewrite``, the engine).

    Args:
        parser: the (sub)command's parser to add them to.
    """
    default = ContextPolicy()
    group = parser.add_argument_group("errors in context")
    group.add_argument(
        "--collapse",
        action=argparse.BooleanOptionalAction,
        default=default.collapse_resolved,
        help="collapse earlier failures once resolved, and repeats of one error, to a line "
        f"({'on' if default.collapse_resolved else 'off'} by default)",
    )
    group.add_argument(
        "--pile-up-after",
        type=int,
        default=default.pile_up_after,
        metavar="N",
        help=f"after N failures of a tool with the same error, recommend stopping "
        f"({default.pile_up_after}; 0 = never)",
    )
    group.add_argument(
        "--no-step-filter",
        action="store_true",
        help="quote errors whole, steps for the developer included",
    )
    group.add_argument(
        "--agent-steps",
        default="",
        metavar="TOOLS",
        help="comma-separated tools whose agent can take such steps (a shell); '*' for all",
    )


def context_from_options(options: argparse.Namespace) -> ContextPolicy:
    """The policy the options of :func:`add_context_options` describe.

    Args:
        options: the parsed arguments.
    """
    tools = [t.strip() for t in str(options.agent_steps).split(",") if t.strip()]
    return ContextPolicy(
        collapse_resolved=bool(options.collapse),
        pile_up_after=options.pile_up_after or None,
        filter_steps=not options.no_step_filter,
        agent_steps=True if tools == ["*"] else frozenset(tools),
    )
