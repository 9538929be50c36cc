"""A failed tool call as a value: the text the model reads and the record behind it.

The text says what failed (the exception, where in the tool's own code, how
many attempts) and a next step that is true for this call.  Retry guidance is
never given for a write that may have committed, and "try again" is never
said after retries were already spent.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import sysconfig
import traceback
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from .._bounds import jsonable, prune, safe_repr
from .._types import Detection, Form, Kind, Source
from ..classify._detect import Verdict
from ..classify._raised import ExceptionInfo, ResultFailed, classify_exception, describe_exception
from ..deliver._guidance import GUIDANCE, VERIFY_FIRST, cap_error
from ..deliver._quote import literal
from ._attempts import AttemptRecord, Stop, outcome_unknown
from ._effects import Effect

__all__ = [
    "BUDGET_SPENT",
    "DEADLINE_HINT",
    "DEADLINE_SPENT",
    "EXHAUSTED",
    "INVALID_ARGUMENTS",
    "LANDED",
    "LOOP_BUDGET",
    "WAIT_HINT",
    "ToolFailed",
    "ToolFailure",
    "failure_from_exception",
    "user_frames",
    "validation_details",
]

logger = logging.getLogger("toolmend.retry")

LATER = "Continue with other steps and call it again later, or tell the user it is unavailable."
EXHAUSTED = (
    "All {attempts} attempts failed with a temporary error, so retrying now is unlikely to help. "
    + LATER
)
DEADLINE_HINT = (
    "The service asked for a wait of {wait} before a retry, "
    "longer than the time left for this call. " + LATER
)
DEADLINE_SPENT = "The time allowed for this call ran out after {attempts}. " + LATER
BUDGET_SPENT = (
    "Automatic retries of {tool} are paused because its recent calls keep failing. " + LATER
)
WAIT_HINT = " The service asked for a wait of {wait} before a retry."
LANDED = (
    "A check after the error found that this call did take effect. "
    "Do not call it again for the same purpose."
)
LOOP_BUDGET = "Stop using {tool} for this task and tell the user what failed."
INVALID_ARGUMENTS = "Tool '{tool}' was not run: invalid arguments. {details}"

_LIBRARY_ROOTS = tuple(
    os.path.normcase(os.path.abspath(path)) + os.sep
    for path in {
        sysconfig.get_paths().get("stdlib", ""),
        sysconfig.get_paths().get("platstdlib", ""),
    }
    if path
)
_FRAMES_SHOWN = 3
_OWN = "toolmend"


def duration(seconds: float) -> str:
    """``5 seconds``, ``1 second``, ``1.5 seconds``, ``0.2 seconds``."""
    value = round(seconds, 1)
    if value == 1:
        return "1 second"
    return f"{value:g} seconds"


def _attempts(count: int) -> str:
    return f"{count} attempt" if count == 1 else f"{count} attempts"


def _in_own_package(parts: list[str]) -> bool:
    """A ``src/toolmend*/`` folder: the core or an adapter, installed editable."""
    return any(
        part.startswith(_OWN) and parts[i - 1] == "src" for i, part in enumerate(parts) if i > 0
    )


def _is_user_frame(filename: str, module: Any) -> bool:
    if filename.startswith("<") and filename != "<stdin>":
        return False
    if isinstance(module, str) and module.startswith(_OWN):
        return False
    path = os.path.normcase(os.path.abspath(filename))
    parts = path.split(os.sep)
    if "site-packages" in parts or "dist-packages" in parts or _in_own_package(parts):
        return False
    return not path.startswith(_LIBRARY_ROOTS)


def user_frames(exc: BaseException, limit: int = _FRAMES_SHOWN) -> str | None:
    """The last frames of the traceback in the user's code, outermost first.

    Not the standard library, installed packages, nor any ``toolmend*`` package
    (the core and every adapter, by module name or by a ``src/toolmend*`` folder).
    """
    try:
        frames = [
            (frame.f_code.co_filename, lineno, frame.f_code.co_name)
            for frame, lineno in traceback.walk_tb(exc.__traceback__)
            if _is_user_frame(frame.f_code.co_filename, frame.f_globals.get("__name__"))
        ]
    except Exception:
        return None
    if not frames:
        return None
    return " > ".join(
        f"{os.path.basename(filename)}:{lineno} in {name}"
        for filename, lineno, name in frames[-limit:]
    )


@dataclass(frozen=True, eq=False)
class ToolFailure:
    """A failed tool call: ``str()`` is the text for the model.

    A value, not an exception, so a tool can return it as its result.
    ``cause`` says what failed and ``guidance`` the next step (``None`` for
    an ambiguous failure: wrong guidance costs more than none).

    Attributes:
        tool: The tool's name.
        arguments: The arguments of the call.
        kind: What the failure means for the next action.
        attempts: Attempts made in all (0: refused before it ran).
        cause: What failed, capped: the text the model reads.
        guidance: The next step for the model.
        rule: The rule that judged the failure.
        reason: The evidence the classifier found.
        retry_after: Seconds the failure asked to wait before another attempt.
        outcome_unknown: Whether a write may have taken effect (the verify-first case).
        stop: Why no further attempt was made; ``None`` when toolmend did not retry.
        exception: What the last attempt raised, if anything.
        history: The failed attempts, oldest first.
    """

    tool: str
    arguments: Mapping[str, Any]
    kind: Kind
    attempts: int
    cause: str
    guidance: str | None
    rule: str = "exception"
    reason: str | None = None
    retry_after: float | None = None
    outcome_unknown: bool = False
    stop: Stop | None = None
    exception: BaseException | None = field(default=None, repr=False)
    history: tuple[AttemptRecord, ...] = ()

    def __str__(self) -> str:
        return self.cause if self.guidance is None else f"{self.cause}\n{self.guidance}"

    def result_text(self, form: Form | str, text: str | None = None) -> str:
        """The tool result's own text in ``form``.

        What the tool result itself says in ``form``: ``text`` (default: the cause),
        followed by the guidance in form C1, the one form that puts it in the result.

        Args:
            form: The delivery form.
            text: The result's own text (default: the cause).
        """
        shown = self.cause if text is None else text
        if self.guidance is None or Form.parse(form) is not Form.C1:
            return shown
        return f"{shown}\n{self.guidance}"

    @property
    def why_stopped(self) -> str | None:
        """Why no further attempt was made, for people.

        Why no further attempt was made, for people (``None``: the call never ran or
        was not retried by toolmend).
        """
        return self.stop.sentence if self.stop is not None else None

    @classmethod
    def from_exception(
        cls,
        exc: BaseException,
        *,
        tool: str,
        arguments: Mapping[str, Any] | None = None,
        effect: Effect | str = Effect.UNKNOWN,
    ) -> ToolFailure:
        """The failure of one attempt that raised ``exc``, outside ``integrations.execute``.

        For adapters whose framework caught the exception itself.  A
        :class:`ToolFailed` gives back the failure it carries; otherwise the
        exception is classified, and a tool whose ``effect`` is not repeatable
        gets the verify-first guidance when the call may have landed.

        Args:
            exc: What the attempt raised.
            tool: The tool's name.
            arguments: The arguments of the call.
            effect: The tool's declared effect.
        """
        if isinstance(exc, ToolFailed):
            return exc.failure
        info = classify_exception(exc)
        return failure_from_exception(
            exc,
            info,
            tool=tool,
            arguments=arguments if arguments is not None else {},
            attempts=1,
            stop=None,
            unknown=outcome_unknown(info, Effect.parse(effect)),
        )

    @classmethod
    def from_verdict(
        cls,
        verdict: Verdict,
        *,
        tool: str,
        arguments: Mapping[str, Any],
        text: str,
        effect: Effect | str = Effect.UNKNOWN,
    ) -> ToolFailure | None:
        """The failure a tool *result* stands for, judged from its text (no exception).

        For results a framework delivered as content, such as an MCP ``isError``
        result; ``None`` when the verdict is not a failure.

        Args:
            verdict: The core's verdict on the result.
            tool: The tool's name.
            arguments: The arguments of the call.
            text: The result's text, which becomes the cause.
            effect: The tool's declared effect: a tool that is not repeatable may have
                acted before it reported the failure, so a temporary or unclear one is
                told to check before repeating (as for a raised failure).
        """
        if not verdict.failed or verdict.kind is None:
            return None
        unknown = not Effect.parse(effect).repeatable
        guidance = verdict.guidance or GUIDANCE.get(verdict.kind)
        if unknown and verdict.kind in (Kind.TRANSIENT, Kind.AMBIGUOUS):
            guidance = VERIFY_FIRST
        return cls(
            tool=tool,
            arguments=arguments,
            kind=verdict.kind,
            attempts=1,
            cause=cap_error(text),
            guidance=guidance,
            rule=verdict.rule or "is_error",
            reason=verdict.reason,
            outcome_unknown=unknown,
        )

    def as_returned(self, verdict: Verdict) -> tuple[ToolFailure, Verdict]:
        """This failure, for a call whose last attempt returned a failed result.

        This failure, from :func:`toolmend.integrations.execute`, of a call whose last attempt
        *returned* a failed result that ``verdict`` judged.

        Frameworks hand some failures back as results (LangChain's error
        ``ToolMessage``, an MCP ``isError`` result); an adapter raises them as
        :class:`~toolmend.integrations.ResultFailed` so that the core decides about them as
        about a raised exception.  What the text alone cannot tell (a write that
        may have landed, retries already spent, a loop) is in this failure, not
        in ``verdict``.  Returns the failure with the rule and reason the result
        was judged by, as without retrying, and with no exception (the model
        reads the result itself); and ``verdict`` carrying this failure's next
        kind and next step, for the adapter's record of the result.

        Args:
            verdict: The verdict on the result the last attempt returned.
        """
        shown = dataclasses.replace(
            self, rule=verdict.rule or "is_error", reason=verdict.reason, exception=None
        )
        return shown, dataclasses.replace(verdict, kind=self.kind, guidance=self.guidance)

    @classmethod
    def not_run(
        cls, tool: str, arguments: Mapping[str, Any], cause: str, *, rule: str, reason: str
    ) -> ToolFailure:
        """A call refused before it ran because the model wrote it wrong.

        A call refused before it ran because the model wrote it wrong: always fixable,
        and nothing ran, so nothing can be duplicated.

        Args:
            tool: The tool's name.
            arguments: The arguments as the model wrote them.
            cause: What is wrong with the call.
            rule: The rule that refused it.
            reason: The evidence, for the report.
        """
        return cls(
            tool=tool,
            arguments=arguments,
            kind=Kind.FIXABLE,
            attempts=0,
            cause=cap_error(cause),
            guidance=GUIDANCE[Kind.FIXABLE],
            rule=rule,
            reason=reason,
        )

    @classmethod
    def invalid_arguments(
        cls, tool: str, arguments: Mapping[str, Any], details: str
    ) -> ToolFailure:
        """A call refused before it ran because its arguments are invalid: always fixable.

        ``details`` names what is wrong (see :func:`validation_details`).

        Args:
            tool: The tool's name.
            arguments: The arguments as the model wrote them.
            details: What is wrong with them.
        """
        cause = INVALID_ARGUMENTS.format(tool=tool, details=details)
        return cls.not_run(
            tool, arguments, cause, rule="invalid-arguments", reason="argument validation"
        )

    @property
    def detection(self) -> Detection:
        """This failure as the detection record a rewrite report lists."""
        return Detection(
            index=None,
            tool_name=self.tool,
            call_id=None,
            arguments=dict(self.arguments),
            error=self.cause,
            kind=self.kind,
            rule=self.rule,
            source=Source.EXCEPTION,
            reason=self.reason,
            guidance=self.guidance,
        )

    def verdict(self) -> Verdict:
        """The record to pass to ``rewrite(recorded={call_id: ...})``."""
        return Verdict(True, self.kind, self.rule, Source.EXCEPTION, self.reason, self.guidance)

    def to_dict(self) -> dict[str, Any]:
        """This failure as JSON-ready data (the exception as its description)."""
        return {
            "tool": self.tool,
            "arguments": jsonable(self.arguments),
            "kind": self.kind.value,
            "attempts": self.attempts,
            "cause": self.cause,
            "guidance": self.guidance,
            "rule": self.rule,
            "reason": self.reason,
            "retry_after": self.retry_after,
            "outcome_unknown": self.outcome_unknown,
            "stop": self.stop.value if self.stop is not None else None,
            "why_stopped": self.why_stopped,
            "exception": describe_exception(self.exception) if self.exception else None,
            "history": [record.to_dict() for record in self.history],
        }


class ToolFailed(Exception):
    """Carries a :class:`ToolFailure` where a framework expects a raised exception.

    A guarded tool returns its failure as a value; raising it as this lets the
    framework treat the call as failed (spans, hooks, its failure handler) while
    :meth:`ToolFailure.from_exception` still recovers the exact failure.

    Args:
        failure: The failure it carries.
    """

    def __init__(self, failure: ToolFailure) -> None:
        super().__init__(str(failure))
        self.failure = failure


def _short(value: Any) -> str:
    text = safe_repr(prune(value))
    return text if len(text) <= 80 else text[:77] + "..."


def validation_details(
    error: Any, *, prefix: str | None = None, only: Collection[str] | None = None
) -> str:
    """What a pydantic ``ValidationError`` says is wrong, in one line.

    What a pydantic ``ValidationError`` says is wrong, one ``path: message (got value)``
    per error, joined by ``; `` (``prefix`` starts each path, e.g. the parameter name).

    ``only`` keeps the errors whose path starts with one of those names: the
    arguments the model wrote, when the framework adds others itself (an
    injected id or state) that are missing until the call runs.  ``""`` when no
    error is left.

    Args:
        error: A pydantic ``ValidationError``.
        prefix: What starts each path, e.g. the parameter name.
        only: The top-level names whose errors are kept (``None``: all).
    """
    found = []
    for item in error.errors(include_url=False):
        where = tuple(item.get("loc", ()))
        if only is not None and not (where and where[0] in only):
            continue
        parts = (prefix, *where) if prefix is not None else where
        loc = ".".join(str(part) for part in parts)
        found.append(f"{loc}: {item.get('msg', 'invalid')} (got {_short(item.get('input'))})")
    return "; ".join(found)


def _guidance(
    info: ExceptionInfo,
    *,
    tool: str,
    attempts: int,
    stop: Stop | None,
    unknown: bool,
) -> str | None:
    if stop is Stop.LANDED:
        return LANDED
    if info.kind in (Kind.FIXABLE, Kind.UNRECOVERABLE):
        return GUIDANCE[info.kind]
    if unknown:
        return VERIFY_FIRST
    if info.kind is not Kind.TRANSIENT:
        return None
    hint = "" if info.retry_after is None else WAIT_HINT.format(wait=duration(info.retry_after))
    if stop is Stop.DEADLINE:
        if info.retry_after is not None:
            return DEADLINE_HINT.format(wait=duration(info.retry_after))
        return DEADLINE_SPENT.format(attempts=_attempts(attempts))
    if stop is Stop.BUDGET:
        return BUDGET_SPENT.format(tool=literal(tool)) + hint
    if stop is Stop.ATTEMPTS and attempts > 1:
        return EXHAUSTED.format(attempts=attempts) + hint
    return GUIDANCE[Kind.TRANSIENT] + hint


def failure_from_exception(
    exc: BaseException,
    info: ExceptionInfo,
    *,
    tool: str,
    arguments: Mapping[str, Any],
    attempts: int,
    stop: Stop | None,
    unknown: bool,
    history: tuple[AttemptRecord, ...] = (),
) -> ToolFailure:
    """The failure of a call whose last attempt raised ``exc``.

    The cause names the exception, where it was raised and how many attempts
    were made; for a :class:`~toolmend.integrations.ResultFailed` it is the text of the
    failed result itself, which is what the model reads.  Logs one line at INFO
    and the full traceback at DEBUG.
    """
    if isinstance(exc, ResultFailed):
        # The tool returned this failure: the model reads the result, so it is the cause.
        cause = cap_error(exc.text)
    else:
        lines = [f"Tool '{tool}' failed after {_attempts(attempts)} with {describe_exception(exc)}"]
        where = user_frames(exc)
        if where is not None:
            lines.append(f"Where: {where}")
        cause = cap_error("\n".join(lines))
    guidance = _guidance(info, tool=tool, attempts=attempts, stop=stop, unknown=unknown)
    logger.info(
        "tool %s failed: kind=%s reason=%s attempts=%d stop=%s outcome_unknown=%s",
        tool,
        info.kind.value,
        info.reason,
        attempts,
        stop.value if stop is not None else None,
        unknown,
    )
    logger.debug(
        "tool %s: traceback of the last attempt", tool, exc_info=(type(exc), exc, exc.__traceback__)
    )
    return ToolFailure(
        tool=tool,
        arguments=arguments,
        kind=info.kind,
        attempts=attempts,
        cause=cause,
        guidance=guidance,
        rule="exception",
        reason=info.reason,
        retry_after=info.retry_after,
        outcome_unknown=unknown,
        stop=stop,
        exception=exc,
        history=history,
    )
