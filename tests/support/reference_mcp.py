"""The reference MCP servers from PyPI and npm, run as real subprocesses, for the tests
of every path an MCP tool takes (RecoveringSession on both SDK lines, the Agents SDK,
langchain-mcp-adapters).

``./dev test`` installs them once into a cached folder from the pinned
``requirements/mcp-servers.txt`` and ``requirements/npm/package-lock.json`` and
points ``TOOLMEND_MCP_PY`` (a bin folder) and ``TOOLMEND_MCP_NPM`` (a folder with
``node_modules``) at them; a test whose server is missing is skipped with the
reason.  The fetch server is pointed at a loopback site (:class:`Site`) whose
``/flaky`` page answers 503 once, then 200, and which counts its requests.
"""

from __future__ import annotations

import os
import shutil
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from mcp.client.stdio import StdioServerParameters

import notes

PY = Path(os.environ.get("TOOLMEND_MCP_PY", "/nonexistent"))
NPM = (
    Path(os.environ.get("TOOLMEND_MCP_NPM", "/nonexistent")) / "node_modules/@modelcontextprotocol"
)
PAGE = "<html><body><h1>Report</h1><p>All systems nominal.</p></body></html>"


def python_server(name: str, *args: str) -> StdioServerParameters:
    """One of the Python reference servers (``mcp-server-time``, ``-git``, ``-fetch``)."""
    program = PY / name
    if not program.exists():
        pytest.skip(f"{name} is not installed: ./dev test installs it (TOOLMEND_MCP_PY={PY})")
    return StdioServerParameters(command=str(program), args=list(args))


def npm_server(name: str, *args: str) -> StdioServerParameters:
    """One of the npm reference servers (``server-filesystem``, ``server-everything``)."""
    entry = NPM / name / "dist/index.js"
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the npm reference servers need it")
    if not entry.exists():
        pytest.skip(f"@modelcontextprotocol/{name} is not installed: ./dev test installs it")
    return StdioServerParameters(command=node, args=[str(entry), *args])


class Site:
    """A loopback web site for the fetch server: ``/flaky`` fails once with 503."""

    def __init__(self) -> None:
        self.hits: Counter[str] = Counter()
        site = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                return

            def do_GET(self) -> None:
                path = self.path.split("?")[0]
                site.hits[path] += 1
                status = 200
                if path == "/flaky" and site.hits[path] == 1:
                    status = 503
                elif path == "/denied":
                    status = 403
                body = PAGE.encode()
                self.send_response(status)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> Site:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def fetch_server() -> StdioServerParameters:
    return python_server("mcp-server-fetch", "--ignore-robots-txt", "--allow-private-ips")


def time_server() -> StdioServerParameters:
    return python_server("mcp-server-time", "--local-timezone", "UTC")


FIXABLE = (
    "This call cannot succeed as written. The error says what to change; "
    "call the tool again with the corrected value."
)
UNRECOVERABLE = (
    "This cannot be fixed by retrying or by changing the arguments. Tell the user what happened."
)
MARS = (
    "Error executing tool get_current_time: Invalid timezone: "
    "'No time zone found with key Mars/Olympus'"
)
NO_GET_TIME = "Tool 'get_time' does not exist. Available tools: get_current_time, convert_time."
BAD_TIMEZONE = (
    "Tool 'get_current_time' was not run: invalid arguments. timezone: 5 is not of type 'string'"
)

INVALID_SUM = (
    "MCP error -32602: Input validation error: Invalid arguments for tool get-sum: "
    "Invalid input: expected number, received string at a"
)
"""The everything server's own check of ``get-sum`` arguments (it says ``at a``)."""


def outside(path: str, allowed: Path) -> str:
    """The filesystem server's refusal of a path outside its allowed directory."""
    return f"Access denied - path outside allowed directories: {path} not in {allowed}"


note = notes.called
