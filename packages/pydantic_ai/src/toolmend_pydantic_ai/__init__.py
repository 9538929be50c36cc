"""toolmend for Pydantic AI: a toolset wrapper whose tool calls recover.

``Agent(model, toolsets=[RecoveringToolset(toolset, effects={...})])``: each call
runs under toolmend's core (safe retries, classification, the loop guard,
outcome contracts, telemetry), and a failure reaches the model as Pydantic AI
delivers tool feedback: ``ModelRetry`` when the model can fix the call,
``ToolFailed`` otherwise, both with the true cause and the next step.
"""

from ._toolset import RecoveringToolset, Verify, idempotency_key

__all__ = ["RecoveringToolset", "Verify", "idempotency_key"]
