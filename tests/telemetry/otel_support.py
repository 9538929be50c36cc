"""Exact views of finished spans for assertions: names, attributes, events, status."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
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


@dataclass
class Otel:
    exporter: InMemorySpanExporter
    reader: InMemoryMetricReader

    def spans(self) -> list[ReadableSpan]:
        """The spans finished since the last call, oldest first."""
        finished = list(self.exporter.get_finished_spans())
        self.exporter.clear()
        return finished

    def metrics(self) -> dict[str, Any]:
        """``{name: {attributes as sorted tuple: value}}`` since the last call: a counter's
        sum, a histogram's ``(count, sum)``."""
        out: dict[str, dict[tuple[tuple[str, Any], ...], Any]] = {}
        data = self.reader.get_metrics_data()
        for resource in data.resource_metrics if data is not None else ():
            for scope in resource.scope_metrics:
                if scope.scope.name != "toolmend":
                    continue
                for metric in scope.metrics:
                    for point in metric.data.data_points:
                        key = tuple(sorted(point.attributes.items()))
                        value = (
                            (point.count, point.sum)
                            if hasattr(point, "bucket_counts")
                            else point.value
                        )
                        if value in (0, (0, 0)):
                            continue
                        out.setdefault(metric.name, {})[key] = value
        return out
