"""The two places where a recovering session listens inside the SDK's session.

1. Output-schema validation.  ``ClientSession.call_tool`` validates structured
   content against the tool's output schema and raises ``RuntimeError`` on a
   mismatch, dropping the result.  The session's validator (``validate_tool_result``
   on the SDK's 2.x line, the private ``_validate_tool_result`` on 1.x) is
   shadowed on the instance: during a call made by a recovering session (a
   context variable says so) a rejection is recorded instead of raised, so the
   raw result survives and gets an advisory receipt; every other caller of the
   same session sees the SDK's behaviour unchanged.
2. ``notifications/tools/list_changed``.  The SDK delivers server notifications
   to the handler given at construction; the handler is chained so that the
   cached tool listing is dropped when the server says it changed.  This uses
   the session's private ``_message_handler`` attribute (both SDK lines have
   it; 1.x hands it notifications wrapped in ``ServerNotification``, which the
   observer unwraps); where it is missing
   (another SDK version) nothing is installed and the host can call
   ``RecoveringSession.handle_message`` from its own handler.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from mcp.client.session import ClientSession
from mcp.types import CallToolResult

from toolmend.integrations import scoped

from ._compat import VALIDATOR

__all__ = ["Rejection", "chain_messages", "record_rejections", "shadow_validation"]

log = logging.getLogger("toolmend.mcp")

_MARK = "__toolmend__"


@dataclass(slots=True)
class Rejection:
    """What the SDK's output-schema validation said about the result of one call."""

    message: str | None = None


_current: ContextVar[Rejection | None] = ContextVar("toolmend_mcp_rejection", default=None)


@contextmanager
def record_rejections() -> Iterator[Rejection]:
    """Within this block, the SDK's schema rejections are recorded, not raised."""
    with scoped(_current, Rejection()) as rejection:
        yield rejection


def shadow_validation(session: ClientSession) -> None:
    """Install the recording validator on ``session`` once; never raises."""
    try:
        current = session.__dict__.get(VALIDATOR)
        if current is not None and getattr(current, _MARK, False):
            return
        original = getattr(session, VALIDATOR)

        async def validate_tool_result(name: str, result: CallToolResult) -> None:
            rejection = _current.get()
            if rejection is None:
                await original(name, result)
                return
            try:
                await original(name, result)
            except RuntimeError as exc:
                rejection.message = str(exc)

        setattr(validate_tool_result, _MARK, True)
        setattr(session, VALIDATOR, validate_tool_result)
    except Exception:
        log.debug("toolmend.mcp: could not shadow output-schema validation", exc_info=True)


def chain_messages(session: ClientSession, observe: Callable[[Any], None]) -> bool:
    """Let ``observe`` see every message the session hands its handler; ``True`` if installed."""
    try:
        original = session.__dict__.get("_message_handler")
        if original is None or not callable(original):
            return False
        if getattr(original, _MARK, None) == observe:
            return True

        async def handler(message: Any) -> None:
            try:
                await original(message)
            finally:
                observe(message)

        setattr(handler, _MARK, observe)
        session._message_handler = handler
        return True
    except Exception:
        log.debug("toolmend.mcp: could not watch server notifications", exc_info=True)
        return False
