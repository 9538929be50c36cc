"""Outcome contracts as data: violations, per-tool contracts and the saved set.

A contract says what a tool's successful results look like, learned from
recorded results or declared by a schema.  Everything here is frozen and has
one JSON form, versioned, so a set mined once can be reviewed, committed and
loaded by every adapter alike.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ._values import json_text

__all__ = [
    "FORMAT",
    "TOLERANCE",
    "VERSION",
    "Affine",
    "Code",
    "Contracts",
    "Echo",
    "ObjectRule",
    "ToolContract",
    "Violation",
]

FORMAT = "toolmend.contracts"
VERSION = 1
TOLERANCE = 1e-5
"""Relative tolerance of an affine relation at check time (the paper's), looser than mining's."""


class Code(enum.StrEnum):
    """The violated property; the names are the paper's, so receipts match what was measured."""

    EXPLICIT_ERROR = "explicit_error"
    SCHEMA_VIOLATION = "schema_violation"
    LEARNED_TYPE_MISMATCH = "learned_type_mismatch"
    MISSING_LEARNED_FIELD = "missing_learned_field"
    UNEXPECTED_FIELD = "unexpected_field"
    UNSEEN_CATEGORY = "unseen_category"
    NONPOSITIVE_VALUE = "nonpositive_value"
    LEARNED_ECHO_MISMATCH = "learned_echo_mismatch"
    AFFINE_RELATION_BROKEN = "affine_relation_broken"


ORDER: Mapping[Code, int] = {code: rank for rank, code in enumerate(Code)}
"""Receipts list violations in this order: the most telling first."""


@dataclass(frozen=True, slots=True)
class Violation:
    """One violated property of one result: what was expected where, and what came.

    Attributes:
        code: Which property was violated.
        path: Where in the result.
        expected: What the contract expects there.
        observed: What came, capped.
        detail: The violation in one sentence.
        tool: The tool's name.
    """

    code: Code
    path: str
    expected: Any
    observed: Any
    detail: str
    tool: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """This violation as JSON-ready data."""
        return {
            "code": self.code.value,
            "path": self.path,
            "expected": self.expected,
            "observed": self.observed,
            "detail": self.detail,
        }


@dataclass(frozen=True, slots=True)
class ObjectRule:
    """The keys of the object at one path: those always present, and (when closed) all allowed.

    Attributes:
        required: The keys present in every recorded object.
        allowed: Every key allowed (``None``: the key set is open).
        support: Recorded objects behind the rule.
    """

    required: frozenset[str]
    allowed: frozenset[str] | None
    support: int


@dataclass(frozen=True, slots=True)
class Echo:
    """A result field that repeats a call argument on every recorded call.

    Attributes:
        path: The result field.
        argument: The argument it repeats.
        fold_case: Whether case is ignored in the comparison.
        support: Recorded calls behind the rule.
    """

    path: str
    argument: str
    fold_case: bool
    support: int


@dataclass(frozen=True, slots=True)
class Affine:
    """``target = intercept + sum(coefficient * field)`` on every recorded result.

    Attributes:
        target: The field the relation computes.
        terms: Each input field with its coefficient.
        intercept: The constant term.
        support: Recorded results behind the relation.
    """

    target: str
    terms: tuple[tuple[str, float], ...]
    intercept: float
    support: int

    def formula(self) -> str:
        """``total = subtotal + tax - 0.5*discount + 2``: readable in a receipt's detail."""
        text = ""
        for path, c in self.terms:
            sign = "-" if c < 0 else "+"
            size = abs(c)
            term = path if size == 1 else f"{size:g}*{path}"
            text += f" {sign} {term}"
        if self.intercept:
            text += f" {'-' if self.intercept < 0 else '+'} {abs(self.intercept):g}"
        text = text.strip()
        if text.startswith(("+ ", "- ")):
            text = text[2:] if text[0] == "+" else "-" + text[2:]
        return f"{self.target} = {text}"


@dataclass(frozen=True, slots=True)
class ToolContract:
    """Every admitted invariant of one tool's results, mined and declared.

    Attributes:
        tool: The tool's name.
        samples: Recorded results mined.
        objects: The key rules of the objects, by path.
        types: The JSON types seen at each path.
        domains: The categorical values of each path.
        positive: The paths whose numbers are always positive.
        echoes: Result fields that repeat a call argument.
        affine: Affine relations between numeric fields.
        error_free: Whether no recorded result read as an error.
        schema: The declared JSON Schema of the results, if any.
    """

    tool: str
    samples: int = 0
    objects: Mapping[str, ObjectRule] = field(default_factory=dict)
    types: Mapping[str, frozenset[str]] = field(default_factory=dict)
    domains: Mapping[str, frozenset[str]] = field(default_factory=dict)
    positive: frozenset[str] = frozenset()
    echoes: tuple[Echo, ...] = ()
    affine: tuple[Affine, ...] = ()
    error_free: bool = False
    schema: Mapping[str, Any] | None = None
    support: Mapping[str, int] = field(default_factory=dict)
    """Recorded results in which each learned path occurred: the evidence behind each invariant."""

    def to_dict(self) -> dict[str, Any]:
        """These statistics as JSON-ready data."""
        return {
            "samples": self.samples,
            "error_free": self.error_free,
            "objects": {
                path: {
                    "required": sorted(rule.required),
                    "allowed": None if rule.allowed is None else sorted(rule.allowed),
                    "support": rule.support,
                }
                for path, rule in sorted(self.objects.items())
            },
            "types": {path: sorted(t) for path, t in sorted(self.types.items())},
            "domains": {path: sorted(v) for path, v in sorted(self.domains.items())},
            "positive": sorted(self.positive),
            "echoes": [
                {
                    "path": e.path,
                    "argument": e.argument,
                    "fold_case": e.fold_case,
                    "support": e.support,
                }
                for e in self.echoes
            ],
            "affine": [
                {
                    "target": a.target,
                    "terms": [[p, c] for p, c in a.terms],
                    "intercept": a.intercept,
                    "support": a.support,
                }
                for a in self.affine
            ],
            "support": dict(sorted(self.support.items())),
            "schema": None if self.schema is None else dict(self.schema),
        }

    @classmethod
    def from_dict(cls, tool: str, data: Mapping[str, Any]) -> ToolContract:
        """Read one tool's contract; a wrong shape raises ``ValueError`` naming the tool.

        Args:
            tool: The tool's name.
            data: Its saved contract.
        """
        try:
            schema = data.get("schema")
            if schema is not None and not isinstance(schema, Mapping):
                raise ValueError("schema must be an object or null")
            return cls(
                tool=tool,
                samples=int(data.get("samples", 0)),
                error_free=bool(data.get("error_free", False)),
                objects={
                    str(path): ObjectRule(
                        required=frozenset(map(str, rule.get("required", ()))),
                        allowed=(
                            None
                            if rule.get("allowed") is None
                            else frozenset(map(str, rule["allowed"]))
                        ),
                        support=int(rule.get("support", 0)),
                    )
                    for path, rule in dict(data.get("objects", {})).items()
                },
                types={str(p): frozenset(map(str, t)) for p, t in data.get("types", {}).items()},
                domains={
                    str(p): frozenset(map(str, v)) for p, v in data.get("domains", {}).items()
                },
                positive=frozenset(map(str, data.get("positive", ()))),
                echoes=tuple(
                    Echo(
                        path=str(e["path"]),
                        argument=str(e["argument"]),
                        fold_case=bool(e.get("fold_case", False)),
                        support=int(e.get("support", 0)),
                    )
                    for e in data.get("echoes", ())
                ),
                affine=tuple(
                    Affine(
                        target=str(a["target"]),
                        terms=tuple((str(p), float(c)) for p, c in a["terms"]),
                        intercept=float(a.get("intercept", 0.0)),
                        support=int(a.get("support", 0)),
                    )
                    for a in data.get("affine", ())
                ),
                support={str(p): int(n) for p, n in data.get("support", {}).items()},
                schema=None if schema is None else dict(schema),
            )
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"contract for tool {tool!r} is malformed: {exc}") from exc

    @property
    def mined(self) -> bool:
        """Whether the contract was mined from recorded results (not only declared)."""
        return self.samples > 0


@dataclass(frozen=True, slots=True)
class Contracts:
    """The contracts of a set of tools, and the substitutes each tool's receipt may name.

    ``substitutes`` maps a tool to the tools that can stand in for it; a receipt
    lists those the agent actually has.  Naming a tool among its own substitutes
    advertises a retry.

    Attributes:
        tools: Each tool's contract.
        substitutes: The tools that can stand in for each tool.
        tolerance: The relative tolerance of numeric comparisons.
    """

    tools: Mapping[str, ToolContract] = field(default_factory=dict)
    substitutes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    tolerance: float = TOLERANCE

    def get(self, tool: str) -> ToolContract | None:
        """The contract of ``tool``, if it has one.

        Args:
            tool: The tool's name.
        """
        return self.tools.get(tool)

    def to_dict(self) -> dict[str, Any]:
        """The contracts file's JSON-ready data (format and version first)."""
        return {
            "format": FORMAT,
            "version": VERSION,
            "tolerance": self.tolerance,
            "substitutes": {t: list(s) for t, s in sorted(self.substitutes.items())},
            "tools": {name: c.to_dict() for name, c in sorted(self.tools.items())},
        }

    def dumps(self) -> str:
        """The contracts file's text, as :meth:`save` writes it."""
        return json_text(self.to_dict(), indent=2) + "\n"

    def save(self, path: str | Path) -> None:
        """Write the contracts file to ``path`` (UTF-8).

        Args:
            path: Where to write.
        """
        Path(path).write_text(self.dumps(), encoding="utf-8")

    @classmethod
    def from_dict(cls, data: Any) -> Contracts:
        """Read a saved set; another format or a newer version raises ``ValueError``.

        Args:
            data: The file's parsed JSON.
        """
        if not isinstance(data, Mapping):
            raise ValueError("contracts must be a JSON object")
        if data.get("format") != FORMAT:
            raise ValueError(f"not a contracts file: format is {data.get('format')!r}")
        version = data.get("version")
        if version != VERSION:
            raise ValueError(f"unsupported contracts version {version!r} (this reads {VERSION})")
        tools = data.get("tools", {})
        substitutes = data.get("substitutes", {})
        if not isinstance(tools, Mapping) or not isinstance(substitutes, Mapping):
            raise ValueError("tools and substitutes must be objects")
        try:
            tolerance = float(data.get("tolerance", TOLERANCE))
            subs = {str(t): _names(s) for t, s in substitutes.items()}
        except (TypeError, ValueError) as exc:
            raise ValueError(f"contracts are malformed: {exc}") from exc
        return cls(
            tools={str(name): ToolContract.from_dict(str(name), c) for name, c in tools.items()},
            substitutes=subs,
            tolerance=tolerance,
        )

    @classmethod
    def loads(cls, text: str) -> Contracts:
        """Read a contracts file's text.

        Args:
            text: The file's text.

        Raises:
            ValueError: The text is not a contracts file; the message names what is wrong.
        """
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise ValueError(f"contracts are not JSON: {exc}") from exc
        return cls.from_dict(data)

    @classmethod
    def load(cls, path: str | Path) -> Contracts:
        """Read the contracts file at ``path``; see :meth:`loads`.

        Args:
            path: The file.
        """
        return cls.loads(Path(path).read_text(encoding="utf-8"))

    def with_substitutes(self, substitutes: Mapping[str, Iterable[str]]) -> Contracts:
        """The same contracts with ``substitutes`` added over the existing map.

        Args:
            substitutes: The tools that can stand in for each tool.
        """
        merged = dict(self.substitutes)
        merged.update({str(t): _names(s) for t, s in substitutes.items()})
        return replace(self, substitutes=merged)

    def declare(self, tool: str, schema: Mapping[str, Any]) -> Contracts:
        """The same contracts with ``schema`` declared for ``tool``'s results.

        Args:
            tool: The tool's name.
            schema: The JSON Schema of its results.
        """
        current = self.tools.get(tool) or ToolContract(tool)
        tools = dict(self.tools)
        tools[tool] = replace(current, schema=dict(schema))
        return replace(self, tools=tools)

    def merge(self, other: Contracts) -> Contracts:
        """Combine two sets: ``other``'s mined part and schema win where both have one.

        Args:
            other: The set to combine with this one.
        """
        tools = dict(self.tools)
        for name, theirs in other.tools.items():
            mine = tools.get(name)
            if mine is None:
                tools[name] = theirs
                continue
            base = theirs if theirs.mined or not mine.mined else mine
            schema = theirs.schema if theirs.schema is not None else mine.schema
            tools[name] = replace(base, schema=schema)
        substitutes = dict(self.substitutes)
        substitutes.update(other.substitutes)
        return Contracts(tools, substitutes, other.tolerance)


def _names(value: Any) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise ValueError(f"substitutes must be lists of tool names, not {value!r}")
    return tuple(dict.fromkeys(str(v) for v in value))
