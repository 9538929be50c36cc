"""Which run a tool call or a model call belongs to, and what that run recorded.

A failed call's output is a plain string with no error flag, so the failure
function records its verdict by call id for the input filter to find.  Call
ids are only unique within a run and one agent serves many runs at once, so
records are kept per run.  The input filter sees only the user's context
object (often ``None``), never the run's context wrapper; what both the tools
and the filter do share is the SDK's per-run context variable, set for the
whole of ``Runner.run`` and ``Runner.run_streamed`` and inherited by tool
tasks and threads.  Without it (another SDK version) records fall back to one
shared store, where the output text still keys them (below).

Each record is keyed by call id *and* a digest of the output text the model
will read, so a record can only ever apply to the output it was made for:
even runs sharing the fallback store cannot borrow each other's failures
unless their outputs read the same.

The same run identity feeds the outcome recorder (``record_outcomes``): each run
gets a name the first time one of its calls is observed, and the SDK gives no
end-of-run signal to a ``RunConfig``, so the run ends when its marker is
collected (right after ``Runner.run`` returns): the collector only queues the
name, and the next call or model call of any run settles it, taking the locks
the collector must not.  Runs outside the marker share one name and settle only
by the recorder's bounds.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import threading
import uuid
import weakref
from collections import deque
from collections.abc import Hashable
from contextvars import ContextVar
from typing import Any

from toolmend import Verdict
from toolmend.integrations import (
    CallRecord,
    RunRegistry,
    RunState,
    end_run,
    observe_call,
    recording_outcomes,
    text_of,
)

__all__ = ["RUNS", "Runs", "output_text", "record_key"]

log = logging.getLogger("toolmend.openai_agents")

_SHARED: Hashable = ("toolmend.openai_agents", "shared")


def _sdk_run_var() -> ContextVar[Any] | None:
    try:
        from agents.run_internal import agent_tool_configuration
    except ImportError:
        return None
    var = getattr(agent_tool_configuration, "_current_run", None)
    return var if isinstance(var, ContextVar) else None


def output_text(output: Any) -> str:
    """The text of a tool output as the model will read it, for keying records."""
    if isinstance(output, dict):
        output = [output]
    text = text_of(output)
    if text is not None:
        return text
    try:
        return json.dumps(output, sort_keys=True, default=repr)
    except (TypeError, ValueError):
        return repr(output)


def record_key(call_id: str, output: Any) -> str:
    """``call_id`` plus a digest of the output text: a record matches one output only."""
    digest = hashlib.blake2b(output_text(output).encode("utf-8", "replace"), digest_size=12)
    return f"{call_id}\x00{digest.hexdigest()}"


class Runs:
    """Per-run state, bounded, found from inside any tool call or model call of the run."""

    def __init__(self, max_runs: int = 1024) -> None:
        self.registry = RunRegistry(max_runs=max_runs)
        self._var = _sdk_run_var()
        self._lock = threading.RLock()
        self._watched: dict[int, weakref.ref[Any]] = {}
        self._names: dict[int, str] = {}
        self._ended: deque[str] = deque(maxlen=max_runs)
        self._warned = False

    def key(self) -> Hashable:
        """The current run's key; the shared key outside a run or without the SDK's marker."""
        if self._ended:
            self._settle_ended()
        owner = self._var.get() if self._var is not None else None
        if owner is None:
            if not self._warned:
                self._warned = True
                log.debug("toolmend: no per-run marker from the SDK; using the shared store")
            return _SHARED
        ident = id(owner)
        key = ("run", ident)
        with self._lock:
            ref = self._watched.get(ident)
            if ref is None or ref() is not owner:
                with contextlib.suppress(TypeError):
                    self._watched[ident] = weakref.ref(owner, self._forgetter(ident))
        return key

    def _forgetter(self, ident: int) -> Any:
        def forget(_: Any) -> None:
            # Runs inside the garbage collector, possibly while this thread holds
            # a lock: take none.
            self._watched.pop(ident, None)
            self.registry.drop_later(("run", ident))
            name = self._names.pop(ident, None)
            if name is not None:
                self._ended.append(name)

        return forget

    def observe(self, record: CallRecord) -> None:
        """One finished call of the current run, to the outcome recorder (none: nothing)."""
        if recording_outcomes() is None:
            return
        key = self.key()
        if key == _SHARED or not isinstance(key, tuple):
            observe_call(record, "shared")
            return
        with self._lock:
            name = self._names.setdefault(key[1], f"run-{uuid.uuid4().hex[:16]}")
        observe_call(record, name)

    def _settle_ended(self) -> None:
        """The runs whose marker was collected end now: their failures settle."""
        while self._ended:
            try:
                name = self._ended.popleft()
            except IndexError:  # another thread took the last one
                return
            end_run(name)

    def state(self) -> RunState:
        """The state of the run this code runs in."""
        return self.registry.get(self.key())

    def record(self, call_id: str, output: Any, verdict: Verdict) -> None:
        """Remember ``verdict`` for the output ``output`` of call ``call_id`` in this run."""
        self.state().verdicts[record_key(call_id, output)] = verdict

    def recorded(self, items: list[Any]) -> dict[str, Verdict]:
        """The recorded verdicts, by call id, for the tool outputs at the end of ``items``."""
        verdicts = self.state().verdicts
        found: dict[str, Verdict] = {}
        if not verdicts:
            return found
        for item in reversed(items):
            if not isinstance(item, dict):
                break
            kind = item.get("type")
            if kind == "function_call_output":
                call_id = item.get("call_id")
                if isinstance(call_id, str) and call_id not in found:
                    verdict = verdicts.get(record_key(call_id, item.get("output")))
                    if verdict is not None:
                        found[call_id] = verdict
            elif kind in ("function_call", "reasoning") or item.get("role") == "assistant":
                break
        return found


RUNS = Runs()
"""The process-wide store: failure functions, tools and filters of all runs share it."""
