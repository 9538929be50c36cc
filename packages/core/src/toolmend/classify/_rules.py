"""User rules: your own codes and phrases, checked before the built-in ones.

Internal APIs speak their own dialects: a billing service that answers
``{"reason": "QUOTA"}`` when a per-minute quota is spent means "try again"; a
phrase of an in-house tool means "fix the argument".  A :class:`Rule` names a
phrase, a code or a JSON field value and the kind it means, optionally only for
one tool; a :class:`Rules` set is passed to ``classify_result``/``rewrite`` or installed
for every call with :func:`set_rules` (adapters then need no change).  A rule
that matches decides whether the result failed and how: kind ``clean`` marks a
text that only looks like a failure.  Rules files are JSON:

    {"rules": [{"kind": "transient", "field": "reason", "equals": "QUOTA",
                "tool": "billing_*", "name": "billing-quota"}]}

Learned rules (``toolmend learn``) name an error *signature* instead
(:func:`~toolmend.integrations.error_signature`) and carry the evidence behind
them (``support``, ``agreement``).  They are looked up in a dict, after the
built-in rules, and only for a result already judged failed: what a deployment's
outcomes taught decides the kind, never whether something failed, and never over
a code or a status unless the outcomes contradicted it strongly (``overrides``).
A set's ``precision`` (``balanced`` or ``strict``) says how much wording may
decide: under ``strict``, guidance comes only from flags, envelopes, codes,
statuses, argument readers, user rules and learned rules.
"""

from __future__ import annotations

import fnmatch
import json
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Any

from .._types import Kind

log = logging.getLogger("toolmend")

__all__ = [
    "BALANCED",
    "CLEAN",
    "PRECISIONS",
    "STRICT",
    "Rule",
    "RuleMatch",
    "Rules",
    "current_rules",
    "load_rules",
    "set_rules",
]

CLEAN = "clean"
_KINDS = {k.value for k in Kind} | {CLEAN}
BALANCED = "balanced"
STRICT = "strict"
PRECISIONS = (BALANCED, STRICT)
"""How much wording may decide a kind: ``balanced`` (the default) or ``strict``."""


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule.  Exactly one of ``phrase``, ``code``, ``field`` (with ``equals``) or ``signature``.

    ``phrase`` and ``code`` are case-sensitive substrings of the result's text
    (``code`` must stand as a whole token); ``field`` is a dotted path into a
    JSON object result (``error.reason``) whose value must equal ``equals``.
    ``tool`` scopes the rule to tools whose name matches it (a ``fnmatch``
    pattern); ``name`` is what reports show as the rule.  ``signature`` makes it
    a learned rule: it matches a failed result whose error signature is exactly
    this one.

    Attributes:
        kind: The kind a match decides: ``transient``, ``fixable``, ``unrecoverable`` or
            ``ambiguous``.
        phrase: A substring of the text.
        code: A code that must stand as a whole token in the text.
        field: A dotted path into a JSON object result.
        equals: The value at ``field`` that matches.
        tool: A pattern of the tool names the rule applies to.
        name: What reports show as the rule.
        signature: The error signature a learned rule matches.
        support: How many observed outcomes agreed with a learned rule's kind.
        agreement: The share of the signature's outcomes that agreed.
        overrides: Whether a learned rule may override a code or a status (its
            outcomes contradicted that evidence strongly).
    """

    kind: str
    phrase: str | None = None
    code: str | None = None
    field: str | None = None
    equals: str | int | bool | None = None
    tool: str | None = None
    name: str | None = None
    signature: str | None = None
    support: int | None = None
    agreement: float | None = None
    overrides: bool = False

    def __post_init__(self) -> None:
        kind = self.kind.value if isinstance(self.kind, Kind) else self.kind
        object.__setattr__(self, "kind", kind)
        if kind not in _KINDS:
            raise ValueError(f"rule kind must be one of {', '.join(sorted(_KINDS))}; got {kind!r}")
        given = [x for x in (self.phrase, self.code, self.field, self.signature) if x is not None]
        if len(given) != 1 or any(not isinstance(x, str) or not x for x in given):
            raise ValueError("a rule needs exactly one non-empty phrase, code, field or signature")
        if self.field is not None and self.equals is None:
            raise ValueError("a field rule needs equals")

    @property
    def label(self) -> str:
        """The rule's name in reports: its own name, else what it matches."""
        if self.name:
            return self.name
        if self.signature is not None:
            return f"learned:{self.signature}"
        return self.phrase or self.code or f"{self.field}={self.equals}"


@dataclass(frozen=True, slots=True)
class RuleMatch:
    """A user rule that matched: its kind (or ``clean``), its name and the matched span."""

    kind: Kind | None
    name: str
    span: str


def _token(text: str, code: str) -> bool:
    start = text.find(code)
    while start >= 0:
        end = start + len(code)
        before = text[start - 1] if start else " "
        after = text[end] if end < len(text) else " "
        if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
            return True
        start = text.find(code, start + 1)
    return False


def _field(obj: Any, path: str) -> Any:
    for part in path.split("."):
        if isinstance(obj, list) and obj:
            obj = obj[0]
        if not isinstance(obj, Mapping) or part not in obj:
            return None
        obj = obj[part]
    return obj


class Rules:
    """An ordered set of rules: the first that matches decides.

    A set can follow a source (a file, an outcome store): ``loader`` is called
    again on use once ``refresh`` seconds have passed since the last call (no
    thread; one caller at a time, the others go on with the rules in force).
    It returns the new set, or ``None`` when nothing changed; when it raises,
    the last rules stay and the error is logged on the ``toolmend`` logger.

    Args:
        rules: The rules (or their mappings), in order.
        precision: ``balanced`` (wording may decide a kind) or ``strict`` (only
            flags, envelopes, codes, statuses, argument readers and rules may).
        loader: Reads the rules again: a fresh :class:`Rules`, or ``None`` if unchanged.
        refresh: Seconds between calls of ``loader`` (``None``: never).
        clock: Monotonic seconds (tests pass a fake one).
    """

    __slots__ = (
        "_checked",
        "_clock",
        "_has_fields",
        "_learned",
        "_loader",
        "_lock",
        "_phrased",
        "precision",
        "refresh",
        "rules",
    )

    def __init__(
        self,
        rules: Iterable[Rule | Mapping[str, Any]] = (),
        *,
        precision: str = BALANCED,
        loader: Callable[[], Rules | None] | None = None,
        refresh: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}; got {precision!r}")
        self._loader = loader
        self.refresh = refresh if loader is not None else None
        self._clock = clock
        self._checked = clock()
        self._lock = threading.Lock()
        self._set(tuple(r if isinstance(r, Rule) else Rule(**dict(r)) for r in rules), precision)

    def _set(self, rules: tuple[Rule, ...], precision: str) -> None:
        self.precision = precision
        self.rules = rules
        self._phrased = tuple(r for r in self.rules if r.signature is None)
        self._has_fields = any(r.field is not None for r in self._phrased)
        learned: dict[str, list[Rule]] = {}
        for rule in self.rules:
            if rule.signature is not None:
                learned.setdefault(rule.signature, []).append(rule)
        self._learned = learned

    def __len__(self) -> int:
        return len(self.rules)

    def __bool__(self) -> bool:
        return bool(self.rules) or self.precision != BALANCED

    def _reload(self) -> None:
        """Call the loader when ``refresh`` seconds passed; keep the last rules if it fails."""
        loader, every = self._loader, self.refresh
        if loader is None or every is None:
            return
        now = self._clock()
        if now - self._checked < every or not self._lock.acquire(blocking=False):
            return
        try:
            self._checked = now
            fresh = loader()
            if fresh is not None:
                self._set(fresh.rules, fresh.precision)
        except Exception as exc:  # a source that fails must never fail a tool call
            log.warning("toolmend: %s not reloaded, the last one stays: %s", loader, exc)
        finally:
            self._lock.release()

    @property
    def has_phrases(self) -> bool:
        """Whether any phrase, code or field rule is in the set (checked before built-ins).

        Every classification asks this first, so a set that follows a source
        (``loader``) checks its refresh interval here.
        """
        self._reload()
        return bool(self._phrased)

    @property
    def has_learned(self) -> bool:
        """Whether any learned (signature) rule is in the set."""
        return bool(self._learned)

    def learned(self, signature: str, tool: str | None = None) -> Rule | None:
        """The learned rule for ``signature`` in scope for ``tool``: one dict lookup.

        Args:
            signature: The failed result's error signature.
            tool: The tool's name.
        """
        for rule in self._learned.get(signature, ()):
            if rule.tool is None or (tool is not None and fnmatch.fnmatchcase(tool, rule.tool)):
                return rule
        return None

    def match(self, text: str, tool: str | None = None) -> RuleMatch | None:
        """The first rule in scope for ``tool`` that matches ``text``.

        Args:
            text: The result's text.
            tool: The tool's name.
        """
        obj: Any = None
        if self._has_fields and text.lstrip()[:1] == "{":
            try:
                obj = json.loads(text)
            except (ValueError, RecursionError):
                obj = None
        for rule in self._phrased:
            if rule.tool is not None and (tool is None or not fnmatch.fnmatchcase(tool, rule.tool)):
                continue
            span = None
            if rule.phrase is not None and rule.phrase in text:
                span = rule.phrase
            elif rule.code is not None and _token(text, rule.code):
                span = rule.code
            elif rule.field is not None and obj is not None:
                value = _field(obj, rule.field)
                if value is not None and value == rule.equals:
                    span = f"{rule.field}={json.dumps(value)}"
            if span is not None:
                kind = None if rule.kind == CLEAN else Kind(rule.kind)
                return RuleMatch(kind, rule.label, span)
        return None


_current = Rules()


def set_rules(rules: Rules | Iterable[Rule | Mapping[str, Any]] | None) -> Rules:
    """Install rules for every ``classify_result`` and ``rewrite`` that names none.

    Returns the old set.

    Args:
        rules: The rules (``Rule`` objects or their mappings); ``None`` removes them.

    Returns:
        The rules installed before.
    """
    global _current
    old = _current
    _current = rules if isinstance(rules, Rules) else Rules(rules or ())
    return old


def current_rules() -> Rules:
    """The rules in effect in this context (see :func:`set_rules`)."""
    return _current


def load_rules(path: str | PathLike[str], *, refresh: float | None = None) -> Rules:
    """Rules from a JSON file: ``{"rules": [{...}, ...]}`` or a bare list.

    The object form may also set ``"precision": "strict"``; ``toolmend learn``
    writes this form, with its rules' evidence.  With ``refresh``, the rules read
    the file again when it changed, at most every ``refresh`` seconds (checked on
    use, no thread); a file that became unreadable leaves the last rules in force.

    Args:
        path: The JSON file.
        refresh: Seconds between checks of the file for changes (default: never).

    Returns:
        The rules, validated.

    Raises:
        ValueError: The file is not a list of valid rules.
    """
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    items = data.get("rules") if isinstance(data, Mapping) else data
    if not isinstance(items, list):
        raise ValueError(f"{path}: expected a list of rules under 'rules'")
    precision = data.get("precision", BALANCED) if isinstance(data, Mapping) else BALANCED
    if refresh is None:
        return Rules(items, precision=str(precision))
    return Rules(items, precision=str(precision), loader=_FileLoader(Path(path)), refresh=refresh)


class _FileLoader:
    """Reads a rules file again when its modification time changed."""

    def __init__(self, source: Path) -> None:
        self.source = source
        self.stamp = source.stat().st_mtime

    def __call__(self) -> Rules | None:
        stamp = self.source.stat().st_mtime
        if stamp == self.stamp:
            return None
        fresh = load_rules(self.source)
        self.stamp = stamp
        return fresh

    def __str__(self) -> str:
        return f"rules file {self.source}"
