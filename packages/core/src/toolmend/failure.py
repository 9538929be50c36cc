"""A failed tool call as a value: the text the model reads and the record behind it.

The text says what failed (the exception, where in the tool's own code, how
many attempts) and a next step that is true for this call.  Retry guidance is
never given for a write that may have committed, and "try again" is never
said after retries were already spent.
"""

from __future__ import annotations

import logging
import os
import sysconfig
import traceback
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .detect import Verdict
from .exceptions import ExceptionInfo, describe_exception
from .guidance import GUIDANCE, VERIFY_FIRST, cap_error
from .model import Detection, Kind, Source
from .retry import AttemptRecord, Stop

__all__ = [
    "BUDGET_SPENT",
    "DEADLINE_HINT",
    "DEADLINE_SPENT",
    "EXHAUSTED",
    "LANDED",
    "LOOP_BUDGET",
    "WAIT_HINT",
    "ToolFailure",
    "failure_from_exception",
    "user_frames",
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

_LIBRARY_ROOTS = tuple(
    os.path.normcase(os.path.abspath(path)) + os.sep
    for path in {
        sysconfig.get_paths().get("stdlib", ""),
        sysconfig.get_paths().get("platstdlib", ""),
        os.path.dirname(os.path.abspath(__file__)),
    }
    if path
)
_FRAMES_SHOWN = 3
_OWN_MODULES = ("toolmend.", "toolmend_")


def duration(seconds: float) -> str:
    """``5 seconds``, ``1 second``, ``1.5 seconds``, ``0.2 seconds``."""
    value = round(seconds, 1)
    if value == 1:
        return "1 second"
    return f"{value:g} seconds"


def _attempts(count: int) -> str:
    return f"{count} attempt" if count == 1 else f"{count} attempts"


def _is_user_frame(filename: str, module: Any) -> bool:
    if filename.startswith("<") and filename != "<stdin>":
        return False
    if isinstance(module, str) and (module == "toolmend" or module.startswith(_OWN_MODULES)):
        return False
    path = os.path.normcase(os.path.abspath(filename))
    parts = path.split(os.sep)
    if "site-packages" in parts or "dist-packages" in parts:
        return False
    return not path.startswith(_LIBRARY_ROOTS)


def user_frames(exc: BaseException, limit: int = _FRAMES_SHOWN) -> str | None:
    """The last frames of the traceback in the user's code (not the standard library,
    installed packages or toolmend and its adapters), outermost first."""
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

    @property
    def detection(self) -> Detection:
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
        return {
            "tool": self.tool,
            "arguments": _jsonable(self.arguments),
            "kind": self.kind.value,
            "attempts": self.attempts,
            "cause": self.cause,
            "guidance": self.guidance,
            "rule": self.rule,
            "reason": self.reason,
            "retry_after": self.retry_after,
            "outcome_unknown": self.outcome_unknown,
            "stop": self.stop.value if self.stop is not None else None,
            "exception": describe_exception(self.exception) if self.exception else None,
            "history": [record.to_dict() for record in self.history],
        }


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return repr(value)


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
        return BUDGET_SPENT.format(tool=tool) + hint
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
    """The failure of a call whose last attempt raised ``exc``; logs the full trace."""
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
        exc_info=(type(exc), exc, exc.__traceback__),
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
