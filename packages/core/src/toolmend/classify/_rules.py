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
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Any

from .._types import Kind

__all__ = ["CLEAN", "Rule", "RuleMatch", "Rules", "current_rules", "load_rules", "set_rules"]

CLEAN = "clean"
_KINDS = {k.value for k in Kind} | {CLEAN}


@dataclass(frozen=True, slots=True)
class Rule:
    """One user rule.  Exactly one of ``phrase``, ``code`` or ``field`` (with ``equals``).

    ``phrase`` and ``code`` are case-sensitive substrings of the result's text
    (``code`` must stand as a whole token); ``field`` is a dotted path into a
    JSON object result (``error.reason``) whose value must equal ``equals``.
    ``tool`` scopes the rule to tools whose name matches it (a ``fnmatch``
    pattern); ``name`` is what reports show as the rule.

    Attributes:
        kind: The kind a match decides: ``transient``, ``fixable``, ``unrecoverable`` or
            ``ambiguous``.
        phrase: A substring of the text.
        code: A code that must stand as a whole token in the text.
        field: A dotted path into a JSON object result.
        equals: The value at ``field`` that matches.
        tool: A pattern of the tool names the rule applies to.
        name: What reports show as the rule.
    """

    kind: str
    phrase: str | None = None
    code: str | None = None
    field: str | None = None
    equals: str | int | bool | None = None
    tool: str | None = None
    name: str | None = None

    def __post_init__(self) -> None:
        kind = self.kind.value if isinstance(self.kind, Kind) else self.kind
        object.__setattr__(self, "kind", kind)
        if kind not in _KINDS:
            raise ValueError(f"rule kind must be one of {', '.join(sorted(_KINDS))}; got {kind!r}")
        given = [x for x in (self.phrase, self.code, self.field) if x is not None]
        if len(given) != 1 or any(not isinstance(x, str) or not x for x in given):
            raise ValueError("a rule needs exactly one non-empty phrase, code or field")
        if self.field is not None and self.equals is None:
            raise ValueError("a field rule needs equals")

    @property
    def label(self) -> str:
        """The rule's name in reports: its own name, else what it matches."""
        return self.name or self.phrase or self.code or f"{self.field}={self.equals}"


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
    """An ordered set of user rules: the first that matches decides.

    Args:
        rules: The rules (or their mappings), in order.
    """

    __slots__ = ("_has_fields", "rules")

    def __init__(self, rules: Iterable[Rule | Mapping[str, Any]] = ()) -> None:
        self.rules: tuple[Rule, ...] = tuple(
            r if isinstance(r, Rule) else Rule(**dict(r)) for r in rules
        )
        self._has_fields = any(r.field is not None for r in self.rules)

    def __len__(self) -> int:
        return len(self.rules)

    def __bool__(self) -> bool:
        return bool(self.rules)

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
        for rule in self.rules:
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


def load_rules(path: str | PathLike[str]) -> Rules:
    """Rules from a JSON file: ``{"rules": [{...}, ...]}`` or a bare list.

    Args:
        path: The JSON file.

    Returns:
        The rules, validated.

    Raises:
        ValueError: The file is not a list of valid rules.
    """
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    items = data.get("rules") if isinstance(data, Mapping) else data
    if not isinstance(items, list):
        raise ValueError(f"{path}: expected a list of rules under 'rules'")
    return Rules(items)
