"""``RecoveringSession``: an MCP client session whose tool calls recover.

It wraps an ``mcp.Client`` or ``mcp.ClientSession`` (either line of the
Python SDK, 1.x or 2.x; ``_compat`` holds what differs; everything but
``call_tool`` is the wrapped object's own) and runs each tool call through the
core: ``toolmend.integrations.aexecute`` decides retries from the tool's declared effect,
the loop guard refuses calls that cannot succeed, and outcome contracts (the
tool's ``output_schema`` and any mined ones) add an advisory receipt.  What it
found goes under ``result.meta["toolmend"]``; what the model reads changes
only as the chosen form says.
"""

from __future__ import annotations

import collections
import logging
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Unpack

import anyio
from mcp import ClientSession
from mcp.types import CallToolResult, Tool, ToolListChangedNotification
from pydantic import ValidationError

from toolmend import (
    ContextPolicy,
    Form,
    LoopGuard,
    ToolFailure,
    classify_result,
    telemetry,
)
from toolmend.contracts import Code, Contracts, Violation, receipt, review
from toolmend.integrations import (
    AttemptRecord,
    CallContext,
    CallRecord,
    Delegating,
    Recovery,
    RecoveryOptions,
    Source,
    aexecute,
    cap_value,
    check_call,
    compose_note,
    end_run,
    observe_call,
    recording_outcomes,
)

from . import _compat
from ._catalog import Catalog, ToolInfo
from ._compat import Client, MCPError, is_error, next_cursor, output_schema, structured_content
from ._errors import FailedResult, MalformedResult, failed_result
from ._hooks import chain_messages, record_rejections, shadow_validation
from ._results import error_result, protocol_error_text, result_text, with_findings

if TYPE_CHECKING:
    from mcp.shared.dispatcher import ProgressFnT
    from mcp.types import InputResponses, RequestParamsMeta

__all__ = ["RecoveringSession"]

log = logging.getLogger("toolmend.mcp")

_MAX_PAGES = 100
SESSION_MEMORY = 600.0
"""Seconds a session's default loop guard remembers a failure: a session has no run."""
RECENT = 64
"""Calls of the run a session keeps as history for its classifier."""


def _shown(exc: BaseException | None) -> str | None:
    """The text the model reads for what an attempt raised: the server's own words."""
    if isinstance(exc, FailedResult | MalformedResult):
        return exc.text
    if isinstance(exc, MCPError):
        return protocol_error_text(exc)
    return None


def _error(record: AttemptRecord) -> str:
    return _shown(record.exception) or record.error


def _history(records: Sequence[AttemptRecord]) -> tuple[dict[str, Any], ...]:
    """The core's records of the failed attempts, each with the error as the server wrote it."""
    return tuple({**record.to_dict(), "error": _error(record)} for record in records)


@dataclass(frozen=True, slots=True)
class _Success:
    result: CallToolResult
    rejected: str | None
    """The SDK's output-schema complaint, when it had one."""


class RecoveringSession(Delegating):
    """Wrap an MCP client once; every ``call_tool`` classifies, retries safely and reports.

    - ``effects`` maps tool names to ``read_only``, ``idempotent`` or ``write``;
      only read-only and idempotent tools are retried automatically.  With
      ``trust_annotations=True`` a tool's MCP annotations stand in for an
      undeclared effect (``readOnlyHint`` / ``idempotentHint``); the spec calls
      them untrusted hints, so they are ignored by default.
    - ``retry`` is the core's policy (``None``: never retry); ``loop`` the loop
      guard for this session.  A session has no run, so the default guard
      forgets a failure after ``SESSION_MEMORY`` seconds (10 minutes) and
      remembers at most ``toolmend.run._loop.REMEMBERED`` failed calls, tools and
      refusals, the oldest forgotten first; it refuses exact repeats of fixable
      and unrecoverable calls and only advises after a run of failures.
      ``read_timeout`` (seconds, default 30) bounds a call whose caller gave no
      ``read_timeout_seconds``: a hung server gives a transient result.
    - ``form`` is how guidance reaches the model: ``c1`` appends it to the
      result's text; ``c2``-``c4`` leave the content alone and put the runtime
      note in the findings for the host's own rewrite; ``off`` changes no content
      at all (receipts included).
    - ``contracts`` are outcome contracts (``toolmend.contracts``); each listed
      tool's ``output_schema`` is declared on top of them.
    - ``raise_protocol_errors=True`` re-raises an ``MCPError`` (a JSON-RPC error
      or a read timeout) once retrying is over, instead of returning it as an
      error result.  A URL elicitation request (``-32042``) is not a failure and is
      always raised as the SDK raises it, so the host can send the user there.
    - ``malformed_calls`` (default on): a call to a tool the listing does not have,
      or with arguments that break the tool's ``inputSchema``, is not sent; it
      comes back as a fixable error result that names the listed tools or the
      argument to change.  ``False`` sends every call as given.
    - ``context`` (:class:`toolmend.ContextPolicy`): the note in the findings
      leaves out the error's steps for the developer unless it says otherwise
      (``filter_steps=False``, or the tool in ``agent_steps``); hand the same
      policy to :func:`toolmend_mcp.model_messages` for the model's request.
    - With ``toolmend.integrations.record_outcomes(...)`` installed, each call
      is fed to the outcome recorder: the session is one run (``run_id``), which
      ends when ``async with RecoveringSession(client)`` exits or :meth:`end_run`
      is called.
    - The run's last :data:`RECENT` calls are evidence for the next: an unclear
      failure of a call that succeeded earlier in the run, with the same
      arguments, is read as temporary (``classify_result(history=...)``).

    Args:
        session_or_client: The connected ``mcp.Client`` or ``ClientSession``.
        loop: The loop guard, as above.
        raise_protocol_errors: Re-raise an ``MCPError``, as above.
        read_timeout: Seconds, as above.
        malformed_calls: Refuse malformed calls before sending, as above.
        context: The errors-in-context policy, as above.
        **options: ``effects``, ``trust_annotations``, ``retry``, ``form`` and
            ``contracts``, as above (:class:`toolmend.integrations.RecoveryOptions`).
    """

    wrapped: ClientSession | Client
    run_id: str
    """This session's run for the outcome recorder: unique, so a shared store keeps runs apart."""

    def __init__(
        self,
        session_or_client: ClientSession | Client,
        *,
        loop: LoopGuard | None = None,
        raise_protocol_errors: bool = False,
        read_timeout: float | None = 30.0,
        malformed_calls: bool = True,
        context: ContextPolicy | None = None,
        **options: Unpack[RecoveryOptions],
    ) -> None:
        self.recovery = Recovery.of(**options)
        self.wrapped = session_or_client
        self.context = context if context is not None else ContextPolicy()
        self.read_timeout = read_timeout
        self.loop = loop if loop is not None else LoopGuard(forget_after=SESSION_MEMORY)
        self.raise_protocol_errors = raise_protocol_errors
        self.malformed_calls = malformed_calls
        self._catalog = Catalog(self.recovery)
        self._declared: Contracts | None = self.recovery.contracts
        self._session: ClientSession | None = None
        self._generation = 0
        self._lock = anyio.Lock()
        self.run_id = f"mcp-{uuid.uuid4().hex[:16]}"
        self._recent: collections.deque[dict[str, Any]] = collections.deque(maxlen=RECENT)

    async def __aenter__(self) -> RecoveringSession:
        """``async with RecoveringSession(client)``: the block is the session's run.

        The wrapped client stays as it is (it is entered and closed by its owner).
        """
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        """The run ended: its failures settle with the outcome recorder."""
        self.end_run()

    def end_run(self) -> None:
        """This session's run ended: what followed each failure is settled (``record_outcomes``).

        Calls after it start a new run.
        """
        end_run(self.run_id)
        self.run_id = f"mcp-{uuid.uuid4().hex[:16]}"
        self._recent.clear()

    def _observe_call(self, record: CallRecord, arguments: Mapping[str, Any] | None) -> None:
        """A finished call to the run's history and the outcome recorder, with its arguments."""
        self._recent.append(
            {
                "tool": record.tool,
                "failed": record.failed,
                "arguments": arguments,
                "cause": record.cause,
            }
        )
        if recording_outcomes() is not None:
            observe_call(replace(record, arguments=dict(arguments or {})), self.run_id)

    # -- the tool listing ------------------------------------------------------

    def tools_changed(self) -> None:
        """Forget the cached tool listing; the next call lists the tools again."""
        self._generation += 1
        self._catalog.invalidate()
        log.debug("toolmend.mcp: tool listing marked stale")

    async def handle_message(self, message: Any) -> None:
        """A message handler (or a step of one) that notices ``tools/list_changed``.

        Installed automatically where the SDK allows; hosts on other SDK
        versions, or listening with ``client.listen()``, can call it themselves.

        Args:
            message: A message the client received.
        """
        self._observe(message)

    def _observe(self, message: Any) -> None:
        if isinstance(_compat.notification(message), ToolListChangedNotification):
            self.tools_changed()

    def _current_session(self) -> ClientSession:
        return _compat.session_of(self.wrapped)

    async def _list(self) -> list[Tool]:
        tools: list[Tool] = []
        cursor: str | None = None
        for _ in range(_MAX_PAGES):
            page = await _compat.list_page(self.wrapped, cursor)
            tools.extend(page.tools)
            cursor = next_cursor(page)
            if cursor is None:
                break
        return tools

    async def _catalog_for(self, session: ClientSession) -> Catalog:
        """The tool listing of this connection, listed once; never raises."""
        if session is not self._session:
            self._session = session
            self._catalog.invalidate()
            shadow_validation(session)
            if not chain_messages(session, self._observe):
                log.info("toolmend.mcp: cannot watch tools/list_changed; call tools_changed()")
        if self._catalog.complete:
            return self._catalog
        async with self._lock:
            if self._catalog.complete:
                return self._catalog
            generation = self._generation
            try:
                tools = await self._list()
            except Exception as exc:
                log.warning("toolmend.mcp: tools/list failed (%r); effects stay undeclared", exc)
                return self._catalog
            if generation == self._generation:
                self._catalog.load(tools)
                self._declared = _with_schemas(self.recovery.contracts, tools)
                log.debug("toolmend.mcp: listed %d tools", len(tools))
        return self._catalog

    # -- calls -----------------------------------------------------------------

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        read_timeout_seconds: float | timedelta | None = None,
        progress_callback: ProgressFnT | None = None,
        *,
        input_responses: InputResponses | None = None,
        request_state: str | None = None,
        meta: RequestParamsMeta | None = None,
    ) -> CallToolResult:
        """``call_tool`` of the wrapped client, with recovery; returns a ``CallToolResult``.

        The arguments are the 2.x SDK's.  On the 1.x line the read timeout may
        also be a ``timedelta`` (as 1.x's own ``call_tool`` takes it), and
        ``input_responses`` / ``request_state``, which 1.x cannot send, raise
        ``TypeError``.

        Args:
            name: The tool's name.
            arguments: The call's arguments.
            read_timeout_seconds: Seconds to wait for the result (default: the session's
                ``read_timeout``).
            progress_callback: Receives the server's progress notifications.
            input_responses: As the 2.x SDK's ``call_tool``.
            request_state: As the 2.x SDK's ``call_tool``.
            meta: The request's ``_meta``.
        """
        with telemetry.tool_call(name, framework="mcp"):
            return await self._call_tool(
                name,
                arguments,
                read_timeout_seconds,
                progress_callback,
                input_responses=input_responses,
                request_state=request_state,
                meta=meta,
            )

    async def _call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None,
        read_timeout_seconds: float | timedelta | None,
        progress_callback: ProgressFnT | None,
        *,
        input_responses: InputResponses | None,
        request_state: str | None,
        meta: RequestParamsMeta | None,
    ) -> CallToolResult:
        session = self._current_session()
        catalog = await self._catalog_for(session)
        info = catalog.info(name)

        async def attempt(ctx: CallContext) -> _Success:
            with record_rejections() as rejection:
                try:
                    result = await _compat.call_tool(
                        self.wrapped,
                        name,
                        arguments,
                        read_timeout_seconds
                        if read_timeout_seconds is not None
                        else self.read_timeout,
                        progress_callback,
                        input_responses=input_responses,
                        request_state=request_state,
                        meta=meta,
                    )
                except ValidationError:
                    raise MalformedResult() from None
            verdict = classify_result(
                result_text(result),
                is_error=is_error(result),
                tool=name,
                arguments=arguments,
                schema=info.input_schema,
                history=tuple(self._recent),
            )
            if verdict.failed:
                raise failed_result(name, result, verdict)
            return _Success(result, rejection.message)

        args = dict(arguments or {})
        if self.malformed_calls:
            if catalog.complete and name not in catalog.tools:
                self.tools_changed()  # a stale listing must not refuse a new tool
                catalog = await self._catalog_for(session)
                info = catalog.info(name)
            check = check_call(name, args, catalog.schemas())
            if check.failure is not None:
                # A tool the server does not have is not followed: the text is toolmend's.
                known = name in catalog.tools or not catalog.complete
                return self._failed(name, arguments, info, check.failure, observed=known)
        blocked = self.loop.before(name, args)
        if blocked is not None:
            return self._failed(name, arguments, info, blocked)
        history: list[AttemptRecord] = []
        outcome = await aexecute(
            attempt,
            tool=name,
            arguments=args,
            effect=info.effect,
            policy=self.recovery.policy,
            history=history,
        )
        if isinstance(outcome, ToolFailure):
            return self._failed(name, arguments, info, outcome)
        self.loop.after(name, args, None)
        return self._succeeded(name, arguments, info, outcome, history)

    def _failed(
        self,
        name: str,
        arguments: Mapping[str, Any] | None,
        info: ToolInfo,
        failure: ToolFailure,
        *,
        observed: bool = True,
    ) -> CallToolResult:
        exc = failure.exception
        rule, source = failure.rule, Source.EXCEPTION
        text = _shown(exc) or failure.cause
        if isinstance(exc, FailedResult):
            base = exc.result
            rule, source = exc.verdict.rule or rule, exc.verdict.source or Source.FLAG
        else:
            base = error_result(text)
        self.loop.after(name, dict(arguments or {}), failure, error=text)
        failure = self.loop.advised(failure)
        guidance = failure.guidance
        omit = self.recovery.form is not Form.C1 and self.context.filters(name)
        note = compose_note(name, arguments, text, guidance, omit_steps=omit) if guidance else None
        telemetry.record(
            replace(failure, rule=rule),
            effect=info.effect,
            effect_source=info.effect_source,
            form=self.recovery.form.value,
            neutralised=note.neutralised if note else (),
        )
        findings = CallRecord.of_failure(
            failure,
            effect=info.effect.value,
            effect_source=info.effect_source,
            form=self.recovery.form.value,
            rule=rule,
            source=source.value,
            note=note.text if note else None,
            neutralised=note.neutralised if note else (),
            omitted=note.omitted if note else (),
            history=_history(failure.history),
        )
        if observed:
            self._observe_call(replace(findings, cause=text), arguments)
        if self.raise_protocol_errors and isinstance(exc, MCPError):
            raise exc
        log.info(
            "toolmend.mcp: %s failed: kind=%s rule=%s attempts=%d stop=%s effect=%s(%s)",
            name, failure.kind.value, rule, failure.attempts, findings.stop,
            info.effect.value, info.effect_source,
        )  # fmt: skip
        # The core's C1 rule: the guidance follows the result's own text in the result.
        append = failure.result_text(self.recovery.form, "") if guidance else None
        return with_findings(base, findings, append=append)

    def _succeeded(
        self,
        name: str,
        arguments: Mapping[str, Any] | None,
        info: ToolInfo,
        success: _Success,
        history: list[AttemptRecord],
    ) -> CallToolResult:
        result = success.result
        has_schema = info.output_schema is not None
        structured = structured_content(result)
        value = structured if structured is not None or has_schema else result_text(result)
        available = list(self._catalog.tools)
        checked = review(
            self._declared, name, arguments, value, available_tools=available, failed=False
        )
        violations, made = checked.violations, checked.receipt
        if success.rejected is not None and not violations:
            expected = "a value valid against the outputSchema in tools/list"
            violations = (
                Violation(
                    Code.SCHEMA_VIOLATION, "$", expected, cap_value(value), success.rejected, name
                ),
            )
            substitutes = self._declared.substitutes if self._declared is not None else None
            made = receipt(
                name, value, violations, available_tools=available, substitutes=substitutes
            )
            telemetry.contract_violations(name, violations)
        telemetry.record(
            None,
            effect=info.effect,
            effect_source=info.effect_source,
            form=self.recovery.form.value,
        )
        findings = CallRecord(
            tool=name,
            effect=info.effect.value,
            effect_source=info.effect_source,
            form=self.recovery.form.value,
            failed=False,
            attempts=len(history) + 1,
            source=Source.CONTRACT.value if made is not None else None,
            history=_history(history),
            violations=tuple(v.to_dict() for v in violations),
            receipt=made.outcome_contract() if made is not None else None,
        )
        self._observe_call(findings, arguments)
        if history:
            log.info("toolmend.mcp: %s succeeded after %d attempts", name, len(history) + 1)
        if made is not None:
            log.info(
                "toolmend.mcp: %s result violates its contract: %s",
                name, ", ".join(v.code.value for v in violations),
            )  # fmt: skip
        block = made.advisory() if made is not None and self.recovery.form is not Form.OFF else None
        return with_findings(result, findings, extra_block=block)


def _with_schemas(contracts: Contracts | None, tools: list[Tool]) -> Contracts | None:
    """``contracts`` with each tool's ``output_schema`` declared, unless one is declared already."""
    merged = contracts
    for tool in tools:
        schema = output_schema(tool)
        if schema is None:
            continue
        current = merged.get(tool.name) if merged is not None else None
        if current is not None and current.schema is not None:
            continue
        merged = (merged or Contracts()).declare(tool.name, schema)
    return merged
