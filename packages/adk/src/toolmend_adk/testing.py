"""A scripted stand-in for a model, to run an ADK agent offline (tests, examples).

:class:`ScriptedLlm` is an ADK ``BaseLlm`` that answers each model call with the
next scripted response and keeps a copy of every request, so a test reads
exactly what the model was sent (the function responses included).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from typing import Any

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types
from pydantic import Field

__all__ = ["ScriptedLlm", "call", "calls", "reply"]


def call(name: str, args: Mapping[str, Any] | None = None, *, id: str = "call_1") -> LlmResponse:
    """A model turn that calls one tool.

    Args:
        name: The tool's name.
        args: The call's arguments.
        id: The call's id.
    """
    return calls((name, args, id))


def calls(*made: tuple[str, Mapping[str, Any] | None, str]) -> LlmResponse:
    """A model turn that calls several tools at once.

    Args:
        *made: ``(name, args, id)`` for each call.
    """
    parts = [
        types.Part(function_call=types.FunctionCall(name=name, args=dict(args or {}), id=id))
        for name, args, id in made
    ]
    return LlmResponse(content=types.Content(role="model", parts=parts))


def reply(text: str) -> LlmResponse:
    """A model turn that answers in text.

    Args:
        text: The answer.
    """
    return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))


class ScriptedLlm(BaseLlm):
    """An ADK model that plays a script: one response per model call, in order.

    Attributes:
        script: The responses still to play, one per model call (see :func:`call`,
            :func:`reply`); pass it as a keyword, as to any pydantic model.
        model: The model's name.
        requests: A deep copy of every request, in order.
    """

    model: str = "scripted"
    script: list[LlmResponse] = Field(default_factory=list)
    requests: list[LlmRequest] = Field(default_factory=list)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        """The next scripted response; ``AssertionError`` once the script is spent.

        Args:
            llm_request: The request, recorded.
            stream: Ignored: one response per call.
        """
        self.requests.append(llm_request.model_copy(deep=True))
        if not self.script:
            raise AssertionError(f"the script is spent: model call {len(self.requests)}")
        yield self.script.pop(0)

    def function_responses(self, request: int) -> list[dict[str, Any]]:
        """The function responses the model read in request ``request`` (0-based), in order.

        Each as ``{"id", "name", "response"}``: the parts of the request's last
        content, which is the tools' answer to the model's previous turn.

        Args:
            request: Which request.
        """
        content = self.requests[request].contents[-1]
        found = []
        for part in content.parts or ():
            response = part.function_response
            if response is not None:
                found.append(
                    {"id": response.id, "name": response.name, "response": response.response}
                )
        return found
