"""Where the evaluation's replies come from: the local engine, or any OpenAI-compatible server.

Both apply the layer in the chosen form before the model sees the conversation
and read calls with the same lenient rules.  The local backend goes through the
engine's own request path (so the evaluation measures what the server serves),
computes the decision log-odds from the model's probabilities and the tokens
recomputed at the decision step from the rendered prompts.  A remote server
gives log-odds only when it returns ``top_logprobs``, and no token counts.
"""

from __future__ import annotations

import hashlib
import json
import math
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from toolmend import ContextPolicy, Form

from .._layer import apply_layer, header_value
from ..http._requests import ChatRequest
from ..inference._model import LocalModel, common_prefix
from ..inference._service import ChatEngine, tokenize_parts
from ..inference._template import CALL_CLOSE, CALL_OPEN
from ..inference._toolcalls import ParsedCall, call_from_object, parse_reply

__all__ = ["Backend", "LocalBackend", "RemoteBackend", "RemoteError", "Turn", "log_odds"]

EVAL_CLIENT = "toolmend-engine-eval"


@dataclass(frozen=True, slots=True)
class Turn:
    """One reply of the model under a form."""

    text: str
    content: str
    calls: tuple[ParsedCall, ...]
    prompt_sha256: str
    prompt_tokens: int | None
    header: str
    log_odds: float | None = None


class Backend(Protocol):
    """A model the evaluation runs turns against (the local model, or a server)."""

    label: str

    def turn(
        self,
        messages: list[Any],
        tools: Sequence[Any],
        form: Form,
        *,
        score: bool,
        context: ContextPolicy | None = None,
    ) -> Turn:
        """One decision step: the model's reply to ``messages`` in ``form``, scored if asked."""

    def recomputed(
        self, before: list[Any], messages: list[Any], tools: Sequence[Any], form: Form
    ) -> int | None:
        """Tokens of the prompt recomputed between two turns (``None``: not measurable)."""

    def recomputed_since(
        self,
        previous: list[Any],
        messages: list[Any],
        tools: Sequence[Any],
        form: Form,
        context: ContextPolicy | None = None,
    ) -> int | None:
        """Prompt tokens recomputed since the previous request (``None``: not measurable)."""


def log_odds(log_p_call: float, log_p_first: float) -> float | None:
    """Log P(call) − log P(text), where text is any reply whose first token does not open a call."""
    p_first = math.exp(log_p_first)
    if p_first >= 1.0:
        return None
    return log_p_call - math.log1p(-p_first)


class LocalBackend:
    """The embedded engine: the same path as ``/v1/chat/completions``, greedy."""

    def __init__(self, model: LocalModel, *, max_tokens: int = 64) -> None:
        self.model = model
        self.engine = ChatEngine(model)
        self.label = model.name
        self.max_tokens = max_tokens
        self._opening = model.tokenize(self.engine.template.call_opening)

    def _prepare(
        self,
        messages: list[Any],
        tools: Sequence[Any],
        form: Form,
        context: ContextPolicy | None = None,
    ) -> Any:
        request = ChatRequest(messages=messages, tools=list(tools), tool_errors=form.value)
        return self.engine.prepare_chat(request, EVAL_CLIENT, context)

    def turn(
        self,
        messages: list[Any],
        tools: Sequence[Any],
        form: Form,
        *,
        score: bool,
        context: ContextPolicy | None = None,
    ) -> Turn:
        """One decision step on the local model; see :meth:`Backend.turn`."""
        prepared = self._prepare(messages, tools, form, context)
        odds = None
        if score:
            with self.model.lock:
                lps = self.model.continuation_logprobs(prepared.tokens, self._opening)
            odds = log_odds(sum(lps), lps[0])
        stop = (CALL_CLOSE,) if self.engine.template.call_opening == CALL_OPEN else ()
        completion = self.engine.generation(prepared, max_tokens=self.max_tokens, stop=stop).run()
        return Turn(
            text=completion.text,
            content=completion.content,
            calls=completion.calls,
            prompt_sha256=prepared.digest,
            prompt_tokens=len(prepared.tokens),
            header=header_value(prepared.report),
            log_odds=odds,
        )

    def recomputed(
        self, before: list[Any], messages: list[Any], tools: Sequence[Any], form: Form
    ) -> int | None:
        """Prompt tokens after the longest prefix shared with the turn that made the failed call."""
        cached = tokenize_parts(
            self.model,
            self.engine.template.render_parts(before, tools, add_generation_prompt=False),
        )
        tokens = self._prepare(messages, tools, form).tokens
        return len(tokens) - common_prefix(cached, tokens)

    def recomputed_since(
        self,
        previous: list[Any],
        messages: list[Any],
        tools: Sequence[Any],
        form: Form,
        context: ContextPolicy | None = None,
    ) -> int | None:
        """Prompt tokens after the longest prefix shared with the previous request's prompt.

        Both prompts are as the engine rendered them (form and policy applied).
        """
        cached = self._prepare(previous, tools, form, context).tokens
        tokens = self._prepare(messages, tools, form, context).tokens
        return len(tokens) - common_prefix(cached, tokens)


class RemoteError(RuntimeError):
    """The server did not answer a request the evaluation needs."""


def _remote_call(call: Any) -> ParsedCall | None:
    function = call.get("function") if isinstance(call, Mapping) else None
    if not isinstance(function, Mapping):
        return None
    return call_from_object({"name": function.get("name"), "arguments": function.get("arguments")})


class RemoteBackend:
    """Any OpenAI-compatible server; the layer is applied here, before sending."""

    def __init__(
        self,
        base_url: str,
        model_name: str,
        *,
        max_tokens: int = 64,
        api_key: str | None = None,
        timeout: float = 300.0,
        opening: str = CALL_OPEN,
    ) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.label = self.model_name = model_name
        self.max_tokens = max_tokens
        self.api_key = api_key
        self.timeout = timeout
        self.opening = opening
        self._logprobs = True

    def _post(self, body: dict[str, Any]) -> Any:
        headers = {"Content-Type": "application/json", "User-Agent": EVAL_CLIENT}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(self.url, json.dumps(body).encode(), headers)
        with urllib.request.urlopen(request, timeout=self.timeout) as response:
            return json.loads(response.read())

    def turn(
        self,
        messages: list[Any],
        tools: Sequence[Any],
        form: Form,
        *,
        score: bool,
        context: ContextPolicy | None = None,
    ) -> Turn:
        """One decision step through the server's Chat Completions API; see :meth:`Backend.turn`."""
        rewrite = apply_layer(messages, form, format="openai", client=EVAL_CLIENT, context=context)
        body: dict[str, Any] = {
            "model": self.model_name,
            "messages": rewrite.messages,
            "tools": list(tools),
            "temperature": 0,
            "seed": 0,
            "max_tokens": self.max_tokens,
        }
        if score and self._logprobs:
            body.update(logprobs=True, top_logprobs=20)
        try:
            try:
                data = self._post(body)
            except urllib.error.HTTPError as exc:
                if exc.code != 400 or "logprobs" not in body:
                    raise
                self._logprobs = False
                body.pop("logprobs")
                body.pop("top_logprobs")
                data = self._post(body)
            choice = data["choices"][0]
            message = choice["message"]
        except (urllib.error.URLError, OSError, ValueError, KeyError, IndexError, TypeError) as exc:
            raise RemoteError(f"{self.url}: {exc}") from exc
        content = message.get("content") or ""
        calls = tuple(c for c in map(_remote_call, message.get("tool_calls") or []) if c)
        if not calls:
            reply = parse_reply(content, {t["function"]["name"] for t in tools})
            content, calls = reply.content, reply.calls
        text = message.get("content") or ""
        if message.get("tool_calls"):
            text += json.dumps(message["tool_calls"], ensure_ascii=False)
        digest = hashlib.sha256(
            json.dumps(rewrite.messages, ensure_ascii=False, sort_keys=True).encode()
        ).hexdigest()
        return Turn(
            text=text,
            content=content.strip(),
            calls=calls,
            prompt_sha256=digest,
            prompt_tokens=(data.get("usage") or {}).get("prompt_tokens"),
            header=header_value(rewrite.report),
            log_odds=self._odds(choice) if score else None,
        )

    def _odds(self, choice: Mapping[str, Any]) -> float | None:
        try:
            top = choice["logprobs"]["content"][0]["top_logprobs"]
        except (KeyError, IndexError, TypeError):
            return None
        p_call = 0.0
        for entry in top:
            token = str(entry.get("token", "")).lstrip()
            if token and (self.opening.startswith(token) or token.startswith(self.opening)):
                p_call += math.exp(float(entry["logprob"]))
        if not 0.0 < p_call < 1.0:
            return None
        return math.log(p_call) - math.log1p(-p_call)

    def recomputed(
        self, before: list[Any], messages: list[Any], tools: Sequence[Any], form: Form
    ) -> int | None:
        """Not measurable through an HTTP API: always ``None``."""
        return None

    def recomputed_since(
        self,
        previous: list[Any],
        messages: list[Any],
        tools: Sequence[Any],
        form: Form,
        context: ContextPolicy | None = None,
    ) -> int | None:
        """Not measurable through an HTTP API: always ``None``."""
        return None
