"""The layer in front of any OpenAI-compatible server (vLLM, SGLang, llama.cpp, Ollama).

Chat Completions, Responses and Anthropic Messages bodies are rewritten by the layer (the
field ``tool_errors`` is removed before forwarding, since upstreams do not know
it); every other request is forwarded unchanged.  The upstream's status, body
and stream pass through as they come; the response gains ``X-Tool-Errors``.
An unreachable upstream is a 502 with an OpenAI-style body.
"""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request
from http.client import HTTPResponse
from typing import Any
from urllib.parse import urlsplit

from toolmend import Form

from .httpbase import MAX_DEPTH, BodyError, JsonHandler, Server, check_json
from .layer import HEADER, apply_layer, choose_form, header_value

__all__ = ["ProxyServer", "make_proxy"]

log = logging.getLogger("toolmend.engine")

_HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
        "accept-encoding",
    }
)
_LAYERED = {
    "/v1/chat/completions": "openai",
    "/chat/completions": "openai",
    "/v1/messages": "anthropic",
    "/v1/responses": "responses",
    "/responses": "responses",
}
_CONVERSATION = {"openai": "messages", "anthropic": "messages", "responses": "input"}


class ProxyServer(Server):
    def __init__(
        self, address: tuple[str, int], upstream: str, form: Form | None, timeout: float
    ) -> None:
        self.upstream = upstream.rstrip("/")
        self.form = form
        self.timeout = timeout
        super().__init__(address, ProxyHandler)


def make_proxy(
    upstream: str,
    *,
    form: Form | None = None,
    host: str = "127.0.0.1",
    port: int = 8081,
    timeout: float = 600.0,
) -> ProxyServer:
    """A proxy to ``upstream`` (its base URL, with or without ``/v1``)."""
    return ProxyServer((host, port), upstream, form, timeout)


def _target(upstream: str, path: str) -> str:
    if upstream.endswith("/v1") and path.startswith("/v1/"):
        return upstream + path[3:]
    return upstream + path


class ProxyHandler(JsonHandler):
    server: ProxyServer

    def do_GET(self) -> None:
        self._forward(None)

    def do_DELETE(self) -> None:
        self._forward(None)

    def do_POST(self) -> None:
        headers: dict[str, str] = {}
        path = urlsplit(self.path).path.rstrip("/")
        self.anthropic_errors = path.startswith("/v1/messages")
        try:
            data = self.read_body()
            fmt = _LAYERED.get(path)
            if fmt is not None:
                data, headers = self._layer(data, fmt)
        except BodyError as exc:
            self.send_error_json(exc.status, str(exc), param=exc.param)
            return
        except Exception:
            log.exception("toolmend-engine proxy: request failed")
            self.send_internal_error()
            return
        self._forward(data, headers)

    def _layer(self, data: bytes, fmt: str) -> tuple[bytes, dict[str, str]]:
        try:
            body = json.loads(data)
        except (ValueError, UnicodeDecodeError):
            return data, {}
        except RecursionError:
            raise BodyError(400, f"the request body nests deeper than {MAX_DEPTH} levels") from None
        check_json(body)
        if not isinstance(body, dict):
            return data, {}
        had_field = "tool_errors" in body
        try:
            form = choose_form(body.pop("tool_errors", None), self.server.form)
        except ValueError as exc:
            raise BodyError(400, str(exc), "tool_errors") from None
        conversation = body.get(_CONVERSATION[fmt])
        if fmt == "responses" and isinstance(conversation, str):
            conversation = []  # one user message: nothing can have failed
        rewrite = apply_layer(conversation, form, format=fmt, client=self.headers.get("User-Agent"))
        headers = {HEADER: header_value(rewrite.report)}
        if not rewrite.report.changed and not had_field:
            return data, headers
        body[_CONVERSATION[fmt]] = rewrite.messages
        return json.dumps(body, ensure_ascii=False).encode("utf-8"), headers

    def _forward(self, data: bytes | None, extra: dict[str, str] | None = None) -> None:
        extra = extra or {}
        url = _target(self.server.upstream, self.path)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
        request = urllib.request.Request(url, data=data, headers=headers, method=self.command)
        try:
            response: HTTPResponse = urllib.request.urlopen(request, timeout=self.server.timeout)
        except urllib.error.HTTPError as exc:
            response = exc  # type: ignore[assignment]
        except (urllib.error.URLError, OSError) as exc:
            self.send_error_json(
                502,
                f"upstream {self.server.upstream} unreachable: {exc}",
                kind="upstream_error",
                headers=extra,
            )
            return
        try:
            self._relay(response, extra)
        except (BrokenPipeError, ConnectionResetError):
            log.info("toolmend-engine proxy: client went away")
            self.close_connection = True
        finally:
            response.close()

    def _relay(self, response: Any, extra: dict[str, str]) -> None:
        passed = {
            k: v
            for k, v in response.headers.items()
            if k.lower() not in _HOP_BY_HOP and k.lower() != HEADER.lower()
        }
        passed.update(extra)
        status = response.status if hasattr(response, "status") else response.code
        content_type = passed.pop("Content-Type", passed.pop("content-type", "application/json"))
        if "text/event-stream" in content_type:
            self.start_stream(status, content_type, passed)
            while True:
                chunk = response.read1(65536)
                if not chunk:
                    break
                self.write_chunk(chunk)
            self.end_stream()
            return
        self.send_bytes(status, response.read(), content_type, passed)
