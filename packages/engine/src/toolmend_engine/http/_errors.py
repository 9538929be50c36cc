"""The request error every route raises, and the provider error bodies it becomes.

One exception for both APIs: the server writes it in OpenAI's shape
(``{"error": {"message", "type", "param", "code"}}``) or, on the Messages
routes, in Anthropic's (``{"type": "error", "error": {"type", "message"}}``),
so validation code never needs to know which client is asking.
"""

from __future__ import annotations

from typing import Any

from toolmend.integrations import Report

__all__ = ["ANTHROPIC_KINDS", "BadRequest", "anthropic_error_body", "error_body"]

ANTHROPIC_KINDS = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    502: "api_error",
    529: "overloaded_error",
}
"""Anthropic's error type for each status (anything else: ``invalid_request_error``
below 500, ``api_error`` from 500)."""


def error_body(
    message: str,
    kind: str = "invalid_request_error",
    param: str | None = None,
    code: str | None = None,
) -> dict[str, Any]:
    """OpenAI's error body."""
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def anthropic_error_body(message: str, kind: str = "invalid_request_error") -> dict[str, Any]:
    """Anthropic's error body."""
    return {"type": "error", "error": {"type": kind, "message": message}}


class BadRequest(ValueError):
    """A request the server refuses, with the OpenAI error fields.

    A request the server refuses (400 unless ``status`` says otherwise), with the OpenAI
    error fields.  ``report`` is the layer's report when the layer already ran, so the
    refusal still carries ``X-Tool-Errors``.
    """

    def __init__(
        self,
        message: str,
        param: str | None = None,
        code: str | None = None,
        *,
        status: int = 400,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.param = param
        self.code = code
        self.status = status
        self.report: Report | None = None

    def body(self) -> dict[str, Any]:
        """The OpenAI-style error body of this error."""
        return error_body(self.message, "invalid_request_error", self.param, self.code)
