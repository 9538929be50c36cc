"""Deterministic local inference on llama.cpp: greedy decoding with an exact prefix cache.

Two forms compared at the same failure point must differ only by the form, so
the same request has to yield the same tokens whatever ran before it.  Greedy
decoding and a fixed thread count are not enough: llama.cpp's arithmetic depends
on how tokens are split into batches (five tokens fed as one batch or one at a
time gave log-probabilities up to 0.1 apart on our CPU), and a naive prefix
cache splits a prompt differently depending on the previous request.  The prompt is therefore always
evaluated in fixed blocks aligned to absolute positions, and the cache is reused
only up to a block boundary that an earlier request also evaluated as a whole
block.  Each block is then computed from the same inputs with the same shapes,
so the logits are a function of the request alone, and shared prefixes (the
tool schemas, the user request) are still computed once.  The same prompt asked
twice in a row (the evaluation scores a prompt, then generates from it) reuses
the logits it already computed, which are the same numbers by construction.

Weight repacking into llama.cpp's "extra buffer types" (AMX, AVX repack) is off
by default: it changes the arithmetic from one CPU to the next, and AMX faults
on virtual machines that do not enable its register state.
"""

from __future__ import annotations

import ctypes
import itertools
import logging
import os
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["LocalModel", "ModelSettings", "Step", "TopLogprob"]

log = logging.getLogger("toolmend.engine")


@dataclass(frozen=True, slots=True)
class ModelSettings:
    """Everything that can change the tokens; fixed so that reruns are identical.

    ``block`` is the size of the fixed prompt blocks (llama.cpp's batch and
    micro-batch) described above; ``extra_buffers`` sets llama.cpp's
    ``use_extra_bufts``.

    Attributes:
        n_ctx: Tokens the context holds.
        n_threads: CPU threads.
        block: The size of the fixed prompt blocks (batch and micro-batch).
        extra_buffers: llama.cpp's ``use_extra_bufts``.
        verbose: Whether llama.cpp's own log is shown.
    """

    n_ctx: int = 4096
    n_threads: int = 2
    block: int = 64
    extra_buffers: bool = False
    verbose: bool = False


@dataclass(frozen=True, slots=True)
class TopLogprob:
    """One of the most likely tokens at a step, with its log probability.

    Attributes:
        token: The token id.
        text: Its bytes.
        logprob: Its log probability.
    """

    token: int
    text: bytes
    logprob: float


@dataclass(frozen=True, slots=True)
class Step:
    """One generated token with its log-probability under the model.

    Attributes:
        token: The token id.
        text: Its bytes.
        logprob: Its log probability.
        end: Whether it ends the generation.
        top: The most likely tokens at this step, when asked for.
    """

    token: int
    text: bytes
    logprob: float
    end: bool
    top: tuple[TopLogprob, ...] = ()


def _log_norm(logits: npt.NDArray[np.float32]) -> float:
    """``log(sum(exp(logits)))`` in float64, in place on one copy.

    ``log(sum(exp(logits)))`` in float64, in place on one copy: a token's log-probability
    is its logit minus this, the same number a full log-softmax gives, at a tenth of the cost
    per generated token.
    """
    peak = float(logits.max())
    values = logits.astype(np.float64)
    values -= peak
    np.exp(values, out=values)
    return peak + float(np.log(values.sum()))


def _log_softmax(logits: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
    return logits.astype(np.float64) - _log_norm(logits)


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """How many leading tokens two sequences share: what a prefix cache can reuse."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


class _Grammar:
    """A llama.cpp grammar sampler used as a mask over greedy choices.

    The unconstrained greedy token is checked first (one candidate); only when
    the grammar rejects it is the whole vocabulary masked and the best admitted
    token taken.  Both give the most probable admitted token (ties to the lowest
    id, as ``argmax``), so the check is only a shortcut.  When the grammar
    admits nothing but the end of the reply, that is the end-of-generation token.
    """

    def __init__(self, model: LocalModel, grammar: str) -> None:
        lib = model._lib
        self._lib = lib
        self._sampler = lib.llama_sampler_init_grammar(
            model._vocab, grammar.encode("utf-8"), b"root"
        )
        if not self._sampler:
            raise ValueError("llama.cpp refused the grammar")
        self._end = self._end_token(model)
        self._one = np.zeros(1, dtype=_TOKEN_DATA)
        self._all = np.zeros(model.n_vocab, dtype=_TOKEN_DATA)
        self._all["id"] = np.arange(model.n_vocab, dtype=np.int32)

    @staticmethod
    def _end_token(model: LocalModel) -> int:
        lib = model._lib
        eot = int(lib.llama_vocab_eot(model._vocab))
        return eot if eot >= 0 else int(lib.llama_vocab_eos(model._vocab))

    def _apply(self, data: npt.NDArray[Any]) -> None:
        lib = self._lib
        array = lib.llama_token_data_array(
            data=data.ctypes.data_as(lib.llama_token_data_p),
            size=len(data),
            selected=-1,
            sorted=False,
        )
        lib.llama_sampler_apply(self._sampler, ctypes.byref(array))

    def choose(self, logits: npt.NDArray[np.float32], greedy: int) -> int:
        self._one["id"] = greedy
        self._one["logit"] = logits[greedy]
        self._apply(self._one)
        if np.isfinite(self._one["logit"][0]):
            return greedy
        self._all["logit"] = logits
        self._apply(self._all)
        masked = self._all["logit"]
        best = int(np.argmax(masked))
        return best if np.isfinite(masked[best]) else self._end

    def accept(self, token: int) -> None:
        self._lib.llama_sampler_accept(self._sampler, token)

    def close(self) -> None:
        if self._sampler:
            self._lib.llama_sampler_free(self._sampler)
            self._sampler = None


_TOKEN_DATA = np.dtype([("id", "<i4"), ("logit", "<f4"), ("p", "<f4")], align=True)
"""The layout of llama.cpp's ``llama_token_data``."""


class LocalModel:
    """One GGUF model and one context, reused across requests.

    Not safe for concurrent use: callers hold ``lock`` around a whole request.

    Args:
        path: The GGUF file.
        settings: What can change the tokens (default: ``ModelSettings()``).
    """

    def __init__(self, path: str | os.PathLike[str], settings: ModelSettings | None = None):
        import llama_cpp

        self.settings = settings or ModelSettings()
        self.path = Path(path)
        self.name = self.path.name.removesuffix(".gguf")
        self.lock = threading.Lock()
        self._lib: Any = llama_cpp
        if not self.settings.verbose:
            logging.getLogger("llama-cpp-python").setLevel(logging.ERROR)
        if not self.path.is_file():
            raise FileNotFoundError(f"model file not found: {self.path}")
        s = self.settings
        llama_cpp.llama_backend_init()
        mparams = llama_cpp.llama_model_default_params()
        mparams.n_gpu_layers = 0
        mparams.use_extra_bufts = s.extra_buffers
        self._model = llama_cpp.llama_model_load_from_file(str(self.path).encode(), mparams)
        if not self._model:
            raise ValueError(f"not a loadable GGUF model: {self.path}")
        cparams = llama_cpp.llama_context_default_params()
        cparams.n_ctx = s.n_ctx
        cparams.n_batch = s.block
        cparams.n_ubatch = s.block
        cparams.n_seq_max = 1
        cparams.n_threads = s.n_threads
        cparams.n_threads_batch = s.n_threads
        cparams.flash_attn_type = llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED
        self._ctx = llama_cpp.llama_init_from_model(self._model, cparams)
        if not self._ctx:
            llama_cpp.llama_model_free(self._model)
            raise ValueError(f"could not create a context for {self.path}")
        self._vocab = llama_cpp.llama_model_get_vocab(self._model)
        self._memory = llama_cpp.llama_get_memory(self._ctx)
        self._batch = llama_cpp.llama_batch_init(s.block, 0, 1)
        self.n_vocab: int = llama_cpp.llama_vocab_n_tokens(self._vocab)
        self.n_ctx: int = llama_cpp.llama_n_ctx(self._ctx)
        raw = llama_cpp.llama_model_chat_template(self._model, None)
        self.chat_template: str | None = raw.decode("utf-8") if raw else None
        self.bos_text = self.piece(llama_cpp.llama_vocab_bos(self._vocab), special=True)
        self.eos_text = self.piece(llama_cpp.llama_vocab_eos(self._vocab), special=True)
        self._cached: list[int] = []
        self._canonical = 0
        self._last: tuple[tuple[int, ...], npt.NDArray[np.float32]] | None = None
        self._closed = False

    # -- tokens ---------------------------------------------------------------------

    def tokenize(self, text: str, *, special: bool = True) -> list[int]:
        """Tokens of ``text``; special-token strings become special tokens only if ``special``.

        The engine passes ``special=False`` for every piece of content, so that
        text a tool or a user wrote cannot open or close a turn.

        Args:
            text: The text.
            special: Read special-token strings as special tokens.
        """
        data = text.encode("utf-8", "replace")
        size = len(data) + 8
        buffer = (self._lib.llama_token * size)()
        n = self._lib.llama_tokenize(self._vocab, data, len(data), buffer, size, False, special)
        if n < 0:
            size = -n
            buffer = (self._lib.llama_token * size)()
            n = self._lib.llama_tokenize(self._vocab, data, len(data), buffer, size, False, special)
        return list(buffer[:n])

    def piece_bytes(self, token: int, *, special: bool = False) -> bytes:
        """The bytes of ``token`` (a piece may be part of a UTF-8 character).

        Args:
            token: The token.
            special: Render a special token as its text.
        """
        size = 64
        buffer = ctypes.create_string_buffer(size)
        n = self._lib.llama_token_to_piece(self._vocab, token, buffer, size, 0, special)
        if n < 0:
            size = -n
            buffer = ctypes.create_string_buffer(size)
            n = self._lib.llama_token_to_piece(self._vocab, token, buffer, size, 0, special)
        return buffer.raw[:n]

    def piece(self, token: int, *, special: bool = False) -> str:
        """The text of ``token``; bytes that are not UTF-8 on their own are replaced.

        Args:
            token: The token.
            special: Render a special token as its text.
        """
        return self.piece_bytes(token, special=special).decode("utf-8", errors="replace")

    def is_end(self, token: int) -> bool:
        """Whether ``token`` ends generation.

        Args:
            token: The token.
        """
        return bool(self._lib.llama_vocab_is_eog(self._vocab, token))

    # -- evaluation -----------------------------------------------------------------

    def _decode(self, tokens: Sequence[int], start: int) -> None:
        batch = self._batch
        batch.n_tokens = len(tokens)
        for i, token in enumerate(tokens):
            batch.token[i] = token
            batch.pos[i] = start + i
            batch.seq_id[i][0] = 0
            batch.n_seq_id[i] = 1
            batch.logits[i] = i == len(tokens) - 1
        code = self._lib.llama_decode(self._ctx, batch)
        if code != 0:
            raise RuntimeError(f"llama_decode returned {code}")

    def _logits(self) -> npt.NDArray[np.float32]:
        pointer = self._lib.llama_get_logits_ith(self._ctx, -1)
        return np.ctypeslib.as_array(pointer, shape=(self.n_vocab,)).copy()

    def _check_length(self, n: int) -> None:
        if n == 0:
            raise ValueError("empty prompt")
        if n > self.n_ctx:
            raise ValueError(f"prompt of {n} tokens exceeds the context of {self.n_ctx} tokens")

    def prompt_logits(self, tokens: Sequence[int]) -> npt.NDArray[np.float32]:
        """Logits after the last prompt token, computed block by block (see module doc).

        Args:
            tokens: The prompt.
        """
        self._check_length(len(tokens))
        tokens = list(tokens)
        if (
            self._last is not None
            and self._last[0] == tuple(tokens)
            and self._cached[: len(tokens)] == tokens
        ):
            self._lib.llama_memory_seq_rm(self._memory, 0, len(tokens), -1)
            self._cached = tokens
            return self._last[1].copy()
        self._last = None
        block = self.settings.block
        common = common_prefix(self._cached[: self._canonical], tokens)
        keep = (min(common, len(tokens) - 1) // block) * block
        self._lib.llama_memory_seq_rm(self._memory, 0, keep, -1)
        self._cached = tokens[:keep]
        self._canonical = keep
        pos = keep
        while pos < len(tokens):
            end = min(len(tokens), (pos // block + 1) * block)
            self._decode(tokens[pos:end], pos)
            pos = end
        self._cached = list(tokens)
        self._canonical = (len(tokens) // block) * block
        logits = self._logits()
        self._last = (tuple(tokens), logits.copy())
        return logits

    def _advance(self, token: int) -> npt.NDArray[np.float32]:
        if len(self._cached) >= self.n_ctx:
            raise ValueError("context full")
        self._decode([token], len(self._cached))
        self._cached.append(token)
        return self._logits()

    def generate(
        self,
        tokens: Sequence[int],
        max_tokens: int,
        *,
        top_logprobs: int = 0,
        grammar: str | None = None,
    ) -> Iterator[Step]:
        """Greedy tokens after ``tokens``; stops at an end-of-generation token or the limit.

        With a GBNF ``grammar`` each token is the most probable one the grammar
        admits (see ``_Grammar``); log-probabilities stay the model's own.

        Args:
            tokens: The prompt.
            max_tokens: Tokens to generate at most.
            top_logprobs: Alternatives to report per step, with their log probabilities.
            grammar: A GBNF grammar the tokens must follow.
        """
        constraint = _Grammar(self, grammar) if grammar is not None else None
        try:
            yield from self._generate(tokens, max_tokens, top_logprobs, constraint)
        finally:
            if constraint is not None:
                constraint.close()

    def _generate(
        self,
        tokens: Sequence[int],
        max_tokens: int,
        top_logprobs: int,
        constraint: _Grammar | None,
    ) -> Iterator[Step]:
        logits = self.prompt_logits(tokens)
        for i in range(max_tokens):
            norm = _log_norm(logits)
            token = int(np.argmax(logits))
            if constraint is not None:
                token = constraint.choose(logits, token)
            top: tuple[TopLogprob, ...] = ()
            if top_logprobs > 0:
                logprobs = logits.astype(np.float64) - norm
                order = np.argsort(-logprobs, kind="stable")[:top_logprobs]
                top = tuple(
                    TopLogprob(int(t), self.piece_bytes(int(t)), float(logprobs[t])) for t in order
                )
            end = self.is_end(token)
            logprob = float(np.float64(logits[token])) - norm
            yield Step(token, b"" if end else self.piece_bytes(token), logprob, end, top)
            if end or i == max_tokens - 1 or len(self._cached) >= self.n_ctx:
                return
            if constraint is not None:
                constraint.accept(token)
            logits = self._advance(token)

    def continuation_logprobs(
        self, tokens: Sequence[int], continuation: Sequence[int]
    ) -> list[float]:
        """Log P of each token of ``continuation`` after ``tokens`` (teacher-forced).

        The tokens are fed one at a time, as in generation: llama.cpp's numbers
        depend on the batch shape, and these must be the probabilities that
        generating the same tokens would see.

        Args:
            tokens: The prompt.
            continuation: The tokens to score after it.
        """
        logits = self.prompt_logits(tokens)
        out = [float(_log_softmax(logits)[continuation[0]])]
        for token, following in itertools.pairwise(continuation):
            logits = self._advance(token)
            out.append(float(_log_softmax(logits)[following]))
        return out

    def close(self) -> None:
        """Free the model and its context; later calls fail."""
        if self._closed:
            return
        self._closed = True
        self._lib.llama_batch_free(self._batch)
        self._lib.llama_free(self._ctx)
        self._lib.llama_model_free(self._model)

    def __enter__(self) -> LocalModel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
