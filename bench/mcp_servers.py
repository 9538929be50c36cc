"""The reference MCP servers, called the way a model calls them, through RecoveringSession.

Usage: ./dev python bench/mcp_servers.py

Seven real servers from the package registries run locally over stdio: the Python
``mcp-server-time``, ``mcp-server-git``, ``mcp-server-fetch`` (pointed at a
loopback HTTP server that answers 200, 404, 429, 503 and drops connections) and
``mcp-server-sqlite``, and the npm ``@modelcontextprotocol/server-filesystem``,
``-everything`` and ``-memory``.  Each gets a script of realistic calls in the
order a model makes them: valid ones, mistakes, repeats of a mistake, the
corrected call.  Every call goes through a default ``RecoveringSession``; when the
session refuses a call without sending it, the same call is sent on the raw
client to see whether it would have succeeded.  The table counts calls, failures,
refusals, and refusals of calls that would have succeeded (the figure that must
be 0).

Where the servers live (nothing here downloads): ``./dev bench`` sets the first and
the third from the cached folder that ``./dev test`` installs; the sqlite server needs
its own venv.

- ``TOOLMEND_MCP_PY``: a bin folder with ``mcp-server-time``, ``-git``, ``-fetch``
  (``pip install mcp-server-time mcp-server-git mcp-server-fetch``);
- ``TOOLMEND_MCP_SQLITE``: a bin folder with ``mcp-server-sqlite`` (it needs
  ``mcp<2``: ``pip install mcp-server-sqlite "mcp<2"`` in its own venv);
- ``TOOLMEND_MCP_NPM``: a folder whose ``node_modules/@modelcontextprotocol`` holds the
  three npm servers (``npm install @modelcontextprotocol/server-filesystem
  @modelcontextprotocol/server-everything @modelcontextprotocol/server-memory``).

A server that is not found is listed as skipped.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters

import toolmend
from toolmend_mcp import RecoveringSession
from toolmend_mcp._results import result_text

PY = Path(os.environ.get("TOOLMEND_MCP_PY", "/tmp/mcp-py/venv/bin"))
SQLITE = Path(os.environ.get("TOOLMEND_MCP_SQLITE", "/tmp/mcp-py/venv2/bin"))
NPM = (
    Path(os.environ.get("TOOLMEND_MCP_NPM", "/tmp/mcp-npm")) / "node_modules/@modelcontextprotocol"
)

Call = tuple[str, dict[str, Any]]


class _Site(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        path = self.path.split("?")[0]
        if path == "/drop":
            self.close_connection = True
            self.connection.close()
            return
        status = {"/missing": 404, "/busy": 503, "/limited": 429}.get(path, 200)
        body = b"<html><body><h1>Report</h1><p>All systems nominal.</p></body></html>"
        self.send_response(status)
        if status == 429:
            self.send_header("Retry-After", "1")
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def _scripts(work: Path, site: str) -> dict[str, list[Call]]:
    repo = str(work / "repo")
    tz = "get_current_time"
    return {
        "time": [
            (tz, {"timezone": "Europe/Paris"}),
            (tz, {"timezone": "PST"}),
            (tz, {"timezone": "PST"}),
            (tz, {"timezone": "America/Los_Angeles"}),
            (tz, {"timezone": "Mars/Olympus"}),
            (tz, {"timezone": "Moon/Base"}),
            (tz, {"timezone": "Pluto/Cold"}),
            (tz, {"timezone": "Asia/Tokyo"}),
            (tz, {}),
            ("convert_time", {"source_timezone": "UTC", "time": "25:00",
                              "target_timezone": "Asia/Tokyo"}),
            ("convert_time", {"source_timezone": "UTC", "time": "14:30",
                              "target_timezone": "Asia/Tokyo"}),
            ("convert_time", {"source_timezone": "EST", "time": "14:30",
                              "target_timezone": "UTC"}),
            ("convert_time", {"source_timezone": "America/New_York", "time": "14:30",
                              "target_timezone": "UTC"}),
            ("get_time", {"timezone": "UTC"}),
            ("get_time", {"timezone": "UTC"}),
            (tz, {"timezone": "UTC"}),
            (tz, {"timezone": "Europe/Berlin"}),
            (tz, {"timezone": "europe/berlin"}),
            (tz, {"timezone": "Europe/Berlin"}),
            (tz, {"timezone": "Australia/Sydney"}),
            (tz, {"timezone": 5}),
            (tz, {"timezone": "Africa/Nairobi"}),
        ],
        "git": [
            ("git_status", {"repo_path": repo}),
            ("git_log", {"repo_path": repo, "max_count": 3}),
            ("git_show", {"repo_path": repo, "revision": "develop"}),
            ("git_show", {"repo_path": repo, "revision": "develop"}),
            ("git_show", {"repo_path": repo, "revision": "HEAD"}),
            ("git_diff", {"repo_path": repo, "target": "origin/main"}),
            ("git_diff", {"repo_path": repo, "target": "HEAD~1"}),
            ("git_add", {"repo_path": repo, "files": ["missing.txt"]}),
            ("git_add", {"repo_path": repo, "files": ["notes.txt"]}),
            ("git_commit", {"repo_path": repo, "message": "Add notes"}),
            ("git_commit", {"repo_path": repo, "message": "Nothing"}),
            ("git_status", {"repo_path": str(work / "not-a-repo")}),
            ("git_status", {"repo_path": str(work / "not-a-repo")}),
            ("git_status", {"repo_path": repo}),
            ("git_create_branch", {"repo_path": repo, "branch_name": "feature/x"}),
            ("git_create_branch", {"repo_path": repo, "branch_name": "feature/x"}),
            ("git_checkout", {"repo_path": repo, "branch_name": "feature/y"}),
            ("git_checkout", {"repo_path": repo, "branch_name": "feature/x"}),
            ("git_branch", {"repo_path": repo, "branch_type": "locals"}),
            ("git_branch", {"repo_path": repo, "branch_type": "local"}),
            ("git_log", {"repo_path": repo}),
            ("git_diff_unstaged", {"repo_path": repo}),
        ],
        "fetch": [
            ("fetch", {"url": f"{site}/report"}),
            ("fetch", {"url": f"{site}/missing"}),
            ("fetch", {"url": f"{site}/missing"}),
            ("fetch", {"url": f"{site}/busy"}),
            ("fetch", {"url": f"{site}/busy"}),
            ("fetch", {"url": f"{site}/busy"}),
            ("fetch", {"url": f"{site}/report"}),
            ("fetch", {"url": f"{site}/limited"}),
            ("fetch", {"url": f"{site}/report", "max_length": 50}),
            ("fetch", {"url": f"{site}/drop"}),
            ("fetch", {"url": f"{site}/drop"}),
            ("fetch", {"url": f"{site}/report"}),
            ("fetch", {"url": "ftp://127.0.0.1/file"}),
            ("fetch", {"url": "not a url"}),
            ("fetch", {"url": "not a url"}),
            ("fetch", {"url": f"{site}/report", "raw": True}),
            ("fetch", {"url": "http://127.0.0.1:9/closed"}),
            ("fetch", {"url": f"{site}/report"}),
            ("fetch", {}),
            ("fetch", {"url": f"{site}/report", "start_index": 10}),
        ],
        "sqlite": [
            ("create_table", {"query": "CREATE TABLE orders (id INTEGER PRIMARY KEY, total REAL)"}),
            ("write_query", {"query": "INSERT INTO orders (total) VALUES (12.5)"}),
            ("read_query", {"query": "SELECT * FROM order"}),
            ("read_query", {"query": "SELECT * FROM orders"}),
            ("read_query", {"query": "SELECT * FROM customers"}),
            ("read_query", {"query": "SELECT * FROM customers"}),
            ("list_tables", {}),
            ("read_query", {"query": "SELECT totl FROM orders"}),
            ("read_query", {"query": "SELECT total FROM orders"}),
            ("read_query", {"query": "SELEC 1"}),
            ("read_query", {"query": "SELECT 1"}),
            ("describe_table", {"table_name": "orders"}),
            ("describe_table", {"table_name": "customers"}),
            ("write_query", {"query": "SELECT * FROM orders"}),
            ("write_query", {"query": "UPDATE orders SET total = 13 WHERE id = 1"}),
            ("write_query", {"query": "INSERT INTO orders (id, total) VALUES (1, 5)"}),
            ("write_query", {"query": "INSERT INTO orders (total) VALUES (5)"}),
            ("read_query", {"query": "SELECT COUNT(*) FROM orders"}),
            ("create_table", {"query": "CREATE TABLE orders (id INTEGER)"}),
            ("read_query", {}),
            ("append_insight", {"insight": "Orders average 10."}),
            ("read_query", {"query": "SELECT AVG(total) FROM orders"}),
        ],
        "filesystem": [
            ("list_directory", {"path": str(work / "files")}),
            ("read_text_file", {"path": str(work / "files/readme.txt")}),
            ("read_text_file", {"path": str(work / "files/README.txt")}),
            ("read_text_file", {"path": str(work / "files/README.txt")}),
            ("read_text_file", {"path": str(work / "files")}),
            ("read_text_file", {"path": "/etc/passwd"}),
            ("read_text_file", {"path": "/etc/passwd"}),
            ("read_text_file", {"path": str(work / "files/readme.txt"), "head": 1}),
            ("write_file", {"path": str(work / "files/new.txt"), "content": "hello"}),
            ("read_text_file", {"path": str(work / "files/new.txt")}),
            ("edit_file", {"path": str(work / "files/new.txt"),
                           "edits": [{"oldText": "goodbye", "newText": "x"}]}),
            ("edit_file", {"path": str(work / "files/new.txt"),
                           "edits": [{"oldText": "hello", "newText": "hi"}]}),
            ("create_directory", {"path": str(work / "files/sub")}),
            ("list_directory", {"path": str(work / "files/nope")}),
            ("search_files", {"path": str(work / "files"), "pattern": "*.txt"}),
            ("get_file_info", {"path": str(work / "files/new.txt")}),
            ("move_file", {"source": str(work / "files/none.txt"),
                           "destination": str(work / "files/x.txt")}),
            ("move_file", {"source": str(work / "files/new.txt"),
                           "destination": str(work / "files/moved.txt")}),
            ("read_file", {"path": str(work / "files/moved.txt")}),
            ("list_allowed_directories", {}),
            ("directory_tree", {"path": str(work / "files")}),
            ("read_text_file", {}),
        ],
        "everything": [
            ("echo", {"message": "hi"}),
            ("get-sum", {"a": 1, "b": 2}),
            ("get-sum", {"a": "one", "b": 2}),
            ("get-sum", {"a": "one", "b": 2}),
            ("get-sum", {"a": 1, "b": 2}),
            ("echo", {}),
            ("echo", {"message": "again"}),
            ("add", {"a": 1, "b": 2}),
            ("add", {"a": 1, "b": 2}),
            ("get-tiny-image", {}),
            ("get-structured-content", {"location": "Nowhere"}),
            ("get-structured-content", {"location": "New York"}),
            ("get-annotated-message", {"messageType": "error"}),
            ("get-annotated-message", {"messageType": "success"}),
            ("get-env", {}),
            ("get-resource-reference", {"resourceId": 0}),
            ("get-resource-reference", {"resourceId": 2}),
            ("get-resource-links", {"count": 2}),
            ("echo", {"message": "done"}),
            ("get-sum", {"a": 2.5, "b": 1}),
            ("toggle-simulated-logging", {}),
            ("toggle-simulated-logging", {}),
        ],
        "memory": [
            ("read_graph", {}),
            ("create_entities", {"entities": [{"name": "Alice", "entityType": "person",
                                                "observations": ["likes tea"]}]}),
            ("add_observations", {"observations": [{"entityName": "Bob",
                                                    "contents": ["likes coffee"]}]}),
            ("add_observations", {"observations": [{"entityName": "Bob",
                                                    "contents": ["likes coffee"]}]}),
            ("add_observations", {"observations": [{"entityName": "Alice",
                                                    "contents": ["likes coffee"]}]}),
            ("search_nodes", {"query": "tea"}),
            ("open_nodes", {"names": ["Alice"]}),
            ("create_relations", {"relations": [{"from": "Alice", "to": "Carol",
                                                 "relationType": "knows"}]}),
            ("create_entities", {"entities": [{"name": "Carol", "entityType": "person",
                                                "observations": []}]}),
            ("delete_observations", {"deletions": [{"entityName": "Dave",
                                                    "observations": ["x"]}]}),
            ("create_entities", {"entities": "Alice"}),
            ("create_entities", {"entities": "Alice"}),
            ("create_entities", {"entities": [{"name": "Dave", "entityType": "person",
                                                "observations": []}]}),
            ("delete_entities", {"entityNames": ["Dave"]}),
            ("read_graph", {}),
            ("search_nodes", {}),
            ("search_nodes", {"query": "coffee"}),
            ("open_nodes", {"names": ["Zed"]}),
            ("delete_relations", {"relations": [{"from": "Alice", "to": "Carol",
                                                 "relationType": "knows"}]}),
            ("read_graph", {}),
            ("delete_entities", {"entityNames": ["Alice", "Carol"]}),
            ("read_graph", {}),
        ],
    }  # fmt: skip


def _servers(work: Path) -> dict[str, StdioServerParameters | None]:
    def exe(folder: Path, name: str) -> str | None:
        path = folder / name
        return str(path) if path.exists() else None

    def node(name: str) -> StdioServerParameters | None:
        script = NPM / name / "dist/index.js"
        if not script.exists() or shutil.which("node") is None:
            return None
        env = {**os.environ, "MEMORY_FILE_PATH": str(work / "memory.jsonl")}
        extra = [str(work / "files")] if name == "server-filesystem" else []
        return StdioServerParameters(command="node", args=[str(script), *extra], env=env)

    py = {n: exe(PY, f"mcp-server-{n}") for n in ("time", "git", "fetch")}
    sqlite = exe(SQLITE, "mcp-server-sqlite")
    return {
        "time": StdioServerParameters(command=py["time"]) if py["time"] else None,
        "git": StdioServerParameters(command=py["git"]) if py["git"] else None,
        "fetch": StdioServerParameters(
            command=py["fetch"], args=["--ignore-robots-txt", "--allow-private-ips"]
        )
        if py["fetch"]
        else None,
        "sqlite": StdioServerParameters(command=sqlite, args=["--db-path", str(work / "db.sqlite")])
        if sqlite
        else None,
        "filesystem": node("server-filesystem"),
        "everything": node("server-everything"),
        "memory": node("server-memory"),
    }


@dataclass
class Tally:
    calls: int = 0
    failed: int = 0
    refused: int = 0
    refused_ok: int = 0
    verify_first: int = 0
    kinds: dict[str, int] = field(default_factory=dict)


def _ok(result: Any) -> bool:
    """A success: not flagged, and not an error the server returned as content (sqlite)."""
    if bool(getattr(result, "is_error", False)):
        return False
    return not toolmend.classify_result(result_text(result)).failed


async def _run(name: str, params: StdioServerParameters, calls: list[Call]) -> Tally:
    tally = Tally()
    async with Client(params) as client:
        session = RecoveringSession(client)
        for tool, args in calls:
            tally.calls += 1
            result = await session.call_tool(tool, args)
            meta = (result.meta or {}).get("toolmend", {})
            if not meta.get("failed"):
                continue
            tally.failed += 1
            kind = str(meta.get("kind"))
            tally.kinds[kind] = tally.kinds.get(kind, 0) + 1
            tally.verify_first += meta.get("guidance") == toolmend.integrations.VERIFY_FIRST
            if meta.get("attempts") == 0:  # not sent: loop guard or malformed call
                tally.refused += 1
                try:
                    raw = await client.call_tool(tool, args)
                    tally.refused_ok += _ok(raw)
                except Exception:
                    pass
    return tally


def _prepare(work: Path) -> None:
    files = work / "files"
    files.mkdir()
    (files / "readme.txt").write_text("line one\nline two\n")
    repo = work / "repo"
    repo.mkdir()
    (work / "not-a-repo").mkdir()

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    git("config", "user.email", "bench@example.test")
    git("config", "user.name", "bench")
    (repo / "app.py").write_text("print('v1')\n")
    git("add", "app.py")
    git("commit", "-q", "-m", "v1")
    (repo / "app.py").write_text("print('v2')\n")
    git("commit", "-q", "-am", "v2")
    (repo / "notes.txt").write_text("todo\n")


def main() -> None:
    logging.disable(logging.WARNING)
    site_server = ThreadingHTTPServer(("127.0.0.1", 0), _Site)
    threading.Thread(target=site_server.serve_forever, daemon=True).start()
    site = f"http://127.0.0.1:{site_server.server_address[1]}"
    rows = []
    with tempfile.TemporaryDirectory() as tmp, toolmend.testing(seed=0):
        work = Path(tmp)
        _prepare(work)
        scripts = _scripts(work, site)
        for name, params in _servers(work).items():
            if params is None:
                rows.append((name, None))
                continue
            rows.append((name, asyncio.run(_run(name, params, scripts[name]))))
    site_server.shutdown()
    print(
        "server     | calls | failed | refused | refused but would succeed | verify-first | kinds"
    )
    print(
        "-----------+-------+--------+---------+---------------------------+--------------+------"
    )
    total = Tally()
    for name, tally in rows:
        if tally is None:
            print(f"{name:<10} | skipped: not installed")
            continue
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(tally.kinds.items()))
        print(f"{name:<10} | {tally.calls:>5} | {tally.failed:>6} | {tally.refused:>7} | "
              f"{tally.refused_ok:>25} | {tally.verify_first:>12} | {kinds}")  # fmt: skip
        for attr in ("calls", "failed", "refused", "refused_ok", "verify_first"):
            setattr(total, attr, getattr(total, attr) + getattr(tally, attr))
    print(f"{'all':<10} | {total.calls:>5} | {total.failed:>6} | {total.refused:>7} | "
          f"{total.refused_ok:>25} | {total.verify_first:>12} |")  # fmt: skip


if __name__ == "__main__":
    main()
