"""Per-run state for adapters that serve many runs at once.

A loop guard and the verdicts recorded for tool calls belong to one
conversation; a server handling many keeps them in a bounded LRU so that
abandoned runs cannot grow memory without limit.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

from .detect import Verdict
from .loop import LoopGuard

__all__ = ["BoundedDict", "RunRegistry", "RunState"]


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
    """What one run remembers: its loop guard and call id -> verdict."""

    loop: LoopGuard
    verdicts: dict[str, Verdict] = field(default_factory=BoundedDict)


class RunRegistry:
    """Bounded, thread-safe map from a run key to its :class:`RunState` (LRU)."""

    def __init__(
        self, max_runs: int = 1024, loop_factory: Callable[[], LoopGuard] = LoopGuard
    ) -> None:
        if max_runs < 1:
            raise ValueError("max_runs must be >= 1")
        self.max_runs = max_runs
        self.loop_factory = loop_factory
        self._runs: OrderedDict[Hashable, RunState] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> RunState:
        """The run's state, created on first use; the least recently used run is evicted."""
        with self._lock:
            state = self._runs.get(key)
            if state is not None:
                self._runs.move_to_end(key)
                return state
            state = RunState(self.loop_factory())
            self._runs[key] = state
            while len(self._runs) > self.max_runs:
                self._runs.popitem(last=False)
            return state

    def drop(self, key: Hashable) -> None:
        with self._lock:
            self._runs.pop(key, None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._runs)

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._runs
