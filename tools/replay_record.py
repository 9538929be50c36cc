"""Record the outcome-labelled replay streams from real software run here, offline.

Usage: ``PYTHONPATH=... python tools/replay_record.py [--pause 0.6] [--seed 31] [--only NAME]``
(it takes a few minutes) writes ``bench/replay/streams.jsonl``, which ``bench/replay.py``
reads.

Every line is one tool call really made against a real system started here on
loopback or in a temporary folder: the reference MCP servers (``mcp-server-fetch``,
``-git``, ``-time`` from PyPI; ``server-filesystem``, ``-memory`` from npm), SQLite
through Python's ``sqlite3``, a throwaway PostgreSQL cluster through ``psycopg``,
``redis-server`` through ``redis-cli``, and ``curl`` against a loopback JSON API.  For
each call that fails, the ground truth is what then worked, found by running it:

1. the same call again after ``--pause`` seconds: it succeeds, the failure was
   ``transient`` (outcome ``retry_succeeded``);
2. otherwise the call with the argument an expert would change: it succeeds, the
   failure was ``fixable`` (``changed_arguments_succeeded``);
3. otherwise (the error persists) ``unrecoverable`` (``failed_again``).

A transient condition is a real one, made by the scenario before the call and gone
after a short window shorter than the pause: a lock held by another connection or
process, a role's connections all taken, a busy Lua script, a 503 or 429 with
``Retry-After`` on one endpoint, a server restarting, a file a job writes late.
The specifics (table, file, branch, key, id, timezone, enum value, endpoint) are
drawn from a seeded generator, so common failures recur with different values, each
run for real.  Successful calls are recorded as ``clean`` lines, and so is the
successful retry or corrected call that settled a failure.

Where the systems come from (nothing here downloads): ``TOOLMEND_MCP_PY`` (a bin
folder with the Python servers) and ``TOOLMEND_MCP_NPM`` (a folder whose
``node_modules/@modelcontextprotocol`` holds the npm servers) as ``./dev test`` sets
them, else the newest ``~/.cache/toolmend/mcp-servers-*``; PostgreSQL from
``tools.pg_cluster``; ``redis-server``, ``redis-cli``, ``curl`` and ``node`` from
PATH.  A system that is missing is skipped with a message, and its stream is left
out of the file.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "replay" / "streams.jsonl"
WINDOW = 0.25
"""How long a transient condition lasts: shorter than the pause before the retry."""

Args = dict[str, Any]


# -- the steps of a stream and how they are played ------------------------------------


@dataclass(frozen=True)
class Reply:
    """What one call returned: its text, and whether it failed and was flagged so.

    Attributes:
        text: The tool result's text exactly as the tool gave it.
        failed: Whether the call failed (the system's own verdict: an exception, an
            error flag, an exit code, an HTTP status, an error reply).
        flagged: Whether the result carried a machine-readable error flag an agent
            framework would pass on (``isError``, an exception, a non-zero exit).
    """

    text: str
    failed: bool
    flagged: bool


@dataclass(frozen=True)
class Step:
    """One call in a stream: a call expected to succeed (``fix`` unused) or to fail.

    Attributes:
        tool: The tool's name.
        args: Its arguments.
        fails: Whether the call is meant to fail (a warning is printed when it does not
            do what was meant; the record says what really happened either way).
        fix: The arguments an expert would send after the error (``None``: nothing
            to change, only a retry).
        how: How the failure is produced, for the record's ``source``.
        setup: Run just before the call: prepares state or starts a transient condition.
    """

    tool: str
    args: Args
    fails: bool = False
    fix: Args | None = None
    how: str = ""
    setup: Callable[[], None] | None = None


def ok(tool: str, **args: Any) -> Step:
    """A call meant to succeed."""
    return Step(tool, args)


def bad(
    tool: str,
    args: Args,
    fix: Args | None,
    how: str,
    setup: Callable[[], None] | None = None,
) -> Step:
    """A call meant to fail, with the corrected arguments an expert would try."""
    return Step(tool, args, True, fix, how, setup)


Call = Callable[[str, Args], Awaitable[Reply]]


@dataclass
class Recorder:
    """Plays steps against one deployment and keeps the records."""

    deployment: str
    call: Call
    pause: float
    records: list[dict[str, Any]] = field(default_factory=list)
    surprises: int = 0

    def _line(self, tool: str, args: Args, reply: Reply, **more: Any) -> None:
        self.records.append(
            {
                "deployment": self.deployment,
                "tool": tool,
                "content": reply.text,
                "is_error": reply.failed,
                "arguments": args,
                **more,
            }
        )

    async def play(self, step: Step) -> None:
        if step.setup is not None:
            step.setup()
        reply = await self.call(step.tool, step.args)
        if not reply.failed:
            if step.fails:
                self.surprises += 1
                print(f"  ! {self.deployment} {step.tool} {step.args}: succeeded", file=sys.stderr)
            self._clean(step.tool, step.args, reply, "a call that succeeded")
            return
        if not step.fails:
            self.surprises += 1
            print(f"  ! {self.deployment} {step.tool}: {reply.text[:160]!r}", file=sys.stderr)
        await asyncio.sleep(self.pause)
        again = await self.call(step.tool, step.args)
        how = step.how or "an unplanned failure of a call meant to succeed"
        if not again.failed:
            self._failure(step, reply, "retry_succeeded", "transient", how)
            self._clean(step.tool, step.args, again, "the retry that succeeded")
            return
        if step.fix is not None:
            fixed = await self.call(step.tool, step.fix)
            if not fixed.failed:
                self._failure(step, reply, "changed_arguments_succeeded", "fixable", how)
                self._clean(step.tool, step.fix, fixed, "the corrected call that succeeded")
                return
        self._failure(step, reply, "failed_again", "unrecoverable", how)

    def _failure(self, step: Step, reply: Reply, outcome: str, truth: str, how: str) -> None:
        self._line(
            step.tool,
            step.args,
            reply,
            outcome=outcome,
            truth=truth,
            source=how,
            flagged=reply.flagged,
            fix=step.fix,
        )

    def _clean(self, tool: str, args: Args, reply: Reply, how: str) -> None:
        self._line(tool, args, reply, truth="clean", source=how, flagged=reply.flagged)


Maker = Callable[[], Step]


def plan(
    rng: random.Random, makers: list[tuple[int, Maker]], cleans: list[Maker], fails: int, n: int
) -> list[Step]:
    """A deployment's stream: ``fails`` failing calls, each from a maker drawn by weight
    (each maker draws its own specifics), and ``n`` clean calls, in one seeded order."""
    weights = [w for w, _ in makers]
    steps = [rng.choices(makers, weights)[0][1]() for _ in range(fails)]
    steps += [cleans[rng.randrange(len(cleans))]() for _ in range(n)]
    rng.shuffle(steps)
    return steps


def later(seconds: float, action: Callable[[], object]) -> None:
    """Run ``action`` on a thread after ``seconds``: the end of a transient condition."""
    timer = threading.Timer(seconds, action)
    timer.daemon = True
    timer.start()


def held(hold: Callable[[threading.Event, threading.Event], None]) -> Callable[[], None]:
    """A setup that starts ``hold(ready, done)`` on a thread and waits until it holds."""

    def setup() -> None:
        ready, done = threading.Event(), threading.Event()
        threading.Thread(target=hold, args=(ready, done), daemon=True).start()
        if not ready.wait(10):
            raise RuntimeError("the transient condition did not start")
        later(WINDOW, done.set)

    return setup


# -- a loopback web site and JSON API ---------------------------------------------------

ORDER_STATUS = ("pending", "paid", "shipped", "cancelled")
PAGES = ("pricing", "install", "changelog", "faq", "quickstart", "limits", "status", "about")


class Site:
    """A loopback site: HTML pages and a small JSON API, with outages armed per path.

    ``arm(path, status, seconds)`` makes one path answer ``status`` (503 or 429, with
    ``Retry-After: 1``) for that long; ``down(seconds)`` closes the listening socket
    and opens it again on the same port.
    """

    def __init__(self, port: int = 0) -> None:
        self.outages: dict[str, tuple[int, float]] = {}
        self.orders: dict[int, dict[str, Any]] = {
            i: {"id": i, "status": ORDER_STATUS[i % 4], "total": 10 + i} for i in range(1, 41)
        }
        self.lock = threading.Lock()
        self._server = self._bind(port)
        self.port = int(self._server.server_address[1])
        self.url = f"http://127.0.0.1:{self.port}"
        self._serve()

    def _bind(self, port: int) -> ThreadingHTTPServer:
        site = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                site.answer(self, "GET")

            def do_POST(self) -> None:
                site.answer(self, "POST")

            def do_DELETE(self) -> None:
                site.answer(self, "DELETE")

        server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        server.daemon_threads = True
        return server

    def _serve(self) -> None:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def arm(self, path: str, status: int, seconds: float = WINDOW) -> Callable[[], None]:
        def setup() -> None:
            with self.lock:
                self.outages[path] = (status, time.monotonic() + seconds)

        return setup

    def down(self) -> None:
        """Close the port now and open it again after the window (a restart)."""
        self._server.shutdown()
        self._server.server_close()

        def up() -> None:
            self._server = self._bind(self.port)
            self._serve()

        later(WINDOW, up)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def answer(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        parts = urlsplit(handler.path)
        path, query = parts.path, parse_qs(parts.query)
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length else b""
        with self.lock:
            status, until = self.outages.get(path, (0, 0.0))
        if time.monotonic() < until:
            reason = "rate limit exceeded" if status == 429 else "upstream unavailable"
            self._json(handler, status, _problem(status, reason), {"Retry-After": "1"})
            return
        if path.startswith("/docs/"):
            page = path.removeprefix("/docs/")
            if page in PAGES:
                html = f"<html><body><h1>{page.title()}</h1><p>All about {page}.</p></body></html>"
                self._send(handler, 200, html.encode(), "text/html")
            else:
                self._send(
                    handler, 404, b"<html><body><h1>Not Found</h1></body></html>", "text/html"
                )
            return
        if path.startswith("/admin/"):
            self._json(handler, 403, _problem(403, f"token may not access {path}"))
            return
        self._api(handler, method, path, query, body)

    def _api(self, handler: Any, method: str, path: str, query: Any, body: bytes) -> None:
        if path == "/api/orders" and method == "GET":
            status = query.get("status", [None])[0]
            if status is not None and status not in ORDER_STATUS:
                detail = f"status must be one of: {', '.join(ORDER_STATUS)} (got {status!r})"
                self._json(handler, 400, _problem(400, detail))
                return
            with self.lock:
                found = [o for o in self.orders.values() if status in (None, o["status"])]
            self._json(handler, 200, {"orders": found[:5], "count": len(found)})
            return
        if path == "/api/orders" and method == "POST":
            self._create(handler, body)
            return
        if path.startswith("/api/orders/"):
            key = path.removeprefix("/api/orders/")
            with self.lock:
                order = self.orders.get(int(key)) if key.isdigit() else None
            if not key.isdigit():
                self._json(handler, 400, _problem(400, f"order id must be an integer: {key!r}"))
            elif order is None:
                self._json(handler, 404, _problem(404, f"order {key} not found"))
            elif method == "DELETE" and order["status"] == "shipped":
                self._json(handler, 409, _problem(409, f"order {key} has shipped"))
            else:
                self._json(handler, 200, order)
            return
        self._json(handler, 404, _problem(404, f"no route for {method} {path}"))

    def _create(self, handler: Any, body: bytes) -> None:
        try:
            data = json.loads(body or b"null")
        except ValueError as exc:
            self._json(handler, 400, _problem(400, f"body is not JSON: {exc}"))
            return
        if not isinstance(data, dict) or not isinstance(data.get("total"), (int, float)):
            self._json(handler, 422, _problem(422, "total: field required (a number)"))
            return
        if data.get("status", "pending") not in ORDER_STATUS:
            detail = f"status must be one of: {', '.join(ORDER_STATUS)} (got {data['status']!r})"
            self._json(handler, 422, _problem(422, detail))
            return
        with self.lock:
            if data.get("id") in self.orders:
                self._json(handler, 409, _problem(409, f"order {data['id']} already exists"))
                return
            key = int(data.get("id") or max(self.orders) + 1)
            self.orders[key] = {
                "id": key,
                "status": data.get("status", "pending"),
                "total": data["total"],
            }
            created = self.orders[key]
        self._json(handler, 201, created)

    def _json(
        self, handler: Any, status: int, value: Any, headers: dict[str, str] | None = None
    ) -> None:
        self._send(handler, status, json.dumps(value).encode(), "application/json", headers)

    @staticmethod
    def _send(
        handler: Any, status: int, body: bytes, kind: str, headers: dict[str, str] | None = None
    ) -> None:
        handler.send_response_only(status)  # no Date or Server header: the texts stay stable
        handler.send_header("Content-Type", kind)
        handler.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(body)


def _problem(status: int, detail: str) -> dict[str, Any]:
    codes = {
        400: "bad_request",
        403: "forbidden",
        404: "not_found",
        409: "conflict",
        422: "validation_error",
        429: "rate_limited",
        503: "unavailable",
    }
    return {"error": {"code": codes.get(status, "error"), "message": detail}}


# -- the deployments ---------------------------------------------------------------------


@dataclass
class Context:
    """What every deployment shares: the seed, the pause, a work folder and the site."""

    seed: int
    pause: float
    work: Path
    site: Site
    fails: int
    cleans: int

    def rng(self, name: str) -> random.Random:
        return random.Random(self.seed * 1_000_003 + zlib.crc32(name.encode()))

    def recorder(self, name: str, call: Call) -> Recorder:
        return Recorder(name, call, self.pause)


def pick(rng: random.Random, values: tuple[Any, ...] | list[Any]) -> Any:
    return values[rng.randrange(len(values))]


async def play_all(rec: Recorder, steps: list[Step]) -> Recorder:
    for step in steps:
        await rec.play(step)
    return rec


# HTTP API through curl ------------------------------------------------------------------


def _curl(tool: str, args: Args) -> Reply:
    argv = [
        "curl",
        "-sS",
        "-i",
        "--fail-with-body",
        "--max-time",
        "5",
        "-X",
        args.get("method", "GET"),
        args["url"],
    ]
    if "json" in args:
        argv += ["-H", "Content-Type: application/json", "-d", json.dumps(args["json"])]
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    return Reply(proc.stdout + proc.stderr, proc.returncode != 0, proc.returncode != 0)


async def http_api(ctx: Context) -> Recorder | None:
    if shutil.which("curl") is None:
        return _skip("http-api", "curl is not installed")
    rng, site, u = ctx.rng("http-api"), ctx.site, ctx.site.url
    fresh = iter(range(500, 10_000))

    def order() -> int:
        return int(rng.randrange(1, 41))

    def c(**args: Any) -> Args:
        return {"method": "GET", **args}

    def unavailable() -> Step:
        path = f"/api/orders/{order()}"
        return bad(
            "curl",
            c(url=u + path),
            None,
            "the API answers 503 with Retry-After on this endpoint for 0.25 s",
            site.arm(path, 503),
        )

    def limited() -> Step:
        query = f"?status={pick(rng, ORDER_STATUS)}"
        return bad(
            "curl",
            c(url=f"{u}/api/orders{query}"),
            None,
            "the API answers 429 with Retry-After for 0.25 s (rate limit)",
            site.arm("/api/orders", 429),
        )

    def restarting() -> Step:
        return bad(
            "curl",
            c(url=f"{u}/api/orders/{order()}"),
            None,
            "the API server's port is closed for 0.25 s (a restart)",
            site.down,
        )

    def missing() -> Step:
        gone = rng.randrange(41, 9000)
        return bad(
            "curl",
            c(url=f"{u}/api/orders/{gone}"),
            c(url=f"{u}/api/orders/{order()}"),
            "GET of an order id that does not exist; fix: an existing id",
        )

    def enum() -> Step:
        wrong = pick(
            rng,
            (
                "shiped",
                "delivered",
                "open",
                "Paid",
                "canceled",
                "complete",
                "PENDING",
                "refunded",
                "in_transit",
            ),
        )
        return bad(
            "curl",
            c(url=f"{u}/api/orders?status={wrong}"),
            c(url=f"{u}/api/orders?status={pick(rng, ORDER_STATUS)}"),
            "a status filter outside the enum; fix: a valid status",
        )

    def not_int() -> Step:
        key = pick(rng, ("ord_", "ORD-", "#", "order-")) + str(order())
        return bad(
            "curl",
            c(url=f"{u}/api/orders/{key}"),
            c(url=f"{u}/api/orders/{order()}"),
            "an order id that is not an integer; fix: the integer id",
        )

    def no_total() -> Step:
        body = {"status": pick(rng, ORDER_STATUS), "amount": rng.randrange(5, 500)}
        fix = {"status": body["status"], "total": body["amount"]}
        return bad(
            "curl",
            c(method="POST", url=f"{u}/api/orders", json=body),
            c(method="POST", url=f"{u}/api/orders", json=fix),
            "POST without the required total field; fix: send total",
        )

    def bad_status() -> Step:
        wrong = pick(rng, ("new", "open", "draft", "Paid", "shiped"))
        total = rng.randrange(5, 500)
        return bad(
            "curl",
            c(method="POST", url=f"{u}/api/orders", json={"total": total, "status": wrong}),
            c(method="POST", url=f"{u}/api/orders", json={"total": total}),
            "POST with a status outside the enum; fix: leave the default",
        )

    def duplicate() -> Step:
        total = rng.randrange(5, 500)
        return bad(
            "curl",
            c(method="POST", url=f"{u}/api/orders", json={"id": order(), "total": total}),
            c(method="POST", url=f"{u}/api/orders", json={"id": next(fresh), "total": total}),
            "POST with an id that exists (409); fix: a new id",
        )

    def shipped() -> Step:
        key = rng.randrange(2, 41, 4)  # ORDER_STATUS[key % 4] == "shipped"
        return bad(
            "curl",
            c(method="DELETE", url=f"{u}/api/orders/{key}"),
            c(method="DELETE", url=f"{u}/api/orders/{key}?force=true"),
            "DELETE of a shipped order (409); the force flag does not help",
        )

    def forbidden() -> Step:
        what = pick(rng, ("users", "billing", "audit-log", "keys", "settings", "exports"))
        other = pick(rng, ("users", "billing", "audit-log", "keys", "settings", "exports"))
        return bad(
            "curl",
            c(url=f"{u}/admin/{what}"),
            c(url=f"{u}/admin/{other}?scope=read"),
            "an admin path this token may not read (403); another admin path is denied too",
        )

    def bad_url() -> Step:
        path = f"/api/orders/{order()}"
        wrong = pick(
            rng,
            (
                f"htp://127.0.0.1:{site.port}{path}",
                f"http://127.0.0.1:{site.port}:80{path}",
                f"http//127.0.0.1:{site.port}{path}",
                f"hxxp://127.0.0.1:{site.port}{path}",
            ),
        )
        return bad(
            "curl",
            c(url=wrong),
            c(url=u + path),
            "a malformed URL curl rejects; fix: the URL spelled right",
        )

    def route() -> Step:
        key = order()
        wrong = pick(
            rng,
            (f"/api/order/{key}", f"/api/v1/orders/{key}", f"/orders/{key}", f"/api/Orders/{key}"),
        )
        return bad(
            "curl",
            c(url=u + wrong),
            c(url=f"{u}/api/orders/{key}"),
            "a route that does not exist (404); fix: the documented route",
        )

    makers = [
        (5, unavailable),
        (3, limited),
        (2, restarting),
        (5, missing),
        (4, enum),
        (2, not_int),
        (3, no_total),
        (2, bad_status),
        (2, duplicate),
        (2, shipped),
        (3, forbidden),
        (2, bad_url),
        (2, route),
    ]
    cleans: list[Callable[[], Step]] = [
        lambda: ok("curl", **c(url=f"{u}/api/orders/{order()}")),
        lambda: ok("curl", **c(url=f"{u}/api/orders?status={pick(rng, ORDER_STATUS)}")),
        lambda: ok(
            "curl", **c(method="POST", url=f"{u}/api/orders", json={"total": rng.randrange(5, 500)})
        ),
        lambda: ok("curl", **c(url=f"{u}/docs/{pick(rng, PAGES)}")),
    ]
    steps = plan(rng, makers, cleans, ctx.fails, ctx.cleans)

    async def call(tool: str, args: Args) -> Reply:
        return _curl(tool, args)

    return await play_all(ctx.recorder("http-api", call), steps)


def _skip(name: str, why: str) -> Recorder | None:
    """Say why a deployment is left out; its stream is then absent from the file."""
    print(f"skipped {name}: {why}", file=sys.stderr)
    return None


# SQLite through Python's sqlite3 --------------------------------------------------------

SQL_TABLES = {
    "orders": ("id", "customer_id", "total", "status"),
    "customers": ("id", "name", "email"),
    "products": ("sku", "name", "price"),
}
SQL_TYPOS = {
    "orders": ("order", "ordrs", "Orders_", "orderz", "order_items"),
    "customers": ("customer", "custmers", "clients", "users"),
    "products": ("product", "prodcts", "items", "catalog"),
}
COLUMN_TYPOS = {
    "total": ("totl", "amount", "price_total", "sum"),
    "status": ("state", "order_status", "stat"),
    "email": ("mail", "e_mail", "email_address"),
    "name": ("nme", "full_name", "title"),
}
STATUS_TYPOS = ("shiped", "delivered", "open", "Paid", "canceled", "complete", "refunded")
NAMES = (
    "Ada",
    "Grace",
    "Alan",
    "Edsger",
    "Barbara",
    "Ken",
    "Dennis",
    "Frances",
    "Leslie",
    "Donald",
    "Radia",
    "Margaret",
    "Tim",
    "Guido",
    "Linus",
    "Niklaus",
)


def _exc_text(exc: BaseException) -> str:
    """An exception as a tool wrapper returns it: its qualified class, then its message."""
    kind = type(exc)
    return f"{kind.__module__}.{kind.__qualname__}: {exc}"


def _rows_text(rows: list[Any], count: int) -> str:
    if rows:
        return json.dumps([list(r) for r in rows], default=str)
    return f"{count} rows affected"


class SqlScenarios:
    """The failures and clean calls shared by the SQLite and PostgreSQL streams.

    The same mistakes are made against both; each database answers in its own words.
    """

    def __init__(self, rng: random.Random, tool: str = "query") -> None:
        self.rng = rng
        self.tool = tool
        self.ids = iter(range(1000, 1_000_000))

    def q(self, sql: str) -> Args:
        return {"sql": sql}

    def bad(
        self,
        sql: str,
        fix: str | None,
        how: str,
        setup: Callable[[], None] | None = None,
        tool: str | None = None,
    ) -> Step:
        return bad(tool or self.tool, self.q(sql), self.q(fix) if fix else None, how, setup)

    def table(self) -> Step:
        table = pick(self.rng, tuple(SQL_TABLES))
        typo = pick(self.rng, SQL_TYPOS[table])
        limit = self.rng.randrange(1, 20)
        return self.bad(
            f"SELECT * FROM {typo} LIMIT {limit}",
            f"SELECT * FROM {table} LIMIT {limit}",
            "a table name that does not exist; fix: the real table",
        )

    def column(self) -> Step:
        table, col = pick(
            self.rng,
            (
                ("orders", "total"),
                ("orders", "status"),
                ("customers", "email"),
                ("customers", "name"),
                ("products", "name"),
            ),
        )
        typo = pick(self.rng, COLUMN_TYPOS[col])
        key = self.rng.randrange(1, 30)
        key_col = "sku" if table == "products" else "id"
        return self.bad(
            f"SELECT {typo} FROM {table} WHERE {key_col} = {key}",
            f"SELECT {col} FROM {table} WHERE {key_col} = {key}",
            "a column name that does not exist; fix: the real column",
        )

    def syntax(self) -> Step:
        key = self.rng.randrange(1, 30)
        wrong, right = pick(
            self.rng,
            (
                (f"SELEC * FROM orders WHERE id = {key}", f"SELECT * FROM orders WHERE id = {key}"),
                (
                    f"SELECT * FORM orders WHERE id = {key}",
                    f"SELECT * FROM orders WHERE id = {key}",
                ),
                (
                    f"SELECT * FROM orders WHERE id = {key} ORDER total",
                    f"SELECT * FROM orders WHERE id = {key} ORDER BY total",
                ),
                (
                    f"SELECT id, FROM customers WHERE id = {key}",
                    f"SELECT id FROM customers WHERE id = {key}",
                ),
                (
                    f"UPDATE orders total = 5 WHERE id = {key}",
                    f"UPDATE orders SET total = 5 WHERE id = {key}",
                ),
            ),
        )
        return self.bad(wrong, right, "a syntax error; fix: the statement spelled right")

    def duplicate(self) -> Step:
        key = self.rng.randrange(1, 30)
        name = pick(self.rng, NAMES)
        fresh = next(self.ids)
        return self.bad(
            f"INSERT INTO customers (id, name, email) VALUES ({key}, '{name}', "
            f"'{name.lower()}{fresh}@example.test')",
            f"INSERT INTO customers (id, name, email) VALUES ({fresh}, '{name}', "
            f"'{name.lower()}{fresh}@example.test')",
            "an insert with a primary key that exists; fix: a new key",
        )

    def not_null(self) -> Step:
        fresh = next(self.ids)
        customer = self.rng.randrange(1, 30)
        return self.bad(
            f"INSERT INTO orders (id, customer_id, status) VALUES ({fresh}, {customer}, 'pending')",
            f"INSERT INTO orders (id, customer_id, total, status) "
            f"VALUES ({fresh}, {customer}, {self.rng.randrange(5, 500)}, 'pending')",
            "an insert without the NOT NULL total; fix: give the total",
        )

    def check(self) -> Step:
        fresh = next(self.ids)
        wrong = pick(self.rng, STATUS_TYPOS)
        total = self.rng.randrange(5, 500)
        return self.bad(
            f"INSERT INTO orders (id, customer_id, total, status) "
            f"VALUES ({fresh}, 1, {total}, '{wrong}')",
            f"INSERT INTO orders (id, customer_id, total, status) "
            f"VALUES ({fresh}, 1, {total}, 'paid')",
            "a status outside the allowed values; fix: an allowed status",
        )

    def values(self) -> Step:
        fresh = next(self.ids)
        total = self.rng.randrange(5, 500)
        return self.bad(
            f"INSERT INTO orders VALUES ({fresh}, 1, {total})",
            f"INSERT INTO orders VALUES ({fresh}, 1, {total}, 'pending')",
            "an insert with fewer values than columns; fix: all the values",
        )

    def function(self) -> Step:
        wrong, right = pick(
            self.rng,
            (
                ("NOW()", "CURRENT_TIMESTAMP"),
                ("GETDATE()", "CURRENT_DATE"),
                ("SYSDATE()", "CURRENT_TIMESTAMP"),
                ("LEN(name)", "LENGTH(name)"),
            ),
        )
        key = self.rng.randrange(1, 30)
        return self.bad(
            f"SELECT {wrong} FROM customers WHERE id = {key}",
            f"SELECT {right} FROM customers WHERE id = {key}",
            "a function another database has; fix: this one's function",
        )

    def common(self) -> list[tuple[int, Maker]]:
        """The mistakes both databases see, weighted by how often they are made."""
        return [
            (6, self.table),
            (5, self.column),
            (4, self.syntax),
            (3, self.duplicate),
            (3, self.not_null),
            (3, self.check),
            (2, self.values),
            (2, self.function),
        ]

    def cleans(self) -> list[Callable[[], Step]]:
        r = self.rng
        return [
            lambda: ok(self.tool, sql=f"SELECT * FROM orders WHERE id = {r.randrange(1, 30)}"),
            lambda: ok(
                self.tool, sql=f"SELECT name, email FROM customers WHERE id = {r.randrange(1, 30)}"
            ),
            lambda: ok(
                self.tool,
                sql=f"SELECT COUNT(*) FROM orders WHERE status = '{pick(r, ORDER_STATUS)}'",
            ),
            lambda: ok(
                self.tool,
                sql=f"UPDATE orders SET total = total + 1 WHERE id = {r.randrange(1, 30)}",
            ),
            lambda: ok(
                self.tool,
                sql=f"SELECT sku, price FROM products WHERE price < {r.randrange(5, 90)} "
                "ORDER BY price LIMIT 3",
            ),
        ]


SQL_SCHEMA = (
    "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT UNIQUE)",
    "CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL, "
    "total NUMERIC NOT NULL, status TEXT NOT NULL CHECK (status IN "
    "('pending', 'paid', 'shipped', 'cancelled')))",
    "CREATE TABLE products (sku INTEGER PRIMARY KEY, name TEXT NOT NULL, price NUMERIC)",
)


def _seed_rows() -> Iterator[str]:
    for i in range(1, 31):
        name = NAMES[i % len(NAMES)]
        yield f"INSERT INTO customers VALUES ({i}, '{name}', '{name.lower()}{i}@example.test')"
        yield f"INSERT INTO orders VALUES ({i}, {i}, {10 + i}, '{ORDER_STATUS[i % 4]}')"
        yield f"INSERT INTO products VALUES ({i}, 'item {i}', {3 * i})"


async def sqlite(ctx: Context) -> Recorder | None:
    rng = ctx.rng("sqlite")
    folder = ctx.work / "sqlite"
    folder.mkdir()
    shop, archive, reports = folder / "shop.db", folder / "archive.db", folder / "reports.db"
    with sqlite3.connect(shop) as conn:
        for statement in (*SQL_SCHEMA, *_seed_rows()):
            conn.execute(statement)
    with sqlite3.connect(archive) as conn:
        conn.execute("CREATE TABLE orders_2023 (id INTEGER PRIMARY KEY, total NUMERIC)")
        conn.execute("INSERT INTO orders_2023 VALUES (1, 10)")
    reports.write_bytes(b"REPORTS v2 export\n" + bytes(range(256)) * 8)  # not a database
    connections = {
        "query": sqlite3.connect(shop, timeout=0.05, isolation_level=None),
        "archive_query": sqlite3.connect(f"file:{archive}?mode=ro", uri=True, isolation_level=None),
        "report_query": sqlite3.connect(reports, isolation_level=None),
    }

    def lock(mode: str) -> Callable[[], None]:
        def hold(ready: threading.Event, done: threading.Event) -> None:
            other = sqlite3.connect(shop, isolation_level=None)
            other.execute(f"BEGIN {mode}")
            ready.set()
            done.wait(10)
            other.execute("ROLLBACK")
            other.close()

        return held(hold)

    s = SqlScenarios(rng)

    def locked_write() -> Step:
        key = rng.randrange(1, 30)
        return s.bad(
            f"UPDATE orders SET status = 'paid' WHERE id = {key}",
            None,
            "another connection holds a write transaction for 0.25 s",
            lock("IMMEDIATE"),
        )

    def locked_read() -> Step:
        key = rng.randrange(1, 30)
        return s.bad(
            f"SELECT * FROM customers WHERE id = {key}",
            None,
            "another connection holds an exclusive transaction for 0.25 s",
            lock("EXCLUSIVE"),
        )

    def readonly() -> Step:
        key = rng.randrange(2, 900)
        return s.bad(
            f"INSERT INTO orders_2023 VALUES ({key}, {rng.randrange(5, 500)})",
            f"UPDATE orders_2023 SET total = total + 1 WHERE id = {key}",
            "a write through the read-only archive connection; any write fails",
            tool="archive_query",
        )

    def not_a_db() -> Step:
        table = pick(rng, ("daily", "weekly", "revenue", "churn"))
        return s.bad(
            f"SELECT * FROM {table} LIMIT 10",
            "SELECT name FROM sqlite_master",
            "the reports file is not a SQLite database; every query fails",
            tool="report_query",
        )

    makers = [
        *s.common(),
        (3, locked_write),
        (2, locked_read),
        (2, readonly),
        (2, not_a_db),
    ]
    steps = plan(rng, makers, s.cleans(), ctx.fails, ctx.cleans)

    async def call(tool: str, args: Args) -> Reply:
        try:
            cursor = connections[tool].execute(args["sql"])
            return Reply(_rows_text(cursor.fetchall(), cursor.rowcount), False, False)
        except sqlite3.Error as exc:
            return Reply(_exc_text(exc), True, True)

    try:
        return await play_all(ctx.recorder("sqlite", call), steps)
    finally:
        for conn in connections.values():
            conn.close()


# PostgreSQL through psycopg -------------------------------------------------------------

PG_SCHEMA = (
    "CREATE TYPE order_status AS ENUM ('pending', 'paid', 'shipped', 'cancelled')",
    "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT UNIQUE)",
    "CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL "
    "REFERENCES customers, total NUMERIC NOT NULL, status order_status NOT NULL)",
    "CREATE TABLE products (sku INTEGER PRIMARY KEY, name TEXT NOT NULL, price NUMERIC)",
    "CREATE TABLE payroll (id INTEGER PRIMARY KEY, employee TEXT, salary NUMERIC)",
    "CREATE ROLE agent LOGIN CONNECTION LIMIT 3",
    "CREATE ROLE reporter LOGIN",
    "ALTER ROLE reporter SET default_transaction_read_only = on",
    "GRANT SELECT, INSERT, UPDATE ON customers, orders, products TO agent, reporter",
)


async def postgres(ctx: Context) -> Recorder | None:
    try:
        import psycopg

        from tools import pg_cluster
    except ImportError as exc:
        return _skip("postgres", f"psycopg is not installed ({exc})")
    reason = pg_cluster.missing_reason()
    if reason is not None:
        return _skip("postgres", reason)
    rng = ctx.rng("postgres")
    with pg_cluster.running() as cluster:
        admin_dsn = cluster.database("shop")
        with psycopg.connect(admin_dsn, autocommit=True) as conn:
            for statement in (*PG_SCHEMA, *_seed_rows()):
                conn.execute(statement)
        base = f"postgresql://{{}}@127.0.0.1:{cluster.port}/shop"
        users = {"query": "agent", "report_query": "reporter"}

        def lock_orders(ready: threading.Event, done: threading.Event) -> None:
            with psycopg.connect(admin_dsn) as other:
                other.execute("LOCK TABLE orders IN ACCESS EXCLUSIVE MODE")
                ready.set()
                done.wait(10)
                other.rollback()

        def crowd(ready: threading.Event, done: threading.Event) -> None:
            held = [psycopg.connect(base.format("agent")) for _ in range(3)]
            ready.set()
            done.wait(10)
            for conn in held:
                conn.close()

        s = SqlScenarios(rng)

        def locked() -> Step:
            key = rng.randrange(1, 30)
            sql = pick(
                rng,
                (
                    f"SELECT * FROM orders WHERE id = {key}",
                    f"UPDATE orders SET status = 'paid' WHERE id = {key}",
                ),
            )
            return s.bad(
                sql,
                None,
                "another session holds an ACCESS EXCLUSIVE lock on orders "
                "for 0.25 s (lock_timeout 100ms)",
                held(lock_orders),
            )

        def crowded() -> Step:
            key = rng.randrange(1, 30)
            return s.bad(
                f"SELECT name FROM customers WHERE id = {key}",
                None,
                "other sessions hold all 3 connections the role may open for 0.25 s",
                held(crowd),
            )

        def enum_filter() -> Step:
            wrong = pick(rng, STATUS_TYPOS)
            return s.bad(
                f"SELECT COUNT(*) FROM orders WHERE status = '{wrong}'",
                f"SELECT COUNT(*) FROM orders WHERE status = '{pick(rng, ORDER_STATUS)}'",
                "a filter value outside the enum; fix: an enum value",
            )

        def not_int() -> Step:
            key = pick(rng, ("ord_", "C-", "#", "cust-")) + str(rng.randrange(1, 30))
            return s.bad(
                f"SELECT * FROM customers WHERE id = '{key}'",
                f"SELECT * FROM customers WHERE id = {key.split('-')[-1].lstrip('ord_#C')}",
                "a text id compared with an integer column; fix: the integer",
            )

        def foreign() -> Step:
            fresh = next(s.ids)
            total = rng.randrange(5, 500)
            return s.bad(
                f"INSERT INTO orders VALUES "
                f"({fresh}, {rng.randrange(100, 9000)}, {total}, 'pending')",
                f"INSERT INTO orders VALUES ({fresh}, {rng.randrange(1, 30)}, {total}, 'pending')",
                "an order for a customer that does not exist; fix: an existing customer",
            )

        def payroll() -> Step:
            key = rng.randrange(1, 50)
            return s.bad(
                f"SELECT * FROM payroll WHERE id = {key}",
                f"SELECT employee FROM payroll WHERE id = {key}",
                "a table the role has no privilege on; fewer columns do not help",
            )

        def owner() -> Step:
            column = pick(rng, ("note", "priority", "source", "coupon", "channel"))
            return s.bad(
                f"ALTER TABLE orders ADD COLUMN {column} TEXT",
                f"ALTER TABLE orders ADD COLUMN IF NOT EXISTS {column}_v2 TEXT",
                "DDL by a role that does not own the table; any DDL fails",
            )

        def readonly() -> Step:
            key = rng.randrange(1, 30)
            return s.bad(
                f"UPDATE orders SET status = 'shipped' WHERE id = {key}",
                f"UPDATE orders SET status = 'shipped' WHERE id IN ({key})",
                "a write through the reporting role, whose sessions are read-only",
                tool="report_query",
            )

        makers = [
            *s.common(),
            (3, enum_filter),
            (2, not_int),
            (2, foreign),
            (3, locked),
            (2, crowded),
            (2, payroll),
            (1, owner),
            (2, readonly),
        ]
        steps = plan(rng, makers, s.cleans(), ctx.fails, ctx.cleans)

        async def call(tool: str, args: Args) -> Reply:
            try:
                with psycopg.connect(
                    base.format(users[tool]), autocommit=True, options="-c lock_timeout=100ms"
                ) as conn:
                    cursor = conn.execute(args["sql"])
                    rows = cursor.fetchall() if cursor.description else []
                    return Reply(_rows_text(rows, cursor.rowcount), False, False)
            except psycopg.Error as exc:
                return Reply(_exc_text(exc), True, True)

        return await play_all(ctx.recorder("postgres", call), steps)


# Redis through redis-cli ----------------------------------------------------------------

_BUSY_LUA = (
    "local s = redis.call('TIME') local t = s "
    "while (t[1] - s[1]) * 1000000 + (t[2] - s[2]) < tonumber(ARGV[1]) do "
    "t = redis.call('TIME') end return 1"
)


class Redis:
    """A ``redis-server`` on loopback with an ``agent`` user limited by ACL."""

    def __init__(self, folder: Path, port: int) -> None:
        self.folder, self.port = folder, port
        folder.mkdir()
        (folder / "redis.conf").write_text(
            f'port {port}\nbind 127.0.0.1\ndir {folder}\ndbfilename dump.rdb\nsave ""\n'
            "appendonly no\nbusy-reply-threshold 50\n"
            "user default on nopass ~* &* +@all\n"
            "user agent on >agent-secret ~app:* ~user:* ~cart:* ~cache:* ~queue:* +@all "
            "-@dangerous\n"
        )
        self.process: subprocess.Popen[bytes] | None = None
        self.start()

    def start(self) -> None:
        self.process = subprocess.Popen(
            ["redis-server", str(self.folder / "redis.conf")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while self.admin("PING").stdout.strip() != "PONG":
            if time.monotonic() > deadline:
                raise RuntimeError("redis-server did not start")
            time.sleep(0.02)

    def admin(self, *argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["redis-cli", "-p", str(self.port), *argv], capture_output=True, text=True, check=False
        )

    def agent(self, argv: list[str]) -> Reply:
        proc = subprocess.run(
            [
                "redis-cli",
                "-e",
                "--no-auth-warning",
                "--user",
                "agent",
                "--pass",
                "agent-secret",
                "-p",
                str(self.port),
                *argv,
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        return Reply(proc.stdout + proc.stderr, proc.returncode != 0, proc.returncode != 0)

    def busy(self) -> None:
        """Run a Lua script on another connection for the window: Redis answers BUSY."""
        micros = str(int(WINDOW * 1_000_000))
        subprocess.Popen(
            ["redis-cli", "-p", str(self.port), "EVAL", _BUSY_LUA, "0", micros],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(0.1)  # the script is running: the threshold is 50 ms

    def restart(self) -> None:
        """Stop the server (saving the data) and start it again after the window."""
        self.admin("SHUTDOWN", "SAVE")
        if self.process is not None:
            self.process.wait(10)
        later(WINDOW, self.start)

    def stop(self) -> None:
        self.admin("SHUTDOWN", "NOSAVE")
        if self.process is not None:
            self.process.wait(10)


async def redis(ctx: Context) -> Recorder | None:
    if shutil.which("redis-server") is None or shutil.which("redis-cli") is None:
        return _skip("redis", "redis-server is not installed (apt-get install redis-server)")
    rng = ctx.rng("redis")
    server = Redis(ctx.work / "redis", 47381)
    for i in range(1, 31):
        server.admin("HSET", f"user:{i}", "name", NAMES[i % len(NAMES)], "plan", "free")
        server.admin("RPUSH", f"cart:{i}", *[f"sku:{i * j}" for j in range(1, 4)])
        server.admin("SET", f"app:counter:{i}", str(i))
        server.admin("SET", f"billing:invoice:{i}", str(10 * i))
    server.admin("SET", "app:config:mode", "live")

    def r(*argv: Any) -> Args:
        return {"command": [str(a) for a in argv]}

    def n() -> int:
        return int(rng.randrange(1, 31))

    def busy() -> Step:
        return bad(
            "redis-cli",
            r(
                *pick(
                    rng,
                    (
                        ("HGETALL", f"user:{n()}"),
                        ("GET", f"app:counter:{n()}"),
                        ("LRANGE", f"cart:{n()}", 0, -1),
                    ),
                )
            ),
            None,
            "a Lua script runs on another connection for 0.25 s (BUSY)",
            server.busy,
        )

    def restarting() -> Step:
        return bad(
            "redis-cli",
            r("HGET", f"user:{n()}", "name"),
            None,
            "the server restarts (SHUTDOWN SAVE, up again after 0.25 s)",
            server.restart,
        )

    def wrongtype() -> Step:
        key = pick(rng, (f"user:{n()}", f"cart:{n()}"))
        right = ("HGETALL", key) if key.startswith("user") else ("LRANGE", key, 0, -1)
        wrong = pick(rng, (("GET", key), ("INCR", key), ("SMEMBERS", key), ("APPEND", key, "x")))
        return bad(
            "redis-cli",
            r(*wrong),
            r(*right),
            "a command for another type than the key holds; fix: the type's command",
        )

    def not_integer() -> Step:
        key = f"app:counter:{n()}"
        word = pick(rng, ("two", "1.5", "ten", "+1", "5x", "one"))
        return bad(
            "redis-cli",
            r("INCRBY", key, word),
            r("INCRBY", key, rng.randrange(1, 9)),
            "INCRBY with an increment that is not an integer; fix: an integer",
        )

    def arity() -> Step:
        key = f"user:{n()}"
        wrong, right = pick(
            rng,
            (
                (("HSET", key, "plan"), ("HSET", key, "plan", "pro")),
                (("HGET", key), ("HGET", key, "name")),
                (("EXPIRE", key), ("EXPIRE", key, 3600)),
                (("SET", f"cache:{n()}"), ("SET", f"cache:{n()}", "1")),
            ),
        )
        return bad(
            "redis-cli", r(*wrong), r(*right), "a command with an argument missing; fix: give it"
        )

    def unknown() -> Step:
        key = f"user:{n()}"
        wrong, right = pick(
            rng,
            (
                ("HGETT", "HGET"),
                ("HGETALLL", "HGETALL"),
                ("HGTE", "HGET"),
                ("HREAD", "HGET"),
                ("HFETCH", "HGET"),
            ),
        )
        return bad(
            "redis-cli",
            r(wrong, key, "name"),
            r(right, key, "name") if right == "HGET" else r(right, key),
            "a command name that does not exist; fix: the command",
        )

    def syntax() -> Step:
        key = f"cache:page:{rng.randrange(1, 500)}"
        wrong, right = pick(
            rng,
            (
                (("SET", key, "v", "EX"), ("SET", key, "v", "EX", 60)),
                (("SET", key, "v", "TTL", 60), ("SET", key, "v", "EX", 60)),
                (("SET", key, "v", "NX", "XX"), ("SET", key, "v", "NX")),
            ),
        )
        return bad(
            "redis-cli", r(*wrong), r(*right), "SET with options it rejects; fix: the options"
        )

    def expire() -> Step:
        key = f"cache:page:{rng.randrange(1, 500)}"
        seconds = pick(rng, (-5, 0, -60, -1))
        return bad(
            "redis-cli",
            r("SET", key, "v", "EX", seconds),
            r("SET", key, "v", "EX", 60),
            "SET with an expiry that is not positive; fix: a positive expiry",
        )

    def no_key() -> Step:
        gone = f"app:counter:{rng.randrange(100, 9999)}"
        target = f"app:archive:{rng.randrange(1, 9999)}"
        return bad(
            "redis-cli",
            r("RENAME", gone, target),
            r("RENAME", f"app:counter:{n()}", target),
            "RENAME of a key that does not exist; fix: an existing key",
        )

    def index() -> Step:
        key = f"cart:{n()}"
        return bad(
            "redis-cli",
            r("LSET", key, rng.randrange(5, 99), "sku:0"),
            r("LSET", key, rng.randrange(0, 3), "sku:0"),
            "LSET past the end of the list; fix: an index inside it",
        )

    def keys() -> Step:
        pattern = pick(rng, ("user:*", "cart:*", "app:*", "cache:*"))
        return bad(
            "redis-cli",
            r("KEYS", pattern),
            r("SCAN", 0, "MATCH", pattern, "COUNT", 100),
            "KEYS is denied to the agent user by ACL; fix: SCAN",
        )

    def billing() -> Step:
        return bad(
            "redis-cli",
            r("GET", f"billing:invoice:{n()}"),
            r("GET", f"billing:invoice:{n()}"),
            "a key outside the agent user's ACL key patterns; every such key is denied",
        )

    def dangerous() -> Step:
        wrong, retry = pick(
            rng,
            (
                (("FLUSHDB",), ("FLUSHDB", "ASYNC")),
                (("CONFIG", "SET", "maxmemory", "1gb"), ("CONFIG", "GET", "maxmemory")),
                (("FLUSHALL",), ("FLUSHALL", "ASYNC")),
                (("DEBUG", "SLEEP", "0"), ("DEBUG", "OBJECT", f"user:{n()}")),
            ),
        )
        return bad(
            "redis-cli",
            r(*wrong),
            r(*retry),
            "a command the agent user's ACL denies (@dangerous); its variants too",
        )

    makers = [
        (4, busy),
        (2, restarting),
        (5, wrongtype),
        (4, not_integer),
        (4, arity),
        (3, unknown),
        (3, syntax),
        (2, expire),
        (3, no_key),
        (2, index),
        (3, keys),
        (3, billing),
        (2, dangerous),
    ]
    cleans: list[Callable[[], Step]] = [
        lambda: ok("redis-cli", **r("HGETALL", f"user:{n()}")),
        lambda: ok("redis-cli", **r("LRANGE", f"cart:{n()}", 0, -1)),
        lambda: ok("redis-cli", **r("INCR", f"app:counter:{n()}")),
        lambda: ok(
            "redis-cli", **r("SET", f"cache:page:{rng.randrange(1, 500)}", "<html>", "EX", 300)
        ),
        lambda: ok("redis-cli", **r("GET", "app:config:mode")),
    ]
    steps = plan(rng, makers, cleans, ctx.fails, ctx.cleans)

    async def call(tool: str, args: Args) -> Reply:
        return server.agent(args["command"])

    try:
        return await play_all(ctx.recorder("redis", call), steps)
    finally:
        server.stop()


# The reference MCP servers --------------------------------------------------------------


def _cached(kind: str) -> Path | None:
    """The newest ``./dev`` cache of the reference servers: its ``py/bin`` or its root."""
    found = sorted(
        Path.home().glob(".cache/toolmend/mcp-servers-*"), key=lambda p: p.stat().st_mtime
    )
    if not found:
        return None
    return found[-1] / "py" / "bin" if kind == "py" else found[-1]


def python_server(name: str) -> str | None:
    """The path of a Python reference server's program, or ``None``."""
    folder = os.environ.get("TOOLMEND_MCP_PY")
    bin_dir = Path(folder) if folder else _cached("py")
    program = bin_dir / name if bin_dir else None
    return str(program) if program and program.exists() else None


def npm_server(name: str) -> str | None:
    """The entry script of an npm reference server, or ``None`` (also without node)."""
    folder = os.environ.get("TOOLMEND_MCP_NPM")
    root = Path(folder) if folder else _cached("npm")
    entry = root / "node_modules/@modelcontextprotocol" / name / "dist/index.js" if root else None
    if entry is None or not entry.exists() or shutil.which("node") is None:
        return None
    return str(entry)


async def mcp_stream(
    ctx: Context,
    name: str,
    command: str,
    args: list[str],
    steps: list[Step],
    env: dict[str, str] | None = None,
) -> Recorder:
    """Play ``steps`` against one MCP server over stdio; the result's text and ``isError``."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=command, args=args, env={**os.environ, **(env or {})})
    async with Client(params) as client:

        async def call(tool: str, arguments: Args) -> Reply:
            try:
                result = await client.call_tool(tool, arguments)
            except Exception as exc:  # a protocol error: the client raises it
                return Reply(str(exc), True, True)
            text = "\n".join(
                str(getattr(block, "text", ""))
                for block in result.content
                if getattr(block, "type", "") == "text"
            )
            return Reply(text, bool(result.is_error), bool(result.is_error))

        return await play_all(ctx.recorder(name, call), steps)


async def fetch_mcp(ctx: Context) -> Recorder | None:
    program = python_server("mcp-server-fetch")
    if program is None:
        return _skip("fetch-mcp", "mcp-server-fetch is not installed (./dev test installs it)")
    rng, site, u = ctx.rng("fetch-mcp"), ctx.site, ctx.site.url

    def f(url: str, **more: Any) -> Args:
        return {"url": url, **more}

    def page() -> str:
        return str(pick(rng, PAGES))

    def unavailable() -> Step:
        path = f"/docs/{page()}"
        return bad(
            "fetch",
            f(u + path),
            None,
            "the site answers 503 with Retry-After on this page for 0.25 s",
            site.arm(path, 503),
        )

    def limited() -> Step:
        path = f"/api/orders/{rng.randrange(1, 41)}"
        return bad(
            "fetch",
            f(u + path),
            None,
            "the site answers 429 with Retry-After for 0.25 s",
            site.arm(path, 429),
        )

    def restarting() -> Step:
        return bad(
            "fetch",
            f(f"{u}/docs/{page()}"),
            None,
            "the site's port is closed for 0.25 s (a restart)",
            site.down,
        )

    def missing() -> Step:
        right = page()
        wrong = pick(rng, (right + "s", right[:-1], right.upper(), f"{right}.html", f"v2/{right}"))
        return bad(
            "fetch",
            f(f"{u}/docs/{wrong}"),
            f(f"{u}/docs/{right}"),
            "a page that does not exist (404); fix: the page's real address",
        )

    def no_scheme() -> Step:
        path = f"/docs/{page()}"
        wrong = pick(
            rng,
            (
                f"127.0.0.1:{site.port}{path}",
                f"//127.0.0.1:{site.port}{path}",
                f"localhost:{site.port}{path}",
            ),
        )
        return bad("fetch", f(wrong), f(u + path), "a URL without its scheme; fix: add http://")

    def max_length() -> Step:
        path = f"/docs/{page()}"
        wrong = pick(rng, (0, -1, -100, 1_000_000, 5_000_000))
        return bad(
            "fetch",
            f(u + path, max_length=wrong),
            f(u + path, max_length=5000),
            "max_length outside the tool's bounds; fix: a length inside them",
        )

    def start_index() -> Step:
        path = f"/docs/{page()}"
        wrong = pick(rng, (-1, -10, -500))
        return bad(
            "fetch",
            f(u + path, start_index=wrong),
            f(u + path, start_index=0),
            "a negative start_index; fix: 0",
        )

    def forbidden() -> Step:
        what = pick(rng, ("users", "billing", "audit-log", "keys", "settings"))
        return bad(
            "fetch",
            f(f"{u}/admin/{what}"),
            f(f"{u}/admin/{what}?view=summary"),
            "an admin page this client may not read (403); another view is denied too",
        )

    def closed() -> Step:
        port = pick(rng, (9, 47399, 1, 47398))
        path = f"/docs/{page()}"
        return bad(
            "fetch",
            f(f"http://127.0.0.1:{port}{path}"),
            None,
            "a port where nothing listens, for good: the retry fails too",
        )

    makers = [
        (5, unavailable),
        (3, limited),
        (2, restarting),
        (6, missing),
        (3, no_scheme),
        (3, max_length),
        (2, start_index),
        (3, forbidden),
        (2, closed),
    ]
    cleans: list[Callable[[], Step]] = [
        lambda: ok("fetch", **f(f"{u}/docs/{page()}")),
        lambda: ok("fetch", **f(f"{u}/api/orders/{rng.randrange(1, 41)}")),
        lambda: ok("fetch", **f(f"{u}/docs/{page()}", max_length=200)),
        lambda: ok("fetch", **f(f"{u}/docs/{page()}", raw=True)),
    ]
    steps = plan(rng, makers, cleans, ctx.fails, ctx.cleans)
    return await mcp_stream(
        ctx, "fetch-mcp", program, ["--ignore-robots-txt", "--allow-private-ips"], steps
    )


async def time_mcp(ctx: Context) -> Recorder | None:
    program = python_server("mcp-server-time")
    if program is None:
        return _skip("time-mcp", "mcp-server-time is not installed (./dev test installs it)")
    rng = ctx.rng("time-mcp")
    zones = {
        "PST": "America/Los_Angeles",
        "CEST": "Europe/Paris",
        "IST": "Asia/Kolkata",
        "Europe/Pariss": "Europe/Paris",
        "America/NewYork": "America/New_York",
        "Asia/Tokio": "Asia/Tokyo",
        "europe/berlin": "Europe/Berlin",
        "US/Pacific Time": "America/Los_Angeles",
        "Berlin": "Europe/Berlin",
        "Tokyo": "Asia/Tokyo",
        "UTC+2": "Etc/GMT-2",
        "GMT+5:30": "Asia/Kolkata",
        "Asia/Bombay ": "Asia/Kolkata",
        "Sydney": "Australia/Sydney",
    }
    good = (
        "UTC",
        "Europe/Paris",
        "America/New_York",
        "Asia/Tokyo",
        "Europe/Berlin",
        "Australia/Sydney",
        "Africa/Nairobi",
        "America/Sao_Paulo",
    )
    times = {
        "25:00": "23:00",
        "2:30pm": "14:30",
        "14h30": "14:30",
        "9am": "09:00",
        "24:15": "00:15",
        "12:60": "13:00",
        "noon": "12:00",
        "1430": "14:30",
    }

    def zone() -> Step:
        wrong = pick(rng, tuple(zones))
        return bad(
            "get_current_time",
            {"timezone": wrong},
            {"timezone": zones[wrong]},
            "a timezone that is not an IANA name; fix: the IANA name",
        )

    def convert_zone() -> Step:
        wrong = pick(rng, tuple(zones))
        t, target = (
            f"{rng.randrange(0, 24):02d}:{pick(rng, ('00', '15', '30', '45'))}",
            pick(rng, good),
        )
        return bad(
            "convert_time",
            {"source_timezone": wrong, "time": t, "target_timezone": target},
            {"source_timezone": zones[wrong], "time": t, "target_timezone": target},
            "a source timezone that is not an IANA name; fix: the IANA name",
        )

    def convert_time() -> Step:
        wrong = pick(rng, tuple(times))
        a, b = pick(rng, good), pick(rng, good)
        return bad(
            "convert_time",
            {"source_timezone": a, "time": wrong, "target_timezone": b},
            {"source_timezone": a, "time": times[wrong], "target_timezone": b},
            "a time that is not HH:MM in 24 hours; fix: HH:MM",
        )

    makers = [(5, zone), (3, convert_zone), (4, convert_time)]
    cleans: list[Callable[[], Step]] = [
        lambda: ok("get_current_time", timezone=pick(rng, good)),
        lambda: ok(
            "convert_time",
            source_timezone=pick(rng, good),
            time=f"{rng.randrange(0, 24):02d}:30",
            target_timezone=pick(rng, good),
        ),
    ]
    steps = plan(rng, makers, cleans, ctx.fails, ctx.cleans)
    return await mcp_stream(ctx, "time-mcp", program, ["--local-timezone", "UTC"], steps)


async def git_mcp(ctx: Context) -> Recorder | None:
    program = python_server("mcp-server-git")
    if program is None or shutil.which("git") is None:
        return _skip("git-mcp", "mcp-server-git (./dev test installs it) or git is missing")
    rng = ctx.rng("git-mcp")
    repo = ctx.work / "repo"
    _git_repo(repo)
    rp = str(repo)
    branches = ("main", "feature/login", "release/1.0", "fix/typo")
    files = ("app.py", "README.md", "setup.cfg", "docs/guide.md")
    made = iter(range(1, 10_000))
    lock = repo / ".git" / "index.lock"

    def g(**args: Any) -> Args:
        return {"repo_path": rp, **args}

    def locked() -> Callable[[], None]:
        def setup() -> None:
            lock.write_text("")
            later(WINDOW, lambda: lock.unlink(missing_ok=True))

        return setup

    def lock_add() -> Step:
        name = f"notes/{next(made)}.txt"
        (repo / name).parent.mkdir(exist_ok=True)
        (repo / name).write_text("note\n")
        return bad(
            "git_add",
            g(files=[name]),
            None,
            "another git process holds .git/index.lock for 0.25 s",
            locked(),
        )

    def lock_reset() -> Step:
        return bad(
            "git_reset", g(), None, "another git process holds .git/index.lock for 0.25 s", locked()
        )

    def revision() -> Step:
        wrong = pick(
            rng,
            (
                "develop",
                "feature/logon",
                "v2.0",
                "release/2.0",
                "deadbeef",
                "HEAD~40",
                "origin/main",
                "master",
                "fix/typos",
                "0123abc",
            ),
        )
        return bad(
            "git_show",
            g(revision=wrong),
            g(revision=pick(rng, ("HEAD", "HEAD~1", *branches))),
            "a revision that does not exist; fix: an existing branch or HEAD",
        )

    def checkout() -> Step:
        wrong = pick(rng, ("develop", "feature/logon", "release-1.0", "master", "fix-typo", "dev"))
        return bad(
            "git_checkout",
            g(branch_name=wrong),
            g(branch_name="main"),
            "a branch that does not exist; fix: an existing branch",
        )

    def add_missing() -> Step:
        wrong = pick(
            rng, ("app.js", "readme.md", "docs/guides.md", "setup.py", "src/app.py", "CHANGELOG.md")
        )
        return bad(
            "git_add",
            g(files=[wrong]),
            g(files=[pick(rng, files)]),
            "a file that does not exist in the work tree; fix: an existing file",
        )

    def branch_exists() -> Step:
        name = pick(rng, branches[1:])
        return bad(
            "git_create_branch",
            g(branch_name=name),
            g(branch_name=f"{name}-{next(made)}"),
            "a branch name that exists; fix: a new name",
        )

    def diff_target() -> Step:
        wrong = pick(rng, ("origin/main", "develop", "v1.0", "upstream/main", "HEAD~50"))
        return bad(
            "git_diff",
            g(target=wrong),
            g(target=pick(rng, branches)),
            "a diff target that does not exist; fix: an existing branch",
        )

    def branch_type() -> Step:
        wrong = pick(rng, ("locals", "remotes", "both", "Local", "everything", "branches"))
        return bad(
            "git_branch",
            g(branch_type=wrong),
            g(branch_type="local"),
            "a branch_type outside local/remote/all; fix: local",
        )

    def outside() -> Step:
        where = pick(
            rng,
            (
                "/srv/app",
                "/home/dev/project",
                "/opt/service",
                str(ctx.work / "other"),
                "/var/lib/repo",
            ),
        )
        return bad(
            "git_status",
            {"repo_path": where},
            {"repo_path": where + "/.git"},
            "a repository outside the one the server is limited to; any other path fails",
        )

    makers = [
        (3, lock_add),
        (2, lock_reset),
        (6, revision),
        (4, checkout),
        (4, add_missing),
        (3, branch_exists),
        (3, diff_target),
        (3, branch_type),
        (3, outside),
    ]
    cleans: list[Callable[[], Step]] = [
        lambda: ok("git_status", **g()),
        lambda: ok("git_log", **g(max_count=rng.randrange(1, 5))),
        lambda: ok("git_show", **g(revision=pick(rng, ("HEAD", "HEAD~1", *branches)))),
        lambda: ok("git_branch", **g(branch_type="local")),
        lambda: ok("git_diff", **g(target=pick(rng, branches))),
    ]
    steps = plan(rng, makers, cleans, ctx.fails, ctx.cleans)
    return await mcp_stream(ctx, "git-mcp", program, ["--repository", rp], steps)


def _git_repo(repo: Path) -> None:
    repo.mkdir()

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    git("config", "user.email", "replay@example.test")
    git("config", "user.name", "replay")
    (repo / "docs").mkdir()
    for name, text in (
        ("app.py", "print('v1')\n"),
        ("README.md", "# App\n"),
        ("setup.cfg", "[metadata]\nname = app\n"),
        ("docs/guide.md", "Guide\n"),
    ):
        (repo / name).write_text(text)
    git("add", ".")
    git("commit", "-q", "-m", "v1")
    (repo / "app.py").write_text("print('v2')\n")
    git("commit", "-q", "-am", "v2")
    for branch in ("feature/login", "release/1.0", "fix/typo"):
        git("branch", branch)


async def filesystem_mcp(ctx: Context) -> Recorder | None:
    entry = npm_server("server-filesystem")
    if entry is None:
        return _skip("filesystem-mcp", "@modelcontextprotocol/server-filesystem or node is missing")
    rng = ctx.rng("filesystem-mcp")
    root = ctx.work / "files"
    for folder in ("docs", "data", "reports", "tmp"):
        (root / folder).mkdir(parents=True)
    docs = {
        "README.md": "# Project\n",
        "guide.md": "Install, then run.\n",
        "api.md": "GET /orders\n",
        "changelog.md": "0.1.0\n",
    }
    data = ("sales_2024.csv", "customers.csv", "inventory.csv", "returns_q3.csv")
    for name, text in docs.items():
        (root / "docs" / name).write_text(text)
    for name in data:
        (root / "data" / name).write_text("id,value\n1,10\n2,20\n")
    (root / "data" / "secrets").symlink_to("/etc")
    made = iter(range(1, 100_000))

    def fs(path: Path | str, **more: Any) -> Args:
        return {"path": str(path), **more}

    def doc() -> Path:
        return root / "docs" / str(pick(rng, tuple(docs)))

    def late_report() -> Step:
        target = root / "reports" / f"report-{next(made)}.csv"
        return bad(
            "read_text_file",
            fs(target),
            None,
            "a report a background job writes 0.25 s later",
            lambda: later(WINDOW, lambda: target.write_text("id,total\n1,10\n")),
        )

    def typo() -> Step:
        folder, name = pick(rng, (("docs", pick(rng, tuple(docs))), ("data", pick(rng, data))))
        wrong = pick(
            rng,
            (
                name.lower() if name != name.lower() else name.upper(),
                name.replace("_", "-"),
                name.replace(".", "s."),
                name + ".txt",
            ),
        )
        if wrong == name:
            wrong = "old_" + name
        return bad(
            "read_text_file",
            fs(root / folder / wrong),
            fs(root / folder / name),
            "a file name that does not exist; fix: the real name",
        )

    def directory() -> Step:
        folder = pick(rng, ("docs", "data"))
        name = pick(rng, tuple(docs)) if folder == "docs" else pick(rng, data)
        return bad(
            "read_text_file",
            fs(root / folder),
            fs(root / folder / name),
            "a directory read as a file; fix: a file inside it",
        )

    def not_dir() -> Step:
        target = doc()
        return bad(
            "list_directory",
            fs(target),
            fs(target.parent),
            "a file listed as a directory; fix: its folder",
        )

    def no_dir() -> Step:
        wrong = pick(rng, ("doc", "Docs", "reports/2023", "dat", "output", "exports"))
        return bad(
            "list_directory",
            fs(root / wrong),
            fs(root / pick(rng, ("docs", "data"))),
            "a folder that does not exist; fix: an existing folder",
        )

    def edit() -> Step:
        target = root / "tmp" / f"config-{next(made)}.ini"
        value = pick(rng, ("draft", "staging", "v1", "debug"))
        wrong = pick(rng, ("final", "production", "v2", "release"))

        def setup() -> None:
            target.write_text(f"[app]\nmode = {value}\n")

        return bad(
            "edit_file",
            fs(target, edits=[{"oldText": f"mode = {wrong}", "newText": "mode = live"}]),
            fs(target, edits=[{"oldText": f"mode = {value}", "newText": "mode = live"}]),
            "an edit whose old text is not in the file; fix: the text the file has",
            setup,
        )

    def both() -> Step:
        target = doc()
        return bad(
            "read_text_file",
            fs(target, head=rng.randrange(1, 5), tail=rng.randrange(1, 5)),
            fs(target, head=rng.randrange(1, 5)),
            "head and tail together, which the tool refuses; fix: one of them",
        )

    def move_exists() -> Step:
        source = root / "tmp" / f"draft-{next(made)}.md"
        taken = doc()

        def setup() -> None:
            source.write_text("draft\n")

        return bad(
            "move_file",
            {"source": str(source), "destination": str(taken)},
            {"source": str(source), "destination": str(root / "tmp" / f"final-{next(made)}.md")},
            "a move onto a file that exists; fix: a free name",
            setup,
        )

    def denied() -> Step:
        wrong, other = pick(
            rng,
            (
                ("/etc/passwd", "/etc/hosts"),
                ("/root/.ssh/id_rsa", "/root/.bashrc"),
                ("/var/log/syslog", "/var/log/messages"),
                (str(root / ".." / "secrets.env"), str(root.parent / "secrets.env")),
                ("/home/dev/.aws/credentials", "/home/dev/.aws/config"),
            ),
        )
        return bad(
            "read_text_file",
            fs(wrong),
            fs(other),
            "a path outside the allowed directory; every such path is denied",
        )

    def symlink() -> Step:
        name = pick(rng, ("hostname", "hosts", "passwd", "os-release"))
        return bad(
            "read_text_file",
            fs(root / "data" / "secrets" / name),
            fs(f"/etc/{name}"),
            "a symlink out of the allowed directory; the target path is denied too",
        )

    makers = [
        (3, late_report),
        (6, typo),
        (3, directory),
        (2, not_dir),
        (3, no_dir),
        (3, edit),
        (2, both),
        (2, move_exists),
        (4, denied),
        (2, symlink),
    ]
    cleans: list[Callable[[], Step]] = [
        lambda: ok("read_text_file", **fs(doc())),
        lambda: ok("list_directory", **fs(root / pick(rng, ("docs", "data")))),
        lambda: ok("get_file_info", **fs(root / "data" / pick(rng, data))),
        lambda: ok("search_files", **fs(root, pattern=pick(rng, ("*.md", "*.csv")))),
        lambda: ok("write_file", **fs(root / "tmp" / f"note-{next(made)}.txt", content="ok\n")),
    ]
    steps = plan(rng, makers, cleans, ctx.fails, ctx.cleans)
    return await mcp_stream(ctx, "filesystem-mcp", "node", [entry, str(root)], steps)


async def memory_mcp(ctx: Context) -> Recorder | None:
    entry = npm_server("server-memory")
    if entry is None:
        return _skip("memory-mcp", "@modelcontextprotocol/server-memory or node is missing")
    rng = ctx.rng("memory-mcp")
    people = NAMES[:10]
    made = iter(range(1, 100_000))
    seed = [
        {"name": p, "entityType": "person", "observations": [f"works on project {i}"]}
        for i, p in enumerate(people)
    ]

    def observe() -> Step:
        name = pick(rng, people)
        wrong = pick(rng, (name.lower(), name + "s", name.upper(), f"{name} Smith", name[:-1]))
        fact = f"fact {next(made)}"
        return bad(
            "add_observations",
            {"observations": [{"entityName": wrong, "contents": [fact]}]},
            {"observations": [{"entityName": name, "contents": [fact]}]},
            "observations for an entity name that does not exist; fix: the real name",
        )

    def shape() -> Step:
        name = f"{pick(rng, ('Team', 'Project', 'Service'))} {next(made)}"
        wrong = pick(rng, (name, [name], {"name": name}, [{"name": name}]))
        return bad(
            "create_entities",
            {"entities": wrong},
            {"entities": [{"name": name, "entityType": "thing", "observations": []}]},
            "entities in a shape the schema rejects; fix: the schema's shape",
        )

    def missing_field() -> Step:
        a, b = pick(rng, people), pick(rng, people)
        wrong = pick(
            rng,
            (
                {"from": a, "to": b},
                {"source": a, "target": b, "relationType": "knows"},
                {"from": a, "relationType": "knows"},
            ),
        )
        return bad(
            "create_relations",
            {"relations": [wrong]},
            {"relations": [{"from": a, "to": b, "relationType": "knows"}]},
            "a relation without a field the schema requires; fix: all fields",
        )

    def unknown_tool_arg() -> Step:
        q = pick(rng, ("project", "works", "fact", "person"))
        return bad(
            "search_nodes",
            {"q": q},
            {"query": q},
            "an argument name the tool does not take; fix: query",
        )

    makers = [(5, observe), (3, shape), (3, missing_field), (2, unknown_tool_arg)]
    cleans: list[Callable[[], Step]] = [
        lambda: ok("search_nodes", query=pick(rng, ("project", "works", "fact"))),
        lambda: ok("open_nodes", names=[pick(rng, people)]),
        lambda: ok(
            "add_observations",
            observations=[{"entityName": pick(rng, people), "contents": [f"note {next(made)}"]}],
        ),
    ]
    steps = [ok("create_entities", entities=seed)]
    steps += plan(rng, makers, cleans, ctx.fails, ctx.cleans)
    env = {"MEMORY_FILE_PATH": str(ctx.work / "memory.jsonl")}
    return await mcp_stream(ctx, "memory-mcp", "node", [entry], steps, env)


# -- main --------------------------------------------------------------------------------

DEPLOYMENTS: dict[str, Callable[[Context], Coroutine[Any, Any, Recorder | None]]] = {
    "http-api": http_api,
    "sqlite": sqlite,
    "postgres": postgres,
    "redis": redis,
    "fetch-mcp": fetch_mcp,
    "filesystem-mcp": filesystem_mcp,
    "git-mcp": git_mcp,
    "time-mcp": time_mcp,
    "memory-mcp": memory_mcp,
}


def _site() -> Site:
    try:
        return Site(47380)  # a fixed port keeps the recorded texts stable between runs
    except OSError:
        return Site()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=31)
    parser.add_argument("--pause", type=float, default=0.6, help="seconds before the retry")
    parser.add_argument("--fails", type=int, default=50, help="failing calls per deployment")
    parser.add_argument("--cleans", type=int, default=22, help="clean calls per deployment")
    parser.add_argument("--only", action="append", help="record only these deployments")
    parser.add_argument("--out", type=Path, default=OUT)
    options = parser.parse_args(argv)
    work = Path(tempfile.gettempdir()) / "toolmend-replay"  # fixed: paths in texts stay stable
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    site = _site()
    ctx = Context(options.seed, options.pause, work, site, options.fails, options.cleans)
    lines: list[dict[str, Any]] = []
    try:
        for name, record in DEPLOYMENTS.items():
            if options.only and name not in options.only:
                continue
            started = time.monotonic()
            rec = asyncio.run(record(ctx))
            if rec is None:
                continue
            lines += rec.records
            failed = sum(r["truth"] != "clean" for r in rec.records)
            print(
                f"{name}: {failed} failures, {len(rec.records) - failed} clean, "
                f"{rec.surprises} surprises, {time.monotonic() - started:.0f} s",
                file=sys.stderr,
            )
    finally:
        site.close()
        shutil.rmtree(work, ignore_errors=True)
    options.out.parent.mkdir(parents=True, exist_ok=True)
    with options.out.open("w", encoding="utf-8") as handle:
        for line in lines:
            handle.write(json.dumps(line, ensure_ascii=False, sort_keys=False) + "\n")
    print(f"wrote {len(lines)} lines to {options.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
