"""The shared types every decision produces: kinds, forms, detection records and reports.

All records are frozen and JSON-serialisable through ``to_dict`` so that a report
can go to a log line, an HTTP header or a test assertion without conversion code
in the adapters.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from ._bounds import prune

__all__ = [
    "Detection",
    "Form",
    "Kind",
    "Report",
    "Source",
]


class Kind(enum.StrEnum):
    """What a failure means for the next action (paper, Table 1)."""

    TRANSIENT = "transient"
    FIXABLE = "fixable"
    UNRECOVERABLE = "unrecoverable"
    AMBIGUOUS = "ambiguous"


class Form(enum.StrEnum):
    """How a failure is delivered to the model at the decision step."""

    OFF = "off"
    C1 = "c1"
    C2 = "c2"
    C3 = "c3"
    C4 = "c4"

    @classmethod
    def parse(cls, value: str | Form) -> Form:
        """Accept ``c0`` as an alias of ``off``: the papers call the unchanged form C0."""
        if isinstance(value, Form):
            return value
        text = str(value).strip().lower()
        if text == "c0":
            return cls.OFF
        return cls(text)


class Source(enum.StrEnum):
    """Which evidence decided that a result is a failure."""

    FLAG = "flag"
    AGENT = "agent"
    GENERIC = "generic"
    EXCEPTION = "exception"
    CONTRACT = "contract"


@dataclass(frozen=True, slots=True)
class Detection:
    """One failed tool result, where it sits, and why it was judged so.

    Attributes:
        index: The result's index in the conversation.
        tool_name: The tool's name.
        call_id: The id of the call the result answers.
        arguments: The call's arguments.
        error: The result's error text.
        kind: The failure's kind.
        rule: The rule that judged it.
        source: Where the failure was seen.
        reason: The evidence.
        guidance: The next step the model is given.
    """

    index: int | None
    tool_name: str | None
    call_id: str | None
    arguments: Any
    error: str
    kind: Kind
    rule: str
    source: Source
    reason: str | None = None
    guidance: str | None = None
    neutralised: tuple[str, ...] = ()
    """Why the tool text restated in the note had to be neutralised (empty: it did not)."""
    basis: str | None = field(default=None, compare=False)
    """The classification rule that read ``reason`` (``paper``, ``code:<system>``, ``http``...)."""
    omitted: tuple[str, ...] = ()
    """Sentences of the error that the note left out as steps for the developer."""

    def to_dict(self) -> dict[str, Any]:
        """This detection as JSON-ready data, its arguments within :mod:`toolmend._bounds`."""
        extra: dict[str, Any] = {"neutralised": list(self.neutralised)} if self.neutralised else {}
        if self.omitted:
            extra["omitted"] = list(self.omitted)
        return {
            "index": self.index,
            "tool_name": self.tool_name,
            "call_id": self.call_id,
            "arguments": prune(self.arguments),
            "error": self.error,
            "kind": self.kind.value,
            "rule": self.rule,
            "source": self.source.value,
            "reason": self.reason,
            "basis": self.basis,
            "guidance": self.guidance,
            **extra,
        }


@dataclass(frozen=True, slots=True)
class Report:
    """What one rewrite saw and did, so users can always see what the model was shown.

    Attributes:
        detections: The failed results found.
        form: The form applied.
        changed: Whether the conversation differs from what was given.
        skipped: What could not be read, and why.
    """

    detections: tuple[Detection, ...]
    form: Form
    changed: bool
    skipped: tuple[str, ...] = field(default=())
    collapsed: tuple[str, ...] = field(default=())
    """Earlier results shown as a one-line stub: ``"<index>: <tool> resolved|repeated"``."""

    def to_dict(self) -> dict[str, Any]:
        """This report as JSON-ready data."""
        extra: dict[str, Any] = {"collapsed": list(self.collapsed)} if self.collapsed else {}
        return {
            "detections": [d.to_dict() for d in self.detections],
            "form": self.form.value,
            "changed": self.changed,
            "skipped": list(self.skipped),
            **extra,
        }

    def header(self) -> str:
        """A compact one-line summary for an HTTP header or a log line."""
        parts = [f"{d.index}:{d.tool_name or '?'}:{d.kind.value}:{d.rule}" for d in self.detections]
        failed = ",".join(parts) if parts else "none"
        quoted = sum(1 for d in self.detections if d.neutralised)
        tail = f"; neutralised={quoted}" if quoted else ""
        if self.collapsed:
            tail += f"; collapsed={len(self.collapsed)}"
        return f"failed={failed}; form={self.form.value}; changed={str(self.changed).lower()}{tail}"
