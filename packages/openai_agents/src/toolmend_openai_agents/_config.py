"""``run_config``: the one line that turns toolmend on for a run."""

from __future__ import annotations

from typing import Any

from agents import RunConfig

from toolmend import ContextPolicy, Effect, Form
from toolmend.contracts import Contracts

from ._failure import tool_error_formatter
from ._filter import InputFilter

__all__ = ["run_config"]


def run_config(
    *,
    form: Form | str = Form.C3,
    effect: Effect | str = Effect.UNKNOWN,
    contracts: Contracts | None = None,
    malformed_calls: bool = True,
    context: ContextPolicy | None = None,
    **kwargs: Any,
) -> RunConfig:
    """A ``RunConfig`` with toolmend's input filter, built from your own settings.

    ``Runner.run(agent, input, run_config=run_config())``.  Your own
    ``call_model_input_filter`` runs after ours, on our result.  Unless you set
    a ``tool_error_formatter``, plain ``agents.function_tool`` tools left on the
    SDK's default failure function also show the model the true cause, with
    ``effect`` assumed for them (undeclared = write).  ``contracts`` are the
    outcome contracts that toolmend's ``function_tool`` tools without their
    own check their successful results against in this run.  With
    ``malformed_calls`` (the default), a call to a tool the agent does not have
    is answered with a fixable error naming the agent's tools instead of ending
    the run (``tool_not_found_behavior`` you set yourself wins); ``False`` keeps
    the SDK's behaviour.  ``context`` (:class:`toolmend.ContextPolicy`) says
    what the model's input does with errors in context: collapse them once
    resolved, the pile-up note, the developer-step filter.

    Args:
        form: The delivery form (default C3).
        effect: The effect assumed for plain ``agents.function_tool`` tools.
        contracts: The run's outcome contracts.
        malformed_calls: Answer calls to unknown tools with a fixable error.
        context: What happens to errors in context beyond the decision step.
        **kwargs: Your own ``RunConfig`` settings.

    Returns:
        The ``RunConfig``.
    """
    if malformed_calls:
        kwargs.setdefault("tool_not_found_behavior", "return_error_to_model")
    kwargs["call_model_input_filter"] = InputFilter(
        form, then=kwargs.get("call_model_input_filter"), contracts=contracts, context=context
    )
    if kwargs.get("tool_error_formatter") is None:
        kwargs["tool_error_formatter"] = tool_error_formatter(
            form, effect=effect, malformed_calls=malformed_calls
        )
    return RunConfig(**kwargs)
