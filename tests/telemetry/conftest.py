"""The OpenTelemetry SDK with in-memory exporters, installed once for these tests.

The API's global providers can be set only once per process, so the SDK's are
installed on first use and each test reads what it produced: finished spans
(cleared before every test) and metrics as deltas since the last collection.
Every test runs with virtual time, fresh retry budgets and content not recorded.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import Counter, Histogram, MeterProvider
from opentelemetry.sdk.metrics.export import (
    AggregationTemporality,
    InMemoryMetricReader,
)
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)
from otel_support import Otel

import toolmend
from toolmend import telemetry
from toolmend.integrations import SleepLog, reset_budgets

TESTS = Path(__file__).resolve().parents[1]
for folder in ("langchain", "openai_agents", "mcp_client", "engine"):
    sys.path.insert(0, str(TESTS / folder))

_DELTA = {Counter: AggregationTemporality.DELTA, Histogram: AggregationTemporality.DELTA}


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
