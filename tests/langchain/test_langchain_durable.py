"""Crashes and resumes under a real checkpointer: SqliteSaver and PostgresSaver.

A crash is a ``BaseException`` raised inside the tool, after (or before) its
effect: it passes through toolmend and LangGraph like a dying worker, so the
"started" record is committed and the tools step is not checkpointed.  A second
agent on the same database then resumes the thread, as a restarted worker would.
The crash harness (``bench/crash.py``) does the same with real SIGKILLs.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.config import get_config
from lc_support import ai, call, shape, tool_messages

from call_records import call_record
from toolmend.durable import LANDED_TEXT, langgraph_key
from toolmend.integrations import CallContext
from toolmend_langchain import ToolMendMiddleware
from toolmend_langchain.testing import ScriptedChatModel
from tools.pg_cluster import Cluster


class Crash(BaseException):
    """The worker dies here."""


def script(messages: list[Any]) -> Any:
    """Pay once, then answer with what the tool said: deterministic on every resume."""
    results = [m for m in messages if isinstance(m, ToolMessage)]
    if not results:
        return ai(call("pay", {"amount": 5}, "p1"))
    return f"done: {results[-1].content}"


Saver = Callable[[], Any]


@pytest.fixture(params=["sqlite", "postgres"])
def saver(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Saver]:
    """Opens a checkpointer on one database; each call is a new worker's own connection."""
    opened: list[Any] = []
    if request.param == "sqlite":
        from langgraph.checkpoint.sqlite import SqliteSaver

        def open_sqlite() -> Any:
            conn = sqlite3.connect(tmp_path / "graph.db", check_same_thread=False)
            opened.append(conn)
            return SqliteSaver(conn)

        yield open_sqlite
    else:
        import psycopg
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg.rows import dict_row

        cluster: Cluster = request.getfixturevalue("postgres")
        dsn = cluster.database(f"lg{uuid.uuid4().hex[:8]}")

        def open_postgres() -> Any:
            conn = psycopg.connect(dsn, autocommit=True, prepare_threshold=0, row_factory=dict_row)
            opened.append(conn)
            saver = PostgresSaver(conn)
            saver.setup()
            return saver

        yield open_postgres
    for conn in opened:
        conn.close()


class Bank:
    def __init__(self) -> None:
        self.effects: list[str] = []
        self.seen_keys: list[str] = []

    def pay(self, key: str, *, dedup: bool) -> None:
        self.seen_keys.append(key)
        if not (dedup and key in self.effects):
            self.effects.append(key)


def run_twice(saver: Saver, make_tools: Callable[[], list[Any]], **options: Any) -> Any:
    """Run until the crash, then resume the thread on a fresh agent and database connection."""
    config: Any = {"configurable": {"thread_id": "t1"}}

    def agent() -> Any:
        checkpointer = saver()
        middleware = [ToolMendMiddleware(durable=checkpointer, **options)]
        return create_agent(
            ScriptedChatModel(script=script), make_tools(), middleware=middleware,
            checkpointer=checkpointer,
        )  # fmt: skip

    with pytest.raises(Crash):
        agent().invoke({"messages": [HumanMessage("pay 5")]}, config, durability="sync")
    return agent().invoke(None, config, durability="sync")


def test_key_honouring_tool_runs_again_with_the_same_key(saver: Saver) -> None:
    bank, crashed, namespaces = Bank(), [], []

    def tools() -> list[Any]:
        @tool
        def pay(amount: int, key: str) -> str:
            """Pay."""
            namespaces.append(get_config()["configurable"]["checkpoint_ns"])
            bank.pay(key, dedup=True)
            if not crashed:
                crashed.append(1)
                raise Crash("after the effect")
            return f"paid {amount}"

        return [pay]

    out = run_twice(saver, tools, effects={"pay": "write"}, idempotency_keys={"pay": "key"})
    assert namespaces[0] == namespaces[1]
    assert namespaces[0].startswith("tools:")
    assert bank.seen_keys == [langgraph_key("t1", namespaces[0], "p1")] * 2
    assert len(bank.effects) == 1
    assert shape(out["messages"])[-1] == ("ai", "done: paid 5", ())


def test_verify_tool_checks_and_does_not_repeat_a_landed_effect(saver: Saver) -> None:
    bank, crashed, asked = Bank(), [], []

    def landed(ctx: CallContext, exc: BaseException) -> bool:
        asked.append(type(exc).__name__)
        return len(bank.effects) == 1

    def tools() -> list[Any]:
        @tool
        def pay(amount: int) -> str:
            """Pay."""
            bank.pay(uuid.uuid4().hex, dedup=False)
            if not crashed:
                crashed.append(1)
                raise Crash("after the effect")
            return f"paid {amount}"

        return [pay]

    out = run_twice(saver, tools, effects={"pay": "write"}, verify={"pay": landed})
    assert asked == ["WorkerStopped"]
    assert len(bank.effects) == 1
    (result,) = tool_messages(out["messages"])
    assert (result.status, result.content) == ("success", LANDED_TEXT)
    assert result.response_metadata["toolmend"] == call_record(
        tool="pay",
        effect="write",
        effect_source="declared",
        form="c3",
        failed=False,
        attempts=0,
        replayed=True,
        landed=True,
    )
    assert shape(out["messages"])[-1] == ("ai", f"done: {LANDED_TEXT}", ())


def test_verify_tool_runs_again_when_the_effect_did_not_land(saver: Saver) -> None:
    bank, crashed = Bank(), []

    def tools() -> list[Any]:
        @tool
        def pay(amount: int) -> str:
            """Pay."""
            if not crashed:
                crashed.append(1)
                raise Crash("before the effect")
            bank.pay(uuid.uuid4().hex, dedup=False)
            return f"paid {amount}"

        return [pay]

    out = run_twice(
        saver, tools, effects={"pay": "write"}, verify={"pay": lambda ctx, exc: bank.effects != []}
    )
    assert len(bank.effects) == 1
    assert shape(out["messages"])[-1] == ("ai", "done: paid 5", ())


def test_plain_write_is_reported_not_repeated(saver: Saver) -> None:
    bank, crashed = Bank(), []

    def tools() -> list[Any]:
        @tool
        def pay(amount: int) -> str:
            """Pay."""
            bank.pay(uuid.uuid4().hex, dedup=False)
            if not crashed:
                crashed.append(1)
                raise Crash("after the effect")
            return f"paid {amount}"

        return [pay]

    out = run_twice(saver, tools, effects={"pay": "write"})
    assert len(bank.effects) == 1
    (result,) = tool_messages(out["messages"])
    assert result.status == "error"
    assert result.content == (
        "Tool 'pay' was interrupted: the worker running it stopped before the call finished, "
        "and whether it took effect is unknown. It was not repeated."
    )
    assert result.response_metadata["toolmend"]["outcome_unknown"] is True


def test_stock_langgraph_repeats_the_write(saver: Saver) -> None:
    """Without toolmend the resumed step runs the tool again: the payment lands twice."""
    bank, crashed = Bank(), []
    config: Any = {"configurable": {"thread_id": "t1"}}

    def tools() -> list[Any]:
        @tool
        def pay(amount: int) -> str:
            """Pay."""
            bank.pay(uuid.uuid4().hex, dedup=False)
            if not crashed:
                crashed.append(1)
                raise Crash("after the effect")
            return f"paid {amount}"

        return [pay]

    def agent() -> Any:
        checkpointer = saver()
        model = ScriptedChatModel(script=script)
        return create_agent(model, tools(), checkpointer=checkpointer)

    with pytest.raises(Crash):
        agent().invoke({"messages": [HumanMessage("pay 5")]}, config, durability="sync")
    out = agent().invoke(None, config, durability="sync")
    assert len(bank.effects) == 2
    assert shape(out["messages"])[-1] == ("ai", "done: paid 5", ())


def test_an_interrupt_inside_the_tool_is_not_taken_for_a_crash(saver: Saver) -> None:
    """``interrupt()`` is LangGraph's control flow: the resumed tool runs from the start."""
    from langgraph.types import Command, interrupt

    bank = Bank()

    @tool
    def pay(amount: int) -> str:
        """Pay."""
        if interrupt("pay 5?") != "yes":
            return "cancelled"
        bank.pay(uuid.uuid4().hex, dedup=False)
        return f"paid {amount}"

    checkpointer = saver()
    agent = create_agent(
        ScriptedChatModel(script=script),
        [pay],
        middleware=[ToolMendMiddleware(durable=checkpointer, effects={"pay": "write"})],
        checkpointer=checkpointer,
    )
    config: Any = {"configurable": {"thread_id": "t1"}}
    first = agent.invoke({"messages": [HumanMessage("pay 5")]}, config, durability="sync")
    assert [i.value for i in first["__interrupt__"]] == ["pay 5?"]
    assert bank.effects == []
    out = agent.invoke(Command(resume="yes"), config, durability="sync")
    assert len(bank.effects) == 1
    assert shape(out["messages"])[-1] == ("ai", "done: paid 5", ())
