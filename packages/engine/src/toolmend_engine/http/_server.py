"""The OpenAI-compatible server: Chat Completions, Responses, Models, Anthropic Messages, render.

Every response to a request that reached the layer carries ``X-Tool-Errors``
(see ``layer``); the body is exactly what the endpoint would return without
it.  ``/v1/render`` and ``/v1/messages/render`` return the rendered prompt and
the layer's report instead of generating, so a client can see what the model
reads; ``/v1/messages/count_tokens`` counts that prompt's tokens.  A request
naming none of the served model's names (``ChatEngine.aliases``) is a 404
(``model_not_found``).
Requests are served one at a time by the model (a lock), while other
connections wait; one failing request never affects the next.  A stream is
generated on a thread of its own while the handler writes it, so the lock is
never held during a write: a client that stops reading delays no one, and
when it takes no byte for ``write_timeout`` its generation stops.  With an
outcome recorder installed, each generating request's new tool results are
observed, and a reply with no tool call ends the conversation's run
(``.._outcomes``).
"""

from __future__ import annotations

import contextvars
import logging
import queue
import threading
import time
from collections.abc import Callable, Generator
from typing import Any, TypeVar
from urllib.parse import urlsplit

from toolmend import telemetry

from .._layer import HEADER, header_value
from .._outcomes import Conversations
from ..inference._service import ChatEngine, Generation, Prepared
from ._base import BodyError, ClientGone, JsonHandler, Limits, Server
from ._errors import BadRequest
from ._replies import anthropic_body, anthropic_events, chat_body, chat_chunks
from ._requests import parse_anthropic, parse_chat
from ._responses_reply import responses_body, responses_events
from ._responses_request import parse_responses

__all__ = ["EngineServer", "make_server"]

log = logging.getLogger("toolmend.engine")


class EngineServer(Server):
    """The engine's HTTP server: OpenAI, Anthropic and Responses routes on one model."""

    def __init__(
        self, address: tuple[str, int], engine: ChatEngine, limits: Limits | None = None
    ) -> None:
        self.engine = engine
        self.outcomes = Conversations()
        super().__init__(address, EngineHandler, limits)


def make_server(
    engine: ChatEngine,
    host: str = "127.0.0.1",
    port: int = 8080,
    *,
    limits: Limits | None = None,
) -> EngineServer:
    """A server bound to ``host:port`` (port 0 picks a free one); call ``serve_forever``.

    Args:
        engine: The engine that answers.
        host: The address to listen on.
        port: The port to listen on (0: a free one).
        limits: Connections and timeouts (default ``Limits()``).
    """
    return EngineServer((host, port), engine, limits)


_Item = TypeVar("_Item")


def _ahead(items: Generator[_Item, None, None]) -> Generator[_Item, None, None]:
    """``items``, produced on a thread of their own as fast as they come.

    A stream's items come from a generation that holds the model's lock until it
    ends; written from the same thread, each chunk would hold the lock while the
    client takes it, and a client that stops reading would stall every request.
    The generation runs on ahead, its items queued (at most one reply); closing
    this generator stops it at its next item, closes ``items`` (which releases
    the lock) and waits for its thread.  An exception of ``items`` is raised here.
    """
    out: queue.SimpleQueue[tuple[bool, Any]] = queue.SimpleQueue()
    stop = threading.Event()

    def produce() -> None:
        try:
            for item in items:
                out.put((True, item))
                if stop.is_set():
                    break
        except Exception as exc:
            out.put((False, exc))
        else:
            out.put((False, None))
        finally:
            items.close()

    thread = threading.Thread(
        target=contextvars.copy_context().run, args=(produce,), name="toolmend-generation"
    )
    thread.start()
    try:
        while True:
            more, value = out.get()
            if not more:
                if value is not None:
                    raise value
                return
            yield value
    finally:
        stop.set()
        thread.join()


def _render_body(prepared: Prepared) -> dict[str, Any]:
    return {
        "prompt": prepared.prompt,
        "prompt_tokens": len(prepared.tokens),
        "prompt_sha256": prepared.digest,
        "messages": prepared.messages,
        "report": prepared.report.to_dict(),
        "grammar": prepared.grammar,
    }


class EngineHandler(JsonHandler):
    server: EngineServer

    @property
    def engine(self) -> ChatEngine:
        return self.server.engine

    @property
    def client(self) -> str | None:
        return self.headers.get("User-Agent")

    def do_GET(self) -> None:
        path = urlsplit(self.path).path.rstrip("/")
        if path in ("/v1/models", "/models"):
            cards = [self._model_card(ident) for ident in self.engine.model_ids]
            self.send_json(200, {"object": "list", "data": cards})
        elif path.startswith("/v1/models/"):
            ident = path.removeprefix("/v1/models/")
            try:
                self._check_model(ident)
            except BadRequest as exc:
                self.send_error_json(404, exc.message, code=exc.code)
                return
            self.send_json(200, self._model_card(ident))
        elif path == "/health":
            self.send_json(200, {"status": "ok"})
        else:
            self.send_error_json(404, f"no route for GET {path}", code="not_found")

    @staticmethod
    def _model_card(ident: str) -> dict[str, Any]:
        return {"id": ident, "object": "model", "created": 0, "owned_by": "toolmend"}

    def do_POST(self) -> None:
        path = urlsplit(self.path).path.rstrip("/")
        routes = {
            "/v1/chat/completions": self._chat,
            "/chat/completions": self._chat,
            "/v1/messages": self._messages,
            "/v1/render": self._render_chat,
            "/v1/messages/render": self._render_messages,
            "/v1/messages/count_tokens": self._count_tokens,
            "/v1/responses": self._responses,
            "/responses": self._responses,
            "/v1/responses/render": self._render_responses,
        }
        route = routes.get(path)
        self.anthropic_errors = path.startswith("/v1/messages")
        self._headers: dict[str, str] = {}
        self._streaming = False
        try:
            if route is None:
                self.read_body()
                self.send_error_json(404, f"no route for POST {path}", code="not_found")
                return
            with telemetry.server_span(f"POST {path}", self.headers.items()):
                route()
        except BodyError as exc:
            self.send_error_json(exc.status, str(exc), headers=self._headers)
        except BadRequest as exc:
            if exc.report is not None:
                self._headers = {HEADER: header_value(exc.report)}
            self.send_error_json(
                exc.status, exc.message, param=exc.param, code=exc.code, headers=self._headers
            )
        except ConnectionError:
            log.info("toolmend-engine: the client went away or stopped reading")
            self.close_connection = True
        except Exception:
            log.exception("toolmend-engine: request failed")
            if self._streaming:
                self.close_connection = True
                return
            self.send_internal_error(self._headers)

    def _prepared_headers(self, prepared: Prepared) -> None:
        self._headers = {HEADER: header_value(prepared.report)}

    def _observed(self, body: Any, fmt: str, prepared: Prepared) -> str | None:
        """The request's new tool results to the outcome recorder; their run (see ``_outcomes``)."""
        if not isinstance(body, dict):
            return None
        return self.server.outcomes.observe(body, fmt, prepared.report)

    def _replied(self, run: str | None, generation: Generation) -> None:
        """The reply is known: one with no tool call ends the run."""
        done = generation.completion
        self.server.outcomes.replied(run, None if done is None else bool(done.calls))

    def _check_model(self, model: str | None) -> None:
        """Only the served model's names (or none): another name is the provider's 404."""
        if self.engine.serves(model):
            return
        if self.anthropic_errors:
            raise BadRequest(f"model: {model}", "model", status=404)
        raise BadRequest(
            f"The model `{model}` does not exist or you do not have access to it.",
            code="model_not_found",
            status=404,
        )

    def _chat(self) -> None:
        body = self.read_json()
        request = parse_chat(body)
        self._check_model(request.model)
        prepared = self.engine.prepare_chat(request, self.client)
        self._prepared_headers(prepared)
        run = self._observed(body, "openai", prepared)
        generation = self.engine.generation(
            prepared,
            max_tokens=request.max_tokens,
            stop=request.stop,
            top_logprobs=request.top_logprobs,
            logprobs=request.logprobs,
        )
        created = int(time.time())
        if not request.stream:
            completion = generation.run()
            self._replied(run, generation)
            reply = chat_body(completion, self.engine.name, created, request.logprobs)
            self.send_json(200, reply, self._headers)
            return
        chunks = chat_chunks(
            generation,
            f"chatcmpl-{generation.ident}",
            self.engine.name,
            created,
            logprobs=request.logprobs,
            usage=request.include_usage,
        )
        self._stream(chunks, self.write_sse)
        self._replied(run, generation)
        self.write_sse("[DONE]")
        self.end_stream()

    def _messages(self) -> None:
        body = self.read_json()
        request = parse_anthropic(body)
        self._check_model(request.model)
        prepared = self.engine.prepare_anthropic(request, self.client)
        self._prepared_headers(prepared)
        run = self._observed(body, "anthropic", prepared)
        generation = self.engine.generation(
            prepared, max_tokens=request.max_tokens, stop=request.stop
        )
        if not request.stream:
            completion = generation.run()
            self._replied(run, generation)
            self.send_json(200, anthropic_body(completion, self.engine.name), self._headers)
            return
        ident = f"msg_{generation.ident}"
        self._send_events(
            anthropic_events(generation, ident, self.engine.name, len(prepared.tokens))
        )
        self._replied(run, generation)

    def _stream(self, items: Generator[_Item, None, None], write: Callable[[_Item], None]) -> None:
        """Start an event stream and write ``items`` as they are generated (see ``_ahead``).

        The generation is stopped and closed whatever happens, a failed write included.
        """
        self.start_stream(200, "text/event-stream", self._headers)
        self._streaming = True
        produced = _ahead(items)
        try:
            for item in produced:
                write(item)
        except ClientGone:
            log.debug("toolmend-engine: the client stopped reading; stopping its generation")
            raise
        finally:
            produced.close()

    def _send_events(self, events: Generator[tuple[str, dict[str, Any]], None, None]) -> None:
        """A stream of named server-sent events; the generator is closed whatever happens."""
        self._stream(events, lambda named: self.write_sse(named[1], named[0]))
        self.end_stream()

    def _responses(self) -> None:
        body = self.read_json()
        request = parse_responses(body)
        self._check_model(request.model)
        prepared = self.engine.prepare_responses(request, self.client)
        self._prepared_headers(prepared)
        run = self._observed(body, "responses", prepared)
        generation = self.engine.generation(prepared, max_tokens=request.max_tokens)
        created, ident = int(time.time()), generation.ident
        if not request.stream:
            completion = generation.run()
            self._replied(run, generation)
            reply = responses_body(completion, request, ident, self.engine.name, created)
            self.send_json(200, reply, self._headers)
            return
        self._send_events(responses_events(generation, request, ident, self.engine.name, created))
        self._replied(run, generation)

    def _render_responses(self) -> None:
        request = parse_responses(self.read_json())
        self._check_model(request.model)
        prepared = self.engine.prepare_responses(request, self.client)
        self._prepared_headers(prepared)
        self.send_json(200, _render_body(prepared), self._headers)

    def _render_chat(self) -> None:
        request = parse_chat(self.read_json())
        self._check_model(request.model)
        prepared = self.engine.prepare_chat(request, self.client)
        self._prepared_headers(prepared)
        self.send_json(200, _render_body(prepared), self._headers)

    def _render_messages(self) -> None:
        request = parse_anthropic(self.read_json())
        self._check_model(request.model)
        prepared = self.engine.prepare_anthropic(request, self.client)
        self._prepared_headers(prepared)
        self.send_json(200, _render_body(prepared), self._headers)

    def _count_tokens(self) -> None:
        """Anthropic's ``count_tokens``.

        Anthropic's ``count_tokens``: the tokens of the prompt the model would read,
        after the layer (the ``input_tokens`` a Messages request reports).
        """
        request = parse_anthropic(self.read_json(), counting=True)
        self._check_model(request.model)
        prepared = self.engine.prepare_anthropic(request, self.client)
        self._prepared_headers(prepared)
        self.send_json(200, {"input_tokens": len(prepared.tokens)}, self._headers)
