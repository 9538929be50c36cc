"""Exact views of finished spans for assertions: names, attributes, events, status."""

from __future__ import annotations

import json
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import StatusCode

SECRET_ARGUMENT = "alice@example.com"
"""An argument value that may be personal data: never in a span unless opted in."""


def attrs(span: ReadableSpan) -> dict[str, Any]:
    return {k: _plain(v) for k, v in (span.attributes or {}).items()}


def events(span: ReadableSpan) -> list[tuple[str, dict[str, Any]]]:
    return [(e.name, {k: _plain(v) for k, v in (e.attributes or {}).items()}) for e in span.events]


def status(span: ReadableSpan) -> tuple[str, str | None]:
    return span.status.status_code.name, span.status.description


def failed(span: ReadableSpan) -> bool:
    return span.status.status_code is StatusCode.ERROR


def text_of_spans(spans: list[ReadableSpan]) -> str:
    """Everything the spans would export, as one text (to look for leaked content)."""
    return "\n".join(span.to_json() for span in spans)


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def dump(spans: list[ReadableSpan]) -> str:
    """For a failing test's message: the spans as the exporter sees them."""
    return json.dumps(
        [{"name": s.name, "attributes": attrs(s), "events": events(s)} for s in spans], indent=1
    )
