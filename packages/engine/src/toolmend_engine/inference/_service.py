"""One request through the engine: layer, render, generate, read the calls.

The same path serves the HTTP API, the ``render`` command and the evaluation,
so the prompt a client inspects is the prompt the model reads.  The model is
anything with the small ``ModelLike`` surface: the llama.cpp ``LocalModel`` or,
in tests, a scripted fake.
"""

from __future__ import annotations

import codecs
import hashlib
import secrets
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from toolmend import ContextPolicy, Form
from toolmend.integrations import Report

from .._layer import apply_layer, choose_form
from ..http._errors import BadRequest
from ..http._requests import AnthropicRequest, ChatRequest, anthropic_to_chat
from ..http._responses_request import ResponsesRequest, responses_to_chat
from ._constraints import ConstraintError, Decoding, grammar_for
from ._model import Step
from ._template import ChatTemplate, Part, RenderError
from ._toolcalls import ContentStream, ParsedCall, Reply, parse_reply

__all__ = [
    "ChatEngine",
    "Completion",
    "Generation",
    "ModelLike",
    "Prepared",
    "TokenLogprob",
    "tokenize_parts",
]


class ModelLike(Protocol):
    """What the service needs of a model (the local one, or a fake in tests)."""

    name: str
    n_ctx: int
    chat_template: str | None
    bos_text: str
    eos_text: str
    lock: threading.Lock

    def tokenize(self, text: str, *, special: bool = True) -> list[int]:
        """The tokens of ``text``."""

    def generate(
        self,
        tokens: Sequence[int],
        max_tokens: int,
        *,
        top_logprobs: int = 0,
        grammar: str | None = None,
    ) -> Iterator[Step]:
        """Generate from ``tokens``, one step at a time."""


@dataclass(frozen=True, slots=True)
class Prepared:
    """A request after the layer and the template: exactly what the model reads."""

    prompt: str
    tokens: list[int]
    report: Report
    messages: list[Any]
    tool_names: frozenset[str]
    grammar: str | None = None
    """The GBNF grammar the reply must match (``tool_choice``, response format), if any."""
    calls: bool = True
    """Whether the reply is read for calls (not under ``tool_choice: "none"``)."""

    @property
    def digest(self) -> str:
        """The SHA-256 of the prompt, for reports."""
        return hashlib.sha256(self.prompt.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class TokenLogprob:
    """A token's text, bytes and log probability, as the APIs report it."""

    text: str
    raw: bytes
    logprob: float
    top: tuple[tuple[str, bytes, float], ...] = ()


@dataclass(frozen=True, slots=True)
class Completion:
    """A finished generation: its text, tool calls, tokens and why it stopped."""

    id: str
    text: str
    content: str
    calls: tuple[ParsedCall, ...]
    call_ids: tuple[str, ...]
    finish_reason: str
    stop_sequence: str | None
    prompt_tokens: int
    tokens: tuple[int, ...]
    logprobs: tuple[TokenLogprob, ...]

    @property
    def completion_tokens(self) -> int:
        """Tokens generated."""
        return len(self.tokens)


def _held_back(text: str, stops: Sequence[str]) -> int:
    """Length of the longest end of ``text`` that could still become a stop sequence."""
    longest = 0
    for stop in stops:
        for n in range(min(len(stop) - 1, len(text)), longest, -1):
            if text.endswith(stop[:n]):
                longest = n
                break
    return longest


class Generation:
    """Greedy generation of one reply: iterate for content deltas, then read ``completion``.

    ``ident`` is random and new for every generation (responses and tool calls need ids
    that are unique across requests); it is drawn outside the model, so the tokens stay a
    function of the request alone.
    """

    def __init__(
        self,
        engine: ChatEngine,
        prepared: Prepared,
        *,
        max_tokens: int,
        stop: Sequence[str] = (),
        top_logprobs: int = 0,
        logprobs: bool = False,
    ) -> None:
        self._engine = engine
        self._prepared = prepared
        self._max_tokens = max_tokens
        self._stop = tuple(stop)
        self._top = top_logprobs
        self._logprobs = logprobs or top_logprobs > 0
        self.ident = secrets.token_hex(12)
        self.completion: Completion | None = None

    def __iter__(self) -> Iterator[str]:
        engine, prepared = self._engine, self._prepared
        stream = ContentStream(engine.template.call_opening, calls=prepared.calls)
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        text = ""
        tokens: list[int] = []
        logprobs: list[TokenLogprob] = []
        finish, stop_sequence = "length", None
        limit = min(self._max_tokens, engine.model.n_ctx - len(prepared.tokens))
        with engine.model.lock:
            steps = engine.model.generate(
                prepared.tokens, limit, top_logprobs=self._top, grammar=prepared.grammar
            )
            for step in steps:
                if step.end:
                    finish = "stop"
                    break
                tokens.append(step.token)
                if self._logprobs:
                    logprobs.append(_token_logprob(step))
                text += decoder.decode(step.text)
                hits = [(text.find(s), s) for s in self._stop if s in text]
                if hits:
                    at, stop_sequence = min(hits)
                    text, finish = text[:at], "stop"
                    break
                delta = stream.feed(text[: len(text) - _held_back(text, self._stop)])
                if delta:
                    yield delta
        if stop_sequence is None:
            text += decoder.decode(b"", final=True)
        reply = (
            parse_reply(text, prepared.tool_names) if prepared.calls else Reply(text.strip(), ())
        )
        rest = stream.finish(reply.content)
        if rest:
            yield rest
        if reply.calls:
            finish = "tool_calls"
        ident = self.ident
        self.completion = Completion(
            id=f"chatcmpl-{ident}",
            text=text,
            content=reply.content,
            calls=reply.calls,
            call_ids=tuple(f"call_{ident[:16]}_{i}" for i in range(len(reply.calls))),
            finish_reason=finish,
            stop_sequence=stop_sequence,
            prompt_tokens=len(prepared.tokens),
            tokens=tuple(tokens),
            logprobs=tuple(logprobs),
        )

    def run(self) -> Completion:
        """Generate to the end; returns the completion."""
        for _ in self:
            pass
        assert self.completion is not None
        return self.completion


def _token_logprob(step: Step) -> TokenLogprob:
    top = tuple((t.text.decode("utf-8", "replace"), t.text, t.logprob) for t in step.top)
    return TokenLogprob(step.text.decode("utf-8", "replace"), step.text, step.logprob, top)


def _tool_names(tools: Sequence[Any]) -> frozenset[str]:
    names = set()
    for tool in tools:
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            names.add(function["name"])
    return frozenset(names)


def tokenize_parts(model: ModelLike, parts: Sequence[Part]) -> list[int]:
    """Tokens of a rendered prompt: special tokens are parsed in the scaffolding only."""
    tokens: list[int] = []
    for part in parts:
        tokens.extend(model.tokenize(part.text, special=not part.content))
    return tokens


@contextmanager
def _reported(report: Report) -> Iterator[None]:
    """A request refused after the layer ran still carries the layer's report."""
    try:
        yield
    except BadRequest as exc:
        exc.report = report
        raise


class ChatEngine:
    """A model, its chat template and the server's default form.

    Args:
        model: The model.
        form: The default form (a request may choose its own).
        name: The model name the API shows (default: the model's).
        context: The core's policy for errors in context.
        aliases: Other names a request may give for this model; ``"*"`` accepts any
            name.  A request naming none of them is the provider's 404, so a typo is
            seen; replies always carry ``name``.
    """

    def __init__(
        self,
        model: ModelLike,
        *,
        form: Form | None = None,
        name: str | None = None,
        context: ContextPolicy | None = None,
        aliases: Sequence[str] = (),
    ):
        self.model = model
        self.form = form
        self.context = context
        self.name = name or model.name
        self.aliases = tuple(dict.fromkeys(a for a in aliases if a != self.name))
        self.template = ChatTemplate.for_model(model.chat_template, model.bos_text, model.eos_text)

    @property
    def model_ids(self) -> tuple[str, ...]:
        """The names ``/v1/models`` lists: ``name``, then the aliases (``*`` left out)."""
        return (self.name, *(a for a in self.aliases if a != "*"))

    def serves(self, model: str | None) -> bool:
        """Whether a request naming ``model`` is for this engine.

        Args:
            model: The request's model name; ``None`` (none given) means this engine's.
        """
        return model is None or model in self.model_ids or "*" in self.aliases

    def _finish(
        self,
        rendered: list[Any],
        tools: list[Any],
        report: Report,
        decoding: Decoding | None = None,
        format_param: str = "response_format",
    ) -> Prepared:
        decoding = decoding or Decoding()
        try:
            grammar = grammar_for(
                decoding, tools, self.template.call_opening, format_param=format_param
            )
        except ConstraintError as exc:
            raise BadRequest(str(exc), exc.param) from None
        try:
            parts = self.template.render_parts(rendered, tools)
            prompt = "".join(part.text for part in parts)
            prompt.encode("utf-8")
        except RenderError as exc:
            raise BadRequest(str(exc), "messages") from None
        except UnicodeEncodeError:
            raise BadRequest(
                "the request holds text that is not valid Unicode", "messages"
            ) from None
        tokens = tokenize_parts(self.model, parts)
        if len(tokens) >= self.model.n_ctx:
            raise BadRequest(
                f"the prompt has {len(tokens)} tokens; the context holds {self.model.n_ctx}",
                "messages",
                "context_length_exceeded",
            )
        return Prepared(
            prompt, tokens, report, rendered, _tool_names(tools), grammar, decoding.calls
        )

    def prepare_chat(
        self, request: ChatRequest, client: str | None = None, context: ContextPolicy | None = None
    ) -> Prepared:
        """A Chat Completions request prepared: the form applied, the prompt rendered.

        Args:
            request: The parsed request.
            client: The User-Agent that selects agent rules.
            context: The request's policy for errors in context (default: the engine's).
        """
        form = choose_form(request.tool_errors, self.form)
        rewrite = apply_layer(
            request.messages, form, format="openai", client=client, context=context or self.context
        )
        with _reported(rewrite.report):
            return self._finish(
                list(rewrite.messages), request.tools, rewrite.report, request.decoding
            )

    def prepare_anthropic(
        self,
        request: AnthropicRequest,
        client: str | None = None,
        context: ContextPolicy | None = None,
    ) -> Prepared:
        """An Anthropic Messages request prepared: the form applied, the prompt rendered.

        Args:
            request: The parsed request.
            client: The User-Agent that selects agent rules.
            context: The request's policy for errors in context (default: the engine's).
        """
        form = choose_form(request.tool_errors, self.form)
        rewrite = apply_layer(
            request.messages,
            form,
            format="anthropic",
            client=client,
            context=context or self.context,
        )
        with _reported(rewrite.report):
            rendered = anthropic_to_chat(list(rewrite.messages), request.system)
            return self._finish(rendered, request.tools, rewrite.report, request.decoding)

    def prepare_responses(
        self,
        request: ResponsesRequest,
        client: str | None = None,
        context: ContextPolicy | None = None,
    ) -> Prepared:
        """A Responses request prepared: the form applied, the prompt rendered.

        Args:
            request: The parsed request.
            client: The User-Agent that selects agent rules.
            context: The request's policy for errors in context (default: the engine's).
        """
        form = choose_form(request.tool_errors, self.form)
        rewrite = apply_layer(
            request.items, form, format="responses", client=client, context=context or self.context
        )
        with _reported(rewrite.report):
            rendered = responses_to_chat(list(rewrite.messages), request.instructions)
            return self._finish(
                rendered, request.tools, rewrite.report, request.decoding, "text.format"
            )

    def generation(
        self,
        prepared: Prepared,
        *,
        max_tokens: int,
        stop: Sequence[str] = (),
        top_logprobs: int = 0,
        logprobs: bool = False,
    ) -> Generation:
        """A generation of ``prepared`` on this service's model.

        Args:
            prepared: The prepared request.
            max_tokens: Tokens to generate at most.
            stop: Texts that end the generation.
            top_logprobs: Alternatives to report per token.
            logprobs: Whether to report log probabilities.
        """
        return Generation(
            self,
            prepared,
            max_tokens=max_tokens,
            stop=stop,
            top_logprobs=top_logprobs,
            logprobs=logprobs,
        )
