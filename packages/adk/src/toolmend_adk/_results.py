"""What an ADK tool returned, as the core judges it, and what the model reads back.

ADK hands a plugin the raw value a tool returned: a string, a dict of the
tool's own (``{"error": "503 Service Unavailable"}``), or for an MCP tool the
dumped ``CallToolResult`` (``{"content": [...], "isError": true}``).  The core
judges text, so a dict is judged as the JSON text the model would read, and an
MCP result by its content blocks with its ``isError`` flag.

Whatever the plugin answers becomes the ``response`` of the function response
ADK sends the model; :func:`failure_response` is that shape for a failure.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from toolmend import Form, ToolFailure, Verdict, classify_result
from toolmend.integrations import ResultFailed, text_of

__all__ = ["Returned", "failure_response", "judged", "success_response", "verdict_of"]

_CLEAN = Verdict(False)


def _mcp_result(result: Any) -> tuple[Any, bool] | None:
    """``(content blocks, isError)`` of a dumped MCP ``CallToolResult``; ``None`` otherwise."""
    if not isinstance(result, dict) or not isinstance(result.get("content"), list):
        return None
    flag = result.get("isError", result.get("is_error"))
    if not isinstance(flag, bool) and flag is not None:
        return None
    return result["content"], flag is True


def result_text(result: Any) -> str:
    """The result as the model reads it: the text itself, an MCP result's text, else its JSON."""
    if isinstance(result, str):
        return result
    mcp = _mcp_result(result)
    shown = text_of(mcp[0]) if mcp is not None else None
    if shown:
        return shown
    try:
        return json.dumps(result, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        return repr(result)


def verdict_of(result: Any, tool: str) -> Verdict:
    """The core's verdict on what a tool returned; never raises.

    Args:
        result: The raw value the tool returned.
        tool: The tool's name, for user rules scoped to it.
    """
    try:
        mcp = _mcp_result(result)
        if mcp is not None:
            content, flagged = mcp
            return classify_result(content, is_error=True if flagged else None, tool=tool)
        if isinstance(result, str | dict | list):
            return classify_result(result_text(result), tool=tool)
    except Exception:
        return _CLEAN
    return _CLEAN


@dataclass(frozen=True, slots=True)
class Returned:
    """A failure the tool returned as its result, carried through the core as one attempt's.

    Attributes:
        result: The raw value the tool returned.
        verdict: The core's verdict on it.
    """

    result: Any
    verdict: Verdict


def returned_failure(result: Any, verdict: Verdict) -> ResultFailed:
    """The exception that makes the core decide about a failed result as about a raised one."""
    text = result_text(result)
    return ResultFailed(text, verdict.kind, verdict.reason, Returned(result, verdict))


def judged(result: Any, tool: str) -> Any:
    """``result``, or :class:`ResultFailed` raised when the core reads it as a failure.

    Args:
        result: The raw value one attempt returned.
        tool: The tool's name.
    """
    verdict = verdict_of(result, tool)
    if verdict.failed:
        raise returned_failure(result, verdict)
    return result


def failure_response(failure: ToolFailure, form: Form) -> dict[str, Any]:
    """The function response the model reads for a failed call.

    ``{"error": <the true cause, capped>, "guidance": <the kind's next step>}``;
    ``guidance`` is left out for an ambiguous failure (no guidance beats a wrong
    one) and in form ``off`` (the cause alone).

    Args:
        failure: The core's failure of the call.
        form: The delivery form.
    """
    response: dict[str, Any] = {"error": failure.cause}
    if failure.guidance is not None and form is not Form.OFF:
        response["guidance"] = failure.guidance
    return response


def success_response(result: Any) -> dict[str, Any]:
    """A result as a plugin must answer it: a dict (ADK wraps anything else the same way)."""
    return result if isinstance(result, dict) else {"result": result}
