"""Per-run state for adapters that serve many runs at once.

A loop guard and the verdicts recorded for tool calls belong to one
conversation; a server handling many keeps them in a bounded LRU so that
abandoned runs cannot grow memory without limit.  Adapters that keep the
verdicts on the messages instead (a checkpointer, MCP ``_meta``) store them as
plain records and read them back with :func:`verdict_from_record`.
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from collections.abc import Callable, Hashable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TypeVar

from .._types import Kind, Source
from ..classify._detect import Verdict
from ._loop import LoopGuard

__all__ = ["RunRegistry", "RunState", "scoped", "verdict_from_record", "verdict_record"]


T = TypeVar("T")


@contextmanager
def scoped(var: ContextVar[T | None], value: T) -> Iterator[T]:
    """Give ``var`` the value ``value`` for the block, and back its old value after.

    How an adapter keeps per-call or per-run state where its framework gives no
    place to put it: the context travels with the run into its tasks and
    threads, so concurrent runs each see their own value and never mix.

    Args:
        var: The context variable (``None`` outside any block).
        value: What the block, and everything it starts, sees.

    Yields:
        ``value``, for ``with scoped(var, Thing()) as thing:``.
    """
    token = var.set(value)
    try:
        yield value
    finally:
        var.reset(token)


def verdict_record(verdict: Verdict) -> dict[str, Any]:
    """A verdict as a JSON-ready record (``failed``, ``kind``, ``rule``, ``source``, ...).

    Args:
        verdict: The verdict.
    """
    return {
        "failed": verdict.failed,
        "kind": verdict.kind.value if verdict.kind is not None else None,
        "rule": verdict.rule,
        "source": verdict.source.value if verdict.source is not None else None,
        "reason": verdict.reason,
        "guidance": verdict.guidance,
    }


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def verdict_from_record(record: Mapping[str, Any], *, rule: str = "recorded") -> Verdict | None:
    """The verdict a record stands for (one from :func:`verdict_record` or a superset).

    ``rule`` stands in for a missing rule, a missing source is a flag; ``None``
    when the record is not readable, so the caller falls back to the text.

    Args:
        record: A record from :func:`verdict_record` or a superset (a ``CallRecord`` as a dict).
        rule: The rule to report when the record names none.
    """
    failed = record.get("failed")
    if failed is False:
        return Verdict(False)
    if failed is not True:
        return None
    try:
        kind = Kind(record["kind"])
        source = Source(record.get("source") or Source.FLAG.value)
    except (KeyError, ValueError, TypeError):
        return None
    return Verdict(
        True,
        kind,
        _text(record.get("rule")) or rule,
        source,
        _text(record.get("reason")),
        _text(record.get("guidance")),
    )


class BoundedDict(dict[str, Verdict]):
    """A dict that keeps only its ``limit`` most recently inserted keys."""

    def __init__(self, limit: int = 1024) -> None:
        super().__init__()
        self.limit = limit
        self._lock = threading.Lock()

    def __setitem__(self, key: str, value: Verdict) -> None:
        with self._lock:
            if key in self:
                super().__delitem__(key)
            super().__setitem__(key, value)
            while len(self) > self.limit:
                super().__delitem__(next(iter(self)))


@dataclass(eq=False)
class RunState:
    """What one run remembers: its loop guard and call id -> verdict.

    Attributes:
        loop: The run's loop guard.
        verdicts: Call id -> verdict of the run's tool results.
    """

    loop: LoopGuard
    verdicts: dict[str, Verdict] = field(default_factory=BoundedDict)


class RunRegistry:
    """Bounded, thread-safe map from a run key to its :class:`RunState` (LRU).

    Args:
        max_runs: Runs kept at most; the least recently used is forgotten.
        loop_factory: Makes each run's loop guard.
    """

    def __init__(
        self, max_runs: int = 1024, loop_factory: Callable[[], LoopGuard] = LoopGuard
    ) -> None:
        if max_runs < 1:
            raise ValueError("max_runs must be >= 1")
        self.max_runs = max_runs
        self.loop_factory = loop_factory
        self._runs: OrderedDict[Hashable, RunState] = OrderedDict()
        self._lock = threading.RLock()
        self._pending: deque[tuple[Hashable, RunState | None]] = deque()

    def get(self, key: Hashable) -> RunState:
        """The run's state, created on first use; the least recently used run is evicted.

        Args:
            key: The run's key.
        """
        with self._lock:
            self._sweep()
            state = self._runs.get(key)
            if state is not None:
                self._runs.move_to_end(key)
                return state
            state = RunState(self.loop_factory())
            self._runs[key] = state
            while len(self._runs) > self.max_runs:
                self._runs.popitem(last=False)
            return state

    def _sweep(self) -> None:
        while self._pending:
            gone, expected = self._pending.popleft()
            if self._runs.get(gone) is expected:
                self._runs.pop(gone, None)

    def drop(self, key: Hashable) -> None:
        """Forget the run ``key`` now.

        Args:
            key: The run's key.
        """
        with self._lock:
            self._runs.pop(key, None)

    def drop_later(self, key: Hashable) -> None:
        """Forget a run at the next :meth:`get`, taking no lock.

        For weakref callbacks and finalizers: the garbage collector can run them
        on a thread that already holds this registry's lock, so they must not wait
        for it.  Only the state the key holds now is forgotten: a later run that
        reuses the key (an ``id()`` reused after the first run died) keeps its own.

        Args:
            key: The run's key.
        """
        self._pending.append((key, self._runs.get(key)))

    def __len__(self) -> int:
        with self._lock:
            self._sweep()
            return len(self._runs)

    def __contains__(self, key: object) -> bool:
        with self._lock:
            self._sweep()
            return key in self._runs
