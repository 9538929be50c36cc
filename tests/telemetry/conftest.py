"""The OpenTelemetry SDK with in-memory exporters, installed once for these tests.

The API's global providers can be set only once per process, so the SDK's are
installed on first use and each test reads what it produced: finished spans
(cleared before every test) and metrics as deltas since the last collection.
Every test runs with virtual time, fresh retry budgets and content not recorded.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import Counter, Histogram, MeterProvider
from opentelemetry.sdk.metrics.export import (
    AggregationTemporality,
    InMemoryMetricReader,
)
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)

import toolmend
from toolmend import telemetry
from toolmend.retry import SleepLog, reset_budgets

TESTS = Path(__file__).resolve().parents[1]
for folder in ("langchain", "openai_agents", "mcp_client"):
    sys.path.insert(0, str(TESTS / folder))

_DELTA = {Counter: AggregationTemporality.DELTA, Histogram: AggregationTemporality.DELTA}


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


_INSTALLED: Otel | None = None


def _install() -> Otel:
    global _INSTALLED
    if _INSTALLED is None:
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(provider)
        reader = InMemoryMetricReader(preferred_temporality=_DELTA)
        metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
        _INSTALLED = Otel(exporter, reader)
    return _INSTALLED


@pytest.fixture
def otel() -> Iterator[Otel]:
    """The SDK's exporters, emptied: spans and metrics of this test only."""
    installed = _install()
    installed.spans()
    installed.metrics()
    yield installed
    telemetry.configure(record_content=False)


@pytest.fixture(autouse=True)
def sleeps() -> Iterator[SleepLog]:
    """Retry waits are recorded, not slept; budgets start full for each test."""
    reset_budgets()
    with toolmend.testing(seed=7) as log:
        yield log
    reset_budgets()
