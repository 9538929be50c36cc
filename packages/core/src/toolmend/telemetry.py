"""OpenTelemetry spans and metrics for every failure, retry, refusal and rewrite.

Written against ``opentelemetry-api`` only, so the spans go wherever the user's
own ``TracerProvider`` and ``MeterProvider`` send them and nothing needs setting
up here.  Without an SDK the API hands out non-recording spans and proxy
instruments: the work below is then a few attribute-free calls per tool call
(``bench/core.py`` measures it), since every attribute is built only for a
recording span.

One logical tool call is one ``execute_tool {tool}`` span (the GenAI semantic
conventions), opened by the adapter with :func:`tool_call` (it knows the
framework's call id) or else by the call runner itself.  The runner, the loop
guard, the contract checker and :func:`toolmend.rewrite` report into the span
that is current, so the adapters pass identifiers only.

Arguments and error texts may hold personal data: spans carry only their
lengths and hashes unless :func:`configure` (``record_content=True``) or the
environment variable :data:`RECORD_CONTENT_ENV` opts in.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar, Token
from typing import TYPE_CHECKING, Any

from opentelemetry import metrics, propagate, trace
from opentelemetry.metrics import _internal as _metrics_api
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from ._bounds import prune, safe_repr
from ._types import Kind
from .classify._raised import passes_through
from .classify._signatures import error_signature
from .run._attempts import AttemptRecord, Stop
from .run._effects import Effect

if TYPE_CHECKING:
    from opentelemetry.util.types import AttributeValue

    from ._types import Report
    from .contracts._contract import Violation
    from .run._failure import ToolFailure

__all__ = [
    "RECORD_CONTENT_ENV",
    "ToolCall",
    "configure",
    "current",
    "followed_up",
    "outgoing_headers",
    "record",
    "records_content",
    "server_span",
    "tool_call",
]

RECORD_CONTENT_ENV = "TOOLMEND_OTEL_RECORD_CONTENT"
"""Set to ``1``/``true`` to record argument and error texts in spans (default: off)."""

_SCOPE = "toolmend"
_REFUSED_STOPS = frozenset({Stop.UNSAFE, Stop.BUDGET, Stop.DEADLINE})
_KIND = {kind: kind.value for kind in Kind}
"""An enum's ``.value`` is a slow property: the metrics look the text up instead."""
_UNSURE = frozenset({Kind.TRANSIENT, Kind.AMBIGUOUS})

_tracer = trace.get_tracer(_SCOPE)
_meter = metrics.get_meter(_SCOPE)
_failures = _meter.create_counter(
    "toolmend.tool.failures", unit="{call}", description="Tool calls that ended failed"
)
_retries = _meter.create_counter(
    "toolmend.tool.retries", unit="{retry}", description="Automatic retries toolmend made"
)
_refused_retries = _meter.create_counter(
    "toolmend.tool.retries_refused",
    unit="{call}",
    description="Transient failures not retried: unsafe to repeat, budget paused, or deadline",
)
_loop_refusals = _meter.create_counter(
    "toolmend.loop_guard.refusals", unit="{call}", description="Calls the loop guard refused"
)
_violations = _meter.create_counter(
    "toolmend.contract.violations", unit="{violation}", description="Contract violations found"
)
_attempts = _meter.create_histogram(
    "toolmend.tool.attempts",
    unit="{attempt}",
    description="Attempts per logical tool call that ran",
    explicit_bucket_boundaries_advisory=[1, 2, 3, 4, 5, 8],
)


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


class _Settings:
    __slots__ = ("record_content",)

    def __init__(self) -> None:
        self.record_content = _env_flag(RECORD_CONTENT_ENV)


_settings = _Settings()
_lock = threading.Lock()


def configure(*, record_content: bool | None = None) -> None:
    """Change what toolmend's spans record; ``None`` leaves a setting as it is.

    Args:
        record_content: Record the call's arguments (``gen_ai.tool.call.arguments``),
            the error text (``toolmend.error.message``, status description, attempt
            events) and the classification evidence as text.  Off by default (the
            environment variable :data:`RECORD_CONTENT_ENV` sets the default),
            because tool arguments and errors may hold personal data; spans then
            carry lengths and SHA-256 prefixes only.
    """
    with _lock:
        if record_content is not None:
            _settings.record_content = bool(record_content)


def records_content() -> bool:
    """Whether spans record argument and error texts (see :func:`configure`)."""
    return _settings.record_content


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:16]


def _text(attributes: dict[str, AttributeValue], name: str, text: str | None) -> None:
    """The text under ``name`` when opted in; otherwise its length and hash."""
    if text is None:
        return
    if _settings.record_content:
        attributes[name] = text
    else:
        attributes[f"{name}.length"] = len(text)
        attributes[f"{name}.hash"] = _digest(text)


def _error_type(failure: ToolFailure) -> str:
    """``error.type`` of a failed call (``toolmend.refused``: refused before it ran).

    Otherwise as :func:`_exception_type` says; ``tool_error`` without an exception.
    """
    if failure.attempts == 0:
        return "toolmend.refused"
    return "tool_error" if failure.exception is None else _exception_type(failure.exception)


def _exception_type(exc: BaseException) -> str:
    """The exception's class, or ``tool_error`` for a failed result the tool returned.

    The GenAI conventions name an MCP ``isError`` result so; adapters raise such a
    result inside an attempt as an exception carrying the result and its text.
    """
    if hasattr(exc, "result") and hasattr(exc, "text"):
        return "tool_error"
    cls = type(exc)
    module = cls.__module__
    return cls.__qualname__ if module == "builtins" else f"{module}.{cls.__qualname__}"


def _control_flow(exc: BaseException) -> bool:
    """Cancellation or a framework's control flow (an interrupt, a handoff): no failure."""
    return passes_through(exc)


def _json(value: Any) -> str:
    """``value`` as JSON within :mod:`toolmend._bounds`: deep or cyclic arguments never raise."""
    shown = prune(value)
    try:
        return json.dumps(shown, ensure_ascii=False, sort_keys=True, default=safe_repr)
    except (TypeError, ValueError):
        return safe_repr(shown)


class ToolCall:
    """The span of one logical tool call and what toolmend learnt about it.

    Made by :func:`tool_call`; the runner, loop guard and contract checker find
    the current one, so an adapter only opens it and, where the framework adds
    to the outcome (the form the model saw, a neutralised note), calls
    :func:`record`.

    Args:
        span: The OpenTelemetry span.
        tool: The tool's name.
        arguments: The call's arguments.
    """

    __slots__ = (
        "_arguments",
        "_context",
        "_failure",
        "_outcome",
        "_token",
        "attempts",
        "claimed",
        "codes",
        "effect",
        "effect_source",
        "form",
        "neutralised",
        "recording",
        "span",
        "tool",
    )

    def __init__(self, span: Span, tool: str, arguments: Mapping[str, Any] | None = None) -> None:
        self.span = span
        self.recording = span.is_recording()
        """Whether the span records (an SDK is configured): attributes are built only then.

        Without an SDK the call keeps only what the metrics need, and its ``with``
        block switches no context (the parent, with the same context, stays current).
        """
        self.tool = tool
        self.claimed = False
        self.attempts = 0
        self._failure: ToolFailure | None = None
        self._arguments = arguments
        self._context: AbstractContextManager[Any] | None = None
        self._token: Token[ToolCall | None] | None = None
        if self.recording:
            self.effect: Effect | None = None
            self.effect_source: str | None = None
            self.form: str | None = None
            self.neutralised: tuple[str, ...] | None = None
            self.codes: list[str] = []
            self._outcome: str | None = None

    def __enter__(self) -> ToolCall:
        if self.recording:
            self._context = trace.use_span(
                self.span, record_exception=False, set_status_on_exception=False
            )
            self._context.__enter__()
        if self.recording or not self.claimed:
            self._token = _CURRENT.set(self)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: Any
    ) -> None:
        if self._token is not None:
            _CURRENT.reset(self._token)
        if exc is not None and self.recording and not _control_flow(exc):
            self.span.set_attribute("error.type", _exception_type(exc))
            self.span.set_status(Status(StatusCode.ERROR, None))
        self.end(self._arguments)
        if self._context is not None:
            self._context.__exit__(kind, exc, tb)

    # --- what the runner reports -------------------------------------------------

    def attempt(self, record: AttemptRecord, *, wait: float) -> None:
        """A failed attempt, the wait before it, and what was decided after it.

        Args:
            record: The attempt.
            wait: Seconds waited before the next attempt.
        """
        self.attempts = max(self.attempts, record.attempt)
        if record.delay is not None and record.stop is None:
            _retries.add(1, {"gen_ai.tool.name": self.tool, "toolmend.kind": _KIND[record.kind]})
        elif record.stop in _REFUSED_STOPS:
            _refused_retries.add(
                1, {"gen_ai.tool.name": self.tool, "toolmend.stop_reason": record.stop.value}
            )
        if not self.recording:
            return
        attributes: dict[str, AttributeValue] = {
            "toolmend.attempt": record.attempt,
            "toolmend.attempt.wait": wait,
            "toolmend.kind": record.kind.value,
            "toolmend.outcome_unknown": record.outcome_unknown,
        }
        if record.exception is not None:
            attributes["error.type"] = _exception_type(record.exception)
        _text(attributes, "toolmend.evidence", record.reason)
        if _settings.record_content:
            attributes["toolmend.error.message"] = record.error
        if record.stop is not None:
            attributes["toolmend.stop_reason"] = record.stop.value
        elif record.delay is not None:
            attributes["toolmend.retry.delay"] = record.delay
        self.span.add_event("toolmend.attempt", attributes)

    def succeeded_attempt(self, attempt: int, *, wait: float) -> None:
        """The attempt that succeeded (after ``attempt - 1`` failed ones).

        Args:
            attempt: Its number, from 1.
            wait: Seconds waited before it.
        """
        self.attempts = max(self.attempts, attempt)
        if attempt > 1 and self.recording:
            self.span.add_event(
                "toolmend.attempt",
                {"toolmend.attempt": attempt, "toolmend.attempt.wait": wait},
            )

    def outcome(self, value: str) -> None:
        """``landed``, ``not_landed`` or ``unknown``, as the runner judged it.

        Args:
            value: The judgement.
        """
        self._outcome = value

    # --- what the guards report --------------------------------------------------

    def refused(self, failure: ToolFailure) -> None:
        """The loop guard refused the call (an exact repeat, or an open circuit): an event.

        Args:
            failure: The refusal as the model reads it.
        """
        if self.recording:
            attributes: dict[str, AttributeValue] = {
                "toolmend.rule": failure.rule,
                "toolmend.kind": failure.kind.value,
            }
            if failure.reason is not None:
                attributes["toolmend.reason"] = failure.reason
            self.span.add_event("toolmend.loop_guard.refusal", attributes)

    def violations(self, found: Sequence[Violation]) -> None:
        """The result broke its contract: one event and one count per violation.

        Args:
            found: The violations.
        """
        for violation in found:
            code = violation.code.value
            _violations.add(1, {"gen_ai.tool.name": self.tool, "toolmend.contract.code": code})
            if self.recording:
                if code not in self.codes:
                    self.codes.append(code)
                attributes: dict[str, AttributeValue] = {
                    "toolmend.contract.code": code,
                    "toolmend.contract.path": violation.path,
                }
                if _settings.record_content:
                    attributes["toolmend.contract.detail"] = violation.detail
                self.span.add_event("toolmend.contract.violation", attributes)

    # --- the end -----------------------------------------------------------------

    def record(
        self,
        failure: ToolFailure | None,
        *,
        attempts: int | None = None,
        effect: Effect | str | None = None,
        effect_source: str | None = None,
        form: str | None = None,
        neutralised: Iterable[str] | None = None,
    ) -> None:
        """The call's outcome (``None``: it succeeded); a later record replaces an earlier one.

        Args:
            failure: The failure, or ``None``.
            attempts: Attempts made.
            effect: The tool's effect.
            effect_source: Where the effect came from (declared, annotation, default).
            form: The form the model saw the failure in.
            neutralised: Instruction-like phrases neutralised in the note.
        """
        self._failure = failure
        if failure is not None:
            self.attempts = failure.attempts
        if attempts is not None:
            self.attempts = attempts
        if not self.recording:
            return
        if failure is not None:
            if failure.attempts == 0:
                self._outcome = "not_landed"
            elif failure.stop is Stop.LANDED:
                self._outcome = "landed"
            elif self._outcome is None:
                unsure = failure.outcome_unknown or failure.kind in _UNSURE
                self._outcome = "unknown" if unsure else "not_landed"
        else:
            self._outcome = "landed"
        if effect is not None:
            self.effect = Effect.parse(effect)
        if effect_source is not None:
            self.effect_source = effect_source
        if form is not None:
            self.form = str(form)
        if neutralised is not None:
            self.neutralised = tuple(neutralised)

    def end(self, arguments: Mapping[str, Any] | None = None) -> None:
        """Set the final attributes and status, count the call, and end the span.

        Args:
            arguments: The call's arguments, if they were not known when it began.
        """
        failure = self._failure
        if failure is not None:
            _failures.add(1, {"gen_ai.tool.name": self.tool, "toolmend.kind": _KIND[failure.kind]})
        if self.attempts:
            _attempts.record(self.attempts, {"gen_ai.tool.name": self.tool})
        span = self.span
        if self.recording:
            span.set_attributes(self._attributes(failure, arguments))
            if failure is not None:
                description = failure.cause if _settings.record_content else None
                span.set_status(Status(StatusCode.ERROR, description))
        span.end()

    def _attributes(
        self, failure: ToolFailure | None, arguments: Mapping[str, Any] | None
    ) -> dict[str, AttributeValue]:
        attributes: dict[str, AttributeValue] = {"toolmend.attempts": self.attempts}
        if self._outcome is not None:
            attributes["toolmend.outcome"] = self._outcome
        if self.effect is not None:
            attributes["toolmend.effect"] = self.effect.value
        if self.effect_source is not None:
            attributes["toolmend.effect.source"] = self.effect_source
        if self.form is not None:
            attributes["toolmend.form"] = self.form
        if self.neutralised is not None:
            attributes["toolmend.neutralised"] = bool(self.neutralised)
            if self.neutralised:
                attributes["toolmend.neutralised.reasons"] = list(self.neutralised)
        if self.codes:
            attributes["toolmend.contract.codes"] = list(self.codes)
        shown = failure.arguments if failure is not None else arguments
        if _settings.record_content and shown is not None:
            attributes["gen_ai.tool.call.arguments"] = _json(dict(shown))
        if failure is None:
            return attributes
        attributes["error.type"] = _error_type(failure)
        attributes["toolmend.kind"] = failure.kind.value
        attributes["toolmend.rule"] = failure.rule
        _text(attributes, "toolmend.evidence", failure.reason)
        if failure.stop is not None:
            attributes["toolmend.stop_reason"] = failure.stop.value
        if _settings.record_content:
            attributes["toolmend.error.message"] = failure.cause
        # The template groups one error's occurrences on a dashboard; it still holds
        # wording that may name someone, so without content only its hash goes out.
        signature = error_signature(failure.cause)
        if _settings.record_content:
            attributes["toolmend.signature"] = signature
        else:
            attributes["toolmend.signature.hash"] = _digest(signature)
        return attributes


_NOTHING: AbstractContextManager[None] = nullcontext()
_CURRENT: ContextVar[ToolCall | None] = ContextVar("toolmend_tool_call", default=None)


def current() -> ToolCall | None:
    """The tool call whose span is current in this context, if any."""
    return _CURRENT.get()


class _Claimed:
    """The adapter's open call, taken by the runner: the adapter's scope ends it."""

    __slots__ = ("call",)

    def __init__(self, call: ToolCall) -> None:
        self.call = call

    def __enter__(self) -> ToolCall:
        return self.call

    def __exit__(self, *exc: object) -> None:
        return None


def tool_call(
    tool: str,
    *,
    call_id: str | None = None,
    framework: str | None = None,
    arguments: Mapping[str, Any] | None = None,
) -> AbstractContextManager[ToolCall]:
    """Open the ``execute_tool {tool}`` span of one logical tool call, current inside.

    The call runner (:func:`toolmend.integrations.execute`) run inside reports
    into this span instead of opening its own; so does the loop guard.  A
    failure the body raises ends the span with status Error.

    Args:
        tool: The tool's name (``gen_ai.tool.name``).
        call_id: The framework's id of the call (``gen_ai.tool.call.id``).
        framework: The adapter's framework (``toolmend.framework``: ``langchain``,
            ``openai_agents``, ``mcp``...).
        arguments: The call's arguments, recorded only when content is recorded.
    """
    return _open(tool, call_id, framework, arguments)


def _tracing() -> bool:
    """Whether a tracer provider is set; ``False`` means every span would be a no-op.

    The API's own proxy tracer decides by this same global (it never loads a
    provider named in the environment either), and reading it is far cheaper
    than starting a no-op span.  Should the API rename it, spans are started.
    """
    return getattr(trace, "_TRACER_PROVIDER", True) is not None


def _active() -> bool:
    """Whether a tracer or a meter provider is set: otherwise all of this is a no-op."""
    return _tracing() or getattr(_metrics_api, "_METER_PROVIDER", True) is not None


def _open(
    tool: str,
    call_id: str | None,
    framework: str | None,
    arguments: Mapping[str, Any] | None,
) -> ToolCall:
    if not _tracing():
        return ToolCall(trace.INVALID_SPAN, tool, arguments)
    attributes: dict[str, AttributeValue] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": tool,
    }
    if call_id is not None:
        attributes["gen_ai.tool.call.id"] = call_id
    if framework is not None:
        attributes["toolmend.framework"] = framework
    span = _tracer.start_span(f"execute_tool {tool}", kind=SpanKind.INTERNAL, attributes=attributes)
    return ToolCall(span, tool, arguments)


def runner_call(
    tool: str, arguments: Mapping[str, Any] | None
) -> AbstractContextManager[ToolCall | None]:
    """The call the runner reports into: the adapter's, or a span of its own.

    The adapter's call is taken once; a tool that runs another guarded call
    inside (a ``fail_soft`` function called by a framework tool) gets a child span.
    With neither a tracer nor a meter provider set, ``None``: the runner then skips
    every hook, which keeps the no-SDK cost of a call to one check.
    """
    open_call = _CURRENT.get()
    if open_call is not None and not open_call.claimed and open_call.tool == tool:
        open_call.claimed = True
        return _Claimed(open_call)
    if not _active():
        return _NOTHING
    own = _open(tool, None, None, arguments)
    own.claimed = True
    return own


def record(
    failure: ToolFailure | None,
    *,
    effect: Effect | str | None = None,
    effect_source: str | None = None,
    form: str | None = None,
    neutralised: Iterable[str] | None = None,
) -> None:
    """Record the outcome of the current tool call as the adapter delivered it.

    For what only the adapter knows: a call refused before the runner ran, the
    form the model saw, whether the note was neutralised.  Nothing happens
    outside a :func:`tool_call`.

    Args:
        failure: The failure the model was shown, or ``None`` when the call succeeded.
        effect: The tool's declared effect.
        effect_source: Where the effect came from (``declared``, ``annotation``...).
        form: The delivery form (``c1``..``c4``, ``off``).
        neutralised: Why restated tool text in the note was neutralised (empty: not).
    """
    call = _CURRENT.get()
    if call is not None:
        call.record(
            failure,
            effect=effect,
            effect_source=effect_source,
            form=form,
            neutralised=neutralised,
        )


def loop_refused(failure: ToolFailure) -> None:
    """The loop guard refused a call: an event on the current tool call, and a count."""
    _loop_refusals.add(1, {"gen_ai.tool.name": failure.tool, "toolmend.rule": failure.rule})
    call = _CURRENT.get()
    if call is not None and call.tool == failure.tool:
        call.refused(failure)


def contract_violations(tool: str, found: Sequence[Violation]) -> None:
    """A result broke its contract: events on the current tool call (or span), and counts."""
    if not found:
        return
    call = _CURRENT.get()
    if call is not None and call.tool == tool:
        call.violations(found)
        return
    span = trace.get_current_span()
    for violation in found:
        code = violation.code.value
        _violations.add(1, {"gen_ai.tool.name": tool, "toolmend.contract.code": code})
        if span.is_recording():
            span.add_event(
                "toolmend.contract.violation",
                {
                    "gen_ai.tool.name": tool,
                    "toolmend.contract.code": code,
                    "toolmend.contract.path": violation.path,
                },
            )


def followed_up(row: Mapping[str, Any]) -> None:
    """What followed a failure, once known: a short ``toolmend.follow_up {tool}`` span.

    The failed call's own span ended long before the evidence came (the model's
    next call, or the run's end), so the outcome is a span of its own, which
    ``toolmend learn`` reads from an OTLP export.  Its attribute is
    ``toolmend.followed_by``: ``toolmend.outcome`` already says whether a write
    landed.  The error text is there only when content is recorded, else its
    length and hash, like every span here.

    Args:
        row: The settled failure (``tool``, ``content``, ``outcome``, ``signature``, ``run``).
    """
    if not _tracing():
        return
    tool = str(row.get("tool") or "")
    signature = str(row.get("signature") or "")
    attributes: dict[str, AttributeValue] = {
        "gen_ai.tool.name": tool,
        "toolmend.followed_by": str(row.get("outcome") or "stopped"),
        "toolmend.signature.hash": _digest(signature),
    }
    if _settings.record_content:
        attributes["toolmend.signature"] = signature
    _text(attributes, "toolmend.error.message", str(row.get("content") or ""))
    arguments = row.get("arguments")
    if arguments is not None and _settings.record_content:
        attributes["gen_ai.tool.call.arguments"] = _json(arguments)
    _tracer.start_span(f"toolmend.follow_up {tool}", attributes=attributes).end()


def rewritten(report: Report) -> None:
    """A rewrite at the decision step: an event on the current span (a model call's)."""
    if not report.detections:
        return
    span = trace.get_current_span()
    if not span.is_recording():
        return
    detections = report.detections
    span.add_event(
        "toolmend.rewrite",
        {
            "toolmend.form": report.form.value,
            "toolmend.rewrite.changed": report.changed,
            "toolmend.rewrite.failures": len(detections),
            "toolmend.kind": [d.kind.value for d in detections],
            "toolmend.rule": [d.rule for d in detections],
            "toolmend.basis": [d.basis or "" for d in detections],
            "gen_ai.tool.name": [d.tool_name or "" for d in detections],
            "toolmend.neutralised": any(d.neutralised for d in detections),
        },
    )


@contextmanager
def server_span(name: str, headers: Iterable[tuple[str, str]]) -> Iterator[Span]:
    """A SERVER span for one HTTP request, child of the caller's ``traceparent``.

    For the engine's proxy and server: rewrites made while handling the request
    become events of this span, and :func:`outgoing_headers` continues the trace.

    Args:
        name: The span name (``{method} {route}``, as the HTTP conventions say).
        headers: The request's headers.
    """
    carrier = {key.lower(): value for key, value in headers}
    parent = propagate.extract(carrier)
    with _tracer.start_as_current_span(
        name,
        context=parent,
        kind=SpanKind.SERVER,
        record_exception=False,
        set_status_on_exception=False,
    ) as span:
        yield span


_TRACE_HEADERS = frozenset({"traceparent", "tracestate"})


def outgoing_headers(headers: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """``headers`` with ``traceparent`` and ``tracestate`` of the current context.

    The caller's own trace headers pass unchanged when no span is current (no
    SDK and no incoming trace), so the trace is never cut.

    Args:
        headers: The headers of the request to forward.
    """
    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    if "traceparent" not in carrier:
        return list(headers)
    kept = [(k, v) for k, v in headers if k.lower() not in _TRACE_HEADERS]
    return kept + [(k, v) for k, v in sorted(carrier.items()) if k in _TRACE_HEADERS]
