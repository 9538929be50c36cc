"""LangGraph's identity of a tool call, and the checkpointer's database as the step store.

Translation only: the key is :func:`toolmend.durable.langgraph_key` of the
thread id and checkpoint namespace in the tool's runtime config and the
checkpointed tool call id; the store is the core's
:class:`~toolmend.durable.SqlStepStore` on the connection the checkpointer
already holds (``SqliteSaver`` or ``PostgresSaver``), so the "started" record
and the checkpoint live in one database.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from langgraph.prebuilt.tool_node import ToolCallRequest

from toolmend.durable import SqlStepStore, StepStore, connection_of, langgraph_key

__all__ = ["key_of", "store_for"]


def key_of(request: ToolCallRequest) -> str | None:
    """The call's durable key; ``None`` outside a checkpointed thread or without a call id."""
    runtime = getattr(request, "runtime", None)
    config = getattr(runtime, "config", None)
    configurable = config.get("configurable") if isinstance(config, Mapping) else None
    if not isinstance(configurable, Mapping):
        return None
    thread = configurable.get("thread_id")
    call_id = request.tool_call.get("id")
    if thread is None or not isinstance(call_id, str) or not call_id:
        return None
    namespace = configurable.get("checkpoint_ns") or ""
    return langgraph_key(str(thread), str(namespace), call_id)


def _is_store(value: Any) -> bool:
    return all(callable(getattr(value, name, None)) for name in ("begin", "finish", "budget"))


def store_for(target: Any, *, capacity: float = 10.0, per_call: float = 0.1) -> StepStore:
    """The step store for ``durable=``: a checkpointer's database, or a store as it is.

    Args:
        target: A ``SqliteSaver``, a ``PostgresSaver`` (on a connection or a pool), or any
            object with the :class:`toolmend.durable.StepStore` methods.
        capacity: Tokens of each tool's shared retry budget.
        per_call: Tokens each finished call adds back.
    """
    if _is_store(target):
        return target  # type: ignore[no-any-return]
    kind = type(target).__name__
    dialect: Literal["sqlite", "postgres"]
    if kind == "SqliteSaver":
        dialect = "sqlite"
    elif kind == "PostgresSaver":
        dialect = "postgres"
    else:
        raise TypeError(
            f"durable= takes a SqliteSaver, a PostgresSaver or a toolmend StepStore, not {kind}"
            " (for an async saver, pass the sync saver on the same database)"
        )
    connect = connection_of(target.conn, target.lock)
    return SqlStepStore(connect, dialect, capacity=capacity, per_call=per_call)
