"""A scripted ``FunctionModel`` that records exactly what each of its requests carried."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

Call = tuple[str, dict[str, Any]]


@dataclass
class Script:
    """Answers each model request with the next turn: tool calls, then a final text.

    The calls of turn ``n`` get the ids ``call_n_0``, ``call_n_1``...

    Attributes:
        turns: Each turn's tool calls (name, arguments); the last answer is ``done``.
        seen: The messages of every request the model received.
    """

    turns: Sequence[Sequence[Call]]
    seen: list[list[ModelMessage]] = field(default_factory=list)

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.seen.append(list(messages))
        # the turn is read from the conversation, not counted here: a durable run that is
        # recovered replays the model's earlier answers without asking this function again
        step = sum(isinstance(message, ModelResponse) for message in messages)
        if step >= len(self.turns):
            return ModelResponse(parts=[TextPart("done")])
        return ModelResponse(
            parts=[
                ToolCallPart(name, args, tool_call_id=f"call_{step}_{i}")
                for i, (name, args) in enumerate(self.turns[step])
            ]
        )

    @property
    def model(self) -> FunctionModel:
        return FunctionModel(self)

    def results(self, request: int) -> list[tuple[str, Any, str]]:
        """The tool results request ``request`` carried: (tool, content, outcome)."""
        last = self.seen[request][-1]
        assert isinstance(last, ModelRequest)
        return [
            (part.tool_name, part.content, part.outcome)
            for part in last.parts
            if isinstance(part, ToolReturnPart)
        ]
