"""A scripted loopback HTTP server for the retry and exception tests.

Every network exception in these tests is raised by the real client library
against 127.0.0.1, so the classifier is tested on the objects it will meet.
"""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Reply:
    """One scripted response; ``delay`` stalls it (client timeouts), ``drop`` sends none."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b'{"ok": true}'
    delay: float = 0.0
    drop: bool = False


@dataclass(frozen=True)
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


class Loopback:
    """A threaded HTTP server on 127.0.0.1 that answers from per-path scripts.

    Each path's replies are consumed in order; the last one repeats.
    """

    def __init__(self) -> None:
        self.scripts: dict[str, list[Reply]] = {}
        self.seen: list[Seen] = []
        self.lock = threading.Lock()
        loopback = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                return

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                path = self.path.split("?", 1)[0]
                reply = loopback._next(
                    Seen(self.command, path, {k.lower(): v for k, v in self.headers.items()}, body)
                )
                if reply.delay:
                    time.sleep(reply.delay)
                if reply.drop:
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                try:
                    self.send_response(reply.status)
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(reply.body)))
                    self.end_headers()
                    self.wfile.write(reply.body)
                except OSError:
                    self.close_connection = True

            do_GET = _handle
            do_POST = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def _next(self, seen: Seen) -> Reply:
        with self.lock:
            self.seen.append(seen)
            script = self.scripts.get(seen.path)
            if not script:
                return Reply(404, body=b'{"error": "no script"}')
            return script.pop(0) if len(script) > 1 else script[0]

    def script(self, path: str, *replies: Reply) -> str:
        """Script ``path`` and return its full URL."""
        with self.lock:
            self.scripts[path] = list(replies)
        return self.url + path

    def hits(self, path: str) -> list[Seen]:
        with self.lock:
            return [s for s in self.seen if s.path == path]
