"""toolmend's verdict in Pydantic AI's vocabulary: ``ModelRetry``, ``ToolFailed``.

Pydantic AI gives a tool two ways to tell the model something went wrong, and
each costs differently.  ``ModelRetry`` answers the call with a *retried*
result ("fix the errors and try again") and spends one of the tool's retries;
when they run out the whole run ends.  ``ToolFailed`` answers it with a
*failed* result the model reads and adapts to, spending nothing.  So only a
failure the model can fix by changing the call is a ``ModelRetry``; everything
else (unrecoverable, transient after toolmend's own retries, a write whose
outcome is unknown, a call the loop guard refused) is a ``ToolFailed``, whose
text carries the true cause and the core's next step.
"""

from __future__ import annotations

from pydantic_ai import ModelRetry, ToolFailed

from toolmend import Form, Kind, ToolFailure
from toolmend.integrations import compose_note

__all__ = ["delivered", "message"]


def message(failure: ToolFailure, form: Form) -> str:
    """The text the model reads for ``failure`` in ``form``.

    In the note's forms (C2-C4) the runtime note, which quotes the tool's own
    words and ends with the next step, *is* the tool result: Pydantic AI has no
    channel beside the result for the runtime to speak in.  C1 is the cause
    then the guidance; ``off`` the cause alone.

    Args:
        failure: The failure, as the core decided it.
        form: The delivery form.
    """
    if form is Form.OFF or failure.guidance is None:
        return failure.cause
    if form is Form.C1:
        return failure.result_text(Form.C1)
    return compose_note(failure.tool, failure.arguments, failure.cause, failure.guidance).text


def delivered(failure: ToolFailure, form: Form) -> ModelRetry | ToolFailed:
    """The exception that delivers ``failure`` to the model, to be raised.

    A fixable failure of a call that ran is a ``ModelRetry``: the model should
    correct the call, and Pydantic AI counts it against the tool's retries.  A
    call refused before it ran (the loop guard) is never one, fixable or not:
    charging a refusal would let a model that repeats itself end the run.

    Args:
        failure: The failure, as the core decided it.
        form: The delivery form.
    """
    text = message(failure, form)
    if failure.kind is Kind.FIXABLE and failure.attempts > 0:
        return ModelRetry(text)
    return ToolFailed(text)
