"""A scripted chat model for offline tests and demos of agents.

``create_agent`` binds tools to its model, which LangChain's own fake models
do not support; and a conversation-aware script keeps concurrent runs of one
agent independent, which a shared queue of replies cannot.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from pydantic import ConfigDict, Field, PrivateAttr

__all__ = ["ScriptedChatModel", "replies"]

Script = Callable[[list[BaseMessage]], AIMessage | str]


class ScriptedChatModel(BaseChatModel):
    """Answers with ``script(messages)`` and records every request it was sent."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    script: Script
    seen: list[list[BaseMessage]] = Field(default_factory=list)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "toolmend-scripted"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        with self._lock:
            self.seen.append(list(messages))
        reply = self.script(list(messages))
        message = AIMessage(content=reply) if isinstance(reply, str) else reply.model_copy()
        return ChatResult(generations=[ChatGeneration(message=message)])

    def bind_tools(
        self,
        tools: Sequence[Any],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Tools are ignored: the replies are scripted.

        Args:
            tools: The tools (ignored).
            tool_choice: The tool choice (ignored).
            **kwargs: Other options (ignored).
        """
        return self


def replies(messages: Iterable[AIMessage | str]) -> Script:
    """A script that answers with ``messages`` in order, whatever it is sent.

    Args:
        messages: The replies; a string is a text reply.
    """
    queue = list(messages)
    lock = threading.Lock()

    def script(_: list[BaseMessage]) -> AIMessage | str:
        with lock:
            if not queue:
                raise RuntimeError("the scripted model has no reply left")
            return queue.pop(0)

    return script
