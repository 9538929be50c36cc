"""Learn a deployment's errors from what happened after each one.

No text rule can know that a billing API's ``{"reason": "QUOTA"}`` clears after a
minute; a week of that deployment's own outcomes can.  Each failure is followed by
evidence: the same call succeeded later (``retry_succeeded``: transient), a call of
the same tool with changed arguments succeeded (``changed_arguments_succeeded``:
fixable), later calls failed with the same signature whatever changed
(``failed_again``: unrecoverable), or nothing followed (``stopped``: no evidence).
Counted per (tool, error signature), agreeing evidence becomes a rule for review.

Precision first, as everywhere in toolmend: a signature becomes a rule only with
``min_support`` agreeing outcomes and an agreement of at least ``min_agreement``;
a signature whose outcomes disagree (as much evidence, no majority) becomes an
``ambiguous`` rule, because wrong guidance is worse than none; and a rule that
contradicts what the built-in rules read from a code or a status is dropped and
printed as a conflict, unless its outcomes are overwhelming (``overrides``).

Inputs, one JSON object per line, any mix:

- the minimal line ``{"tool", "content", "is_error", "arguments", "outcome"}``;
- a :class:`~toolmend.integrations.CallRecord` (``to_dict``): its ``cause`` with its
  ``outcome``, and each failed attempt of its ``history`` before a success, which
  is a ``retry_succeeded`` by itself;
- an OpenTelemetry span export (OTLP JSON: ``resourceSpans`` / ``scopeSpans`` /
  ``spans``, or one span per line) whose spans carry ``gen_ai.tool.name``,
  ``toolmend.error.message`` and ``toolmend.followed_by``.
"""

from __future__ import annotations

import fnmatch
import json
import logging
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from .._types import Kind
from ._detect import classify_result
from ._rules import BALANCED, Rule, Rules
from ._signatures import error_signature

log = logging.getLogger("toolmend")

__all__ = [
    "MIN_AGREEMENT",
    "MIN_SUPPORT",
    "OUTCOMES",
    "Conflict",
    "Learned",
    "Observed",
    "OutcomeSource",
    "learn",
    "learned_rules",
    "read_outcomes",
]

OUTCOMES: Mapping[str, Kind | None] = {
    "retry_succeeded": Kind.TRANSIENT,
    "changed_arguments_succeeded": Kind.FIXABLE,
    "failed_again": Kind.UNRECOVERABLE,
    "stopped": None,
}
"""Each outcome and the kind it is evidence for (``stopped``: none)."""

MIN_SUPPORT = 2
"""Agreeing outcomes a signature needs before it becomes a rule."""
MIN_AGREEMENT = 0.9
"""The share of a signature's outcomes (those that are evidence) that must agree."""
_OVERRIDE_SUPPORT = 3
"""A rule overrides a code or status only with this many times ``min_support``..."""
_OVERRIDE_AGREEMENT = 1.0
"""...and no outcome against it."""


@dataclass(frozen=True, slots=True)
class Observed:
    """One failure and what followed it (or ``count`` alike, as a store sums them).

    Attributes:
        tool: The tool's name.
        text: The error text the tool gave.
        outcome: What followed (a key of :data:`OUTCOMES`).
        signature: The text's error signature.
        count: How many such failures this stands for.
    """

    tool: str
    text: str
    outcome: str
    signature: str
    count: int = 1


@dataclass(frozen=True, slots=True)
class Conflict:
    """A learned kind that contradicts what a code or status says.

    Attributes:
        tool: The tool's name.
        signature: The error signature.
        learned: The kind the outcomes say.
        built_in: The kind the built-in rules read, and from what (``http``, ``code:...``).
        support: The outcomes that agree with the learned kind.
        kept: ``learned`` when the rule overrides the built-in reading, else ``built-in``.
    """

    tool: str
    signature: str
    learned: str
    built_in: str
    support: int
    kept: str


@dataclass(frozen=True, slots=True)
class Learned:
    """What ``learn`` made of the outcomes: rules for review, and what it left out.

    Attributes:
        rules: The rules, sorted by tool and signature.
        conflicts: Learned kinds that contradict a code or a status.
        undecided: ``(tool, signature, outcomes seen)`` with too little evidence.
        read: Failures read.
        skipped: Lines that were not an outcome (with their line numbers).
    """

    rules: tuple[Rule, ...]
    conflicts: tuple[Conflict, ...] = ()
    undecided: tuple[tuple[str, str, Mapping[str, int]], ...] = ()
    read: int = 0
    skipped: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        """The rules file ``load_rules`` reads, with the evidence behind each rule."""
        return {
            "rules": [
                {
                    "kind": r.kind,
                    "tool": r.tool,
                    "signature": r.signature,
                    "support": r.support,
                    "agreement": r.agreement,
                    **({"overrides": True} if r.overrides else {}),
                }
                for r in self.rules
            ]
        }


def _attributes(span: Mapping[str, Any]) -> dict[str, Any]:
    raw = span.get("attributes")
    if isinstance(raw, Mapping):
        return dict(raw)
    found: dict[str, Any] = {}
    if isinstance(raw, list):
        for item in raw:
            if isinstance(item, Mapping) and isinstance(item.get("key"), str):
                value = item.get("value")
                if isinstance(value, Mapping):
                    value = next(iter(value.values()), None)
                found[item["key"]] = value
    return found


def _spans(obj: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    for resource in obj.get("resourceSpans") or ():
        for scope in (resource or {}).get("scopeSpans") or ():
            for span in (scope or {}).get("spans") or ():
                if isinstance(span, Mapping):
                    yield span


def _from_object(obj: Mapping[str, Any]) -> Iterator[tuple[str, str, str]]:
    """(tool, text, outcome) for each failure a JSON object reports."""
    if "resourceSpans" in obj:
        for span in _spans(obj):
            yield from _from_object({"attributes": _attributes(span)})
        return
    if "attributes" in obj:
        attributes = _attributes(obj)
        tool = attributes.get("gen_ai.tool.name")
        text = attributes.get("toolmend.error.message")
        outcome = attributes.get("toolmend.followed_by")
        if isinstance(tool, str) and isinstance(text, str) and isinstance(outcome, str):
            yield tool, text, outcome
        return
    tool = obj.get("tool") or obj.get("name")
    if not isinstance(tool, str):
        return
    if "cause" in obj or "history" in obj:  # a CallRecord
        if obj.get("failed") is False:
            for attempt in obj.get("history") or ():
                if isinstance(attempt, Mapping) and isinstance(attempt.get("error"), str):
                    yield tool, attempt["error"], "retry_succeeded"
        cause, outcome = obj.get("cause"), obj.get("outcome")
        if obj.get("failed") and isinstance(cause, str) and isinstance(outcome, str):
            yield tool, cause, outcome
        return
    content, outcome = obj.get("content"), obj.get("outcome")
    if obj.get("is_error", True) is False:
        return
    if not isinstance(content, str):
        content = json.dumps(content, sort_keys=True) if content is not None else None
    if isinstance(content, str) and isinstance(outcome, str):
        yield tool, content, outcome


def read_outcomes(lines: Iterable[str]) -> tuple[list[Observed], list[str]]:
    """The failures and their outcomes in JSON Lines, and what could not be read.

    Args:
        lines: JSON objects, one per line, in any of the accepted shapes.

    Returns:
        The observed failures, and ``"line N: why"`` for each line left out.
    """
    observed: list[Observed] = []
    skipped: list[str] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError) as exc:
            skipped.append(f"line {number}: not JSON ({exc})")
            continue
        if not isinstance(obj, Mapping):
            skipped.append(f"line {number}: not an object")
            continue
        found = list(_from_object(obj))
        if not found:
            skipped.append(f"line {number}: no tool, error text and outcome")
        for tool, text, outcome in found:
            if outcome not in OUTCOMES:
                skipped.append(f"line {number}: unknown outcome {outcome!r}")
                continue
            observed.append(Observed(tool, text, outcome, error_signature(text)))
    return observed, skipped


def _built_in(text: str) -> tuple[Kind | None, str]:
    """The kind the built-in rules read from a code or a status, if anything but wording."""
    verdict = classify_result(text, is_error=True, rules=Rules(), precision="strict")
    if verdict.kind is None or verdict.kind is Kind.AMBIGUOUS:
        return None, ""
    return verdict.kind, (verdict.basis or "").rpartition("/")[2]


def learn(
    observed: Iterable[Observed],
    *,
    min_support: int = MIN_SUPPORT,
    min_agreement: float = MIN_AGREEMENT,
    skipped: Iterable[str] = (),
) -> Learned:
    """Rules from outcomes: one per (tool, signature) with enough agreeing evidence.

    Args:
        observed: Failures and what followed them (see :func:`read_outcomes`).
        min_support: Agreeing outcomes a signature needs.
        min_agreement: The share of its evidence that must agree (0-1).
        skipped: Lines the reader left out, carried into the result.

    Returns:
        The rules, the conflicts with codes and statuses, and what stayed undecided.
    """
    counts: dict[tuple[str, str], Counter[str]] = {}
    example: dict[tuple[str, str], str] = {}
    read = 0
    for item in observed:
        read += item.count
        key = (item.tool, item.signature)
        counts.setdefault(key, Counter())[item.outcome] += item.count
        example.setdefault(key, item.text)
    rules: list[Rule] = []
    conflicts: list[Conflict] = []
    undecided: list[tuple[str, str, Mapping[str, int]]] = []
    for (tool, signature), seen in sorted(counts.items()):
        evidence = Counter({o: n for o, n in seen.items() if OUTCOMES[o] is not None})
        total = sum(evidence.values())
        if total < min_support:
            undecided.append((tool, signature, dict(seen)))
            continue
        outcome, support = max(evidence.items(), key=lambda item: (item[1], item[0]))
        agreement = round(support / total, 3)
        if agreement < min_agreement:
            rules.append(
                Rule(
                    "ambiguous", signature=signature, tool=tool, support=total, agreement=agreement
                )
            )
            continue
        kind = OUTCOMES[outcome]
        assert kind is not None
        built_in, basis = _built_in(example[(tool, signature)])
        overrides = False
        if built_in is not None and built_in is not kind:
            overrides = support >= _OVERRIDE_SUPPORT * min_support and (
                agreement >= _OVERRIDE_AGREEMENT
            )
            conflicts.append(
                Conflict(
                    tool,
                    signature,
                    kind.value,
                    f"{built_in.value} ({basis})",
                    support,
                    "learned" if overrides else "built-in",
                )
            )
            if not overrides:
                continue
        rules.append(
            Rule(
                kind.value,
                signature=signature,
                tool=tool,
                support=support,
                agreement=agreement,
                overrides=overrides,
            )
        )
    return Learned(tuple(rules), tuple(conflicts), tuple(undecided), read, tuple(skipped))


class OutcomeSource(Protocol):
    """Where outcomes are kept: anything whose ``lines`` gives ``toolmend learn``'s input.

    A source that can count for itself also has ``observed(since=, tool=)``,
    giving :class:`Observed` items with their ``count``
    (:class:`~toolmend.durable.SqlOutcomeStore` groups in SQL), and
    :func:`learned_rules` then reads that instead of every line.
    """

    def lines(self, *, since: float | None = None, tool: str | None = None) -> Iterable[str]:
        """JSON lines of outcomes, as ``toolmend learn`` reads them.

        Args:
            since: Only outcomes recorded at or after this time (``time.time()`` seconds).
            tool: Only this tool's outcomes.
        """
        ...


_WILD = frozenset("*?[")


@dataclass(frozen=True, slots=True)
class _StoreLoader:
    """Learns the rules again from every outcome in the store (see :func:`learned_rules`)."""

    store: OutcomeSource
    base: tuple[Rule, ...]
    precision: str
    tools: tuple[str, ...] | None
    window: float | None
    min_support: int
    min_agreement: float

    def _observed(self) -> Iterator[Observed]:
        since = None if self.window is None else time.time() - self.window
        names: tuple[str | None, ...] = (None,)
        if self.tools is not None and not any(_WILD & set(p) for p in self.tools):
            names = self.tools  # plain names: the store filters
        counted = getattr(self.store, "observed", None)
        for tool in names:
            if callable(counted):
                yield from counted(since=since, tool=tool)
            else:
                yield from read_outcomes(self.store.lines(since=since, tool=tool))[0]

    def __call__(self) -> Rules:
        observed: Iterable[Observed] = self._observed()
        tools = self.tools
        if tools is not None:
            observed = [o for o in observed if any(fnmatch.fnmatchcase(o.tool, p) for p in tools)]
        learned = learn(observed, min_support=self.min_support, min_agreement=self.min_agreement)
        log.debug(
            "toolmend: %d rules learned from %d outcomes in %r (%d conflicts dropped)",
            len(learned.rules),
            learned.read,
            self.store,
            sum(1 for c in learned.conflicts if c.kept != "learned"),
        )
        return Rules((*self.base, *learned.rules), precision=self.precision)

    def __str__(self) -> str:
        return f"rules learned from {self.store!r}"


def learned_rules(
    store: OutcomeSource,
    *,
    refresh: float = 60.0,
    min_support: int = MIN_SUPPORT,
    min_agreement: float = MIN_AGREEMENT,
    tools: Iterable[str] | None = None,
    window: float | None = None,
    precision: str = BALANCED,
    base: Rules | Iterable[Rule | Mapping[str, Any]] = (),
    clock: Callable[[], float] = time.monotonic,
) -> Rules:
    """Rules learned from an outcome store, learned again every ``refresh`` seconds.

    What ``toolmend learn --store`` would write, kept current while agents run:
    install it for every adapter with ``set_rules(learned_rules(store))``.  The
    store is read again on use once ``refresh`` seconds have passed (no thread),
    by the one call that notices; a store that fails leaves the last rules in
    force and logs a warning on the ``toolmend`` logger, and so does a first
    read that fails (the set then starts with ``base`` alone).  A learned rule
    applies to the tool whose outcomes taught it, with basis
    ``learned:<signature>``, under the same thresholds and conflict rules as
    :func:`learn`.  A reading uses the store's ``observed`` when it has one
    (counts per tool, signature and outcome, made in SQL), else every line in
    ``window``; either way its cost grows with the rows the store keeps.

    Args:
        store: Where the outcomes are (:class:`~toolmend.durable.SqlOutcomeStore`,
            or anything with its ``lines(since=, tool=)``).
        refresh: Seconds between two readings of the store.
        min_support: Agreeing outcomes a signature needs.
        min_agreement: The share of its evidence that must agree (0-1).
        tools: ``fnmatch`` patterns of the tools to learn for (default: all).
        window: Learn only from outcomes of the last ``window`` seconds (default: all kept).
        precision: The set's precision: ``balanced`` or ``strict``.
        base: Rules kept in front of the learned ones (user rules, a reviewed
            rules file); a learned rule of ``base`` wins over one of the store.
        clock: Monotonic seconds, for the refresh interval (tests pass a fake one).

    Returns:
        The rules, following the store.
    """
    fixed = base.rules if isinstance(base, Rules) else Rules(base).rules
    loader = _StoreLoader(
        store,
        fixed,
        precision,
        None if tools is None else tuple(tools),
        window,
        min_support,
        min_agreement,
    )
    try:
        first = loader()
    except Exception as exc:  # configuration must not fail because the store is down
        log.warning("toolmend: %s not loaded, starting without them: %s", loader, exc)
        first = Rules(fixed, precision=precision)
    return Rules(first.rules, precision=precision, loader=loader, refresh=refresh, clock=clock)
