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

Every request of a long run carries the whole history again, so reading it must
not cost once per request what it cost the first time: verdicts are remembered
by the result's identity (:class:`Reader`), and the pile-up count
reads back from the decision step only as far as the count needs
(:func:`tail_streaks`), not the whole conversation.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..classify._detect import Verdict, classify_result, text_of
from ..classify._rules import Rules, current_rules
from ._codecs import Codec, Result, View
from ._pileup import Streaks, error_class

__all__ = [
    "REPEAT_STUB",
    "STUB",
    "ContextPolicy",
    "Reader",
    "Seen",
    "add_context_options",
    "collapse_plan",
    "context_from_options",
    "read_history",
    "streaks_at",
    "tail_streaks",
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


MEMO = 4096
"""How many verdicts a :class:`Reader` keeps (oldest dropped first)."""
_VERDICTS: dict[tuple[Any, ...], Verdict] = {}
Flags = tuple[bool | None, str | None]


@dataclass(frozen=True, slots=True)
class Reader:
    """How a rewrite reads its tool results: recorded verdicts first, then the text, once.

    A long run sends every earlier result again with each request; a result's
    verdict cannot have changed (it is a function of the text, the flags and the
    client), so it is remembered under the result's identity: its call id and
    the length and hash of its text, never the text itself (a large result is not
    kept alive).  At most :data:`MEMO` verdicts are kept.  User rules can change
    between requests (:func:`toolmend.set_rules`), so with any rule in effect a
    result is read afresh.

    Attributes:
        recorded: call id -> verdict an adapter already holds.
        client: the User-Agent that selects agent rules.
        rules: user rules checked before the built-in ones.
    """

    recorded: Mapping[str, Verdict] | None = None
    client: str | None = None
    rules: Rules | None = None

    def verdict(self, call_id: str | None, content: Any, flags: Flags, tool: str | None) -> Verdict:
        """The verdict on one result.

        Args:
            call_id: the call the result answers.
            content: the result's content.
            flags: the framework's error flag and a LangChain ``status``.
            tool: the tool's name, for user rules scoped to it.
        """
        if self.recorded is not None and call_id is not None:
            verdict = self.recorded.get(call_id)
            if verdict is not None:
                return verdict
        is_error, status = flags
        text = content if type(content) is str else None
        rules = self.rules
        if text is None or (rules if rules is not None else current_rules()):
            return classify_result(
                content,
                is_error=is_error,
                status=status,
                client=self.client,
                tool=tool,
                rules=rules,
            )
        key = (call_id, len(text), hash(text), is_error, status, self.client)
        verdict = _VERDICTS.get(key)
        if verdict is None:
            verdict = classify_result(text, is_error=is_error, status=status, client=self.client)
            if len(_VERDICTS) >= MEMO:
                # Another thread may have dropped it first: then there is room already.
                with contextlib.suppress(KeyError, RuntimeError, StopIteration):
                    del _VERDICTS[next(iter(_VERDICTS))]
            _VERDICTS[key] = verdict
        return verdict

    def seen(self, result: Result) -> Seen:
        """One result of the history with its verdict.

        Args:
            result: the result, as the codec read it.
        """
        flags = (result.is_error, result.status)
        return Seen(result, self.verdict(result.call_id, result.content, flags, result.name))


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
    reader = Reader(recorded, client, rules)
    return [reader.seen(result) for result in codec.results(messages)]


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


WINDOW = 8
"""Messages before the decision step that :func:`tail_streaks` reads first."""


def tail_streaks(
    codec: Codec,
    messages: Any,
    view: View,
    tools: Collection[str],
    *,
    recorded: Mapping[str, Verdict] | None = None,
    client: str | None = None,
    rules: Rules | None = None,
) -> dict[Hashable, tuple[str, int]]:
    """:func:`streaks_at` for the decision step's results, reading as little history as it can.

    A tool's streak is settled by its last success or its last failure of
    another class: nothing before that can change the count.  So the history is
    read back from the decision step in windows that start at a turn (8
    messages, then four times as many, up to the whole conversation) until each
    failing tool's streak starts after such an event in the window.  The counts
    are those of the whole conversation; in a long run only the last few turns
    are read, unless a failing tool has never succeeded before.

    Args:
        codec: the format's codec.
        messages: the whole conversation.
        view: its decision step (``codec.view(messages)``).
        tools: the tools that failed at the decision step: only their results count.
        recorded: call id -> verdict an adapter already holds.
        client: the User-Agent that selects agent rules.
        rules: user rules checked before the built-in ones.
    """
    reader = Reader(recorded, client, rules)
    keep = {e.loc for e in view.tail if e.role == "tool"}
    start = view.tail[0].position if isinstance(messages, list) else 0
    width = WINDOW
    while True:
        first = _turn_start(codec, messages, start - width)
        window = messages[first:] if first else messages
        found = _window_streaks(
            [reader.seen(r) for r in codec.results(window) if r.name is None or r.name in tools],
            first,
            keep,
            tools,
        )
        if found is not None:
            return found
        width *= 4


def _turn_start(codec: Codec, messages: Any, before: int) -> int:
    """The start of the last turn at or before ``before`` (0: the whole conversation)."""
    # Slices of 64 messages back from there, not the whole prefix (a copy as long as
    # the history): a turn cut by one shows a result whose call is not in the
    # window, and the caller reads further back.
    while before > 0:
        low = max(0, before - 64)
        tail = codec.view(messages[low : before + 1]).tail
        if tail:
            return low + tail[0].position
        before = low - 1
    return 0


def _shifted(loc: Hashable, by: int) -> Hashable:
    """A window's loc as a loc of the whole conversation (an index, or (index, block))."""
    if not by:
        return loc
    if type(loc) is int:
        return loc + by
    if type(loc) is tuple and loc and type(loc[0]) is int:
        return (loc[0] + by, *loc[1:])
    return loc


def _window_streaks(
    seen: Sequence[Seen], first: int, keep: Collection[Hashable], tools: Collection[str]
) -> dict[Hashable, tuple[str, int]] | None:
    """The decision step's streaks from a window starting at ``first``; None if unsettled."""
    streaks = Streaks()
    settled: set[str] = set()
    found: dict[Hashable, tuple[str, int]] = {}
    for item in seen:
        name = item.result.name
        if name is None:
            if first and item.result.call_id is not None:
                return None  # its call may lie before the window: read further back
            continue
        if name not in tools:
            continue
        if item.failed:
            cls = error_class(item.verdict.kind, item.text())
            last = streaks.current(name)
            if last is not None and last[0] != cls:
                settled.add(name)
            count = streaks.failed(name, cls)
            loc = _shifted(item.result.loc, first)
            if loc in keep:
                if first and name not in settled:
                    return None
                found[loc] = (cls, count)
        elif item.succeeded:
            streaks.succeeded(name)
            settled.add(name)
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
