"""The input filter: deliver a failure to the model in the chosen form, for one turn.

``RunConfig.call_model_input_filter`` runs before every model call and what it
returns is seen by the model only: ``result.to_input_list()`` and sessions
keep the original items.  The core rewrites the Responses items at the
decision step, taking the verdicts the failure function recorded for this run
first and reading the text otherwise (tools without toolmend's failure
function, MCP error results).  The SDK allows one filter per run, so a
user's own filter is composed with ``then=`` and runs on our output.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from agents.run_config import CallModelData, ModelInputData

from toolmend import ContextPolicy, Form, rewrite
from toolmend.contracts import Contracts

from . import _report as report
from ._malformed import remember_agent
from ._runs import RUNS

__all__ = ["InputFilter", "input_filter"]

log = logging.getLogger("toolmend.openai_agents")

UserFilter = Callable[[CallModelData[Any]], "ModelInputData | Awaitable[ModelInputData]"]


class InputFilter:
    """A ``call_model_input_filter``; sync unless ``then`` is async. See :func:`input_filter`.

    Args:
        form: The delivery form.
        then: Your own filter, run after this one.
        contracts: The run's outcome contracts, which toolmend's tools read here.
        context: The core's policy for errors in context.
    """

    def __init__(
        self,
        form: Form | str = Form.C3,
        then: UserFilter | None = None,
        *,
        contracts: Contracts | None = None,
        context: ContextPolicy | None = None,
    ) -> None:
        self.form = Form.parse(form)
        self.then = then
        self.context = context
        """The core's policy for errors in context (collapse once resolved, pile-up, filter)."""
        self.contracts = contracts
        """The run's outcome contracts, which toolmend's ``function_tool`` tools read here."""

    def apply(self, data: ModelInputData) -> ModelInputData:
        """Our rewrite alone; never raises, returns ``data`` itself when nothing changes.

        Args:
            data: The model's input, as the SDK passes it.
        """
        try:
            items = data.input
            result = rewrite(
                items,
                self.form,
                format="responses",
                recorded=RUNS.recorded(list(items)),
                context=self.context,
            )
            report.rewritten(result.report)
            if not result.report.changed:
                return data
            return ModelInputData(input=list(result.messages), instructions=data.instructions)
        except Exception:
            log.exception("toolmend: input filter failed; model input left unchanged")
            return data

    def __call__(self, data: CallModelData[Any]) -> ModelInputData | Awaitable[ModelInputData]:
        """Our rewrite of the model input, then the user's filter on it."""
        remember_agent(data.agent, data.context)
        ours = self.apply(data.model_data)
        if self.then is None:
            return ours
        passed = CallModelData(model_data=ours, agent=data.agent, context=data.context)
        result = self.then(passed)
        if inspect.isawaitable(result):
            return _awaited(result)
        return result


async def _awaited(pending: Awaitable[ModelInputData]) -> ModelInputData:
    return await pending


def input_filter(
    form: Form | str = Form.C3,
    then: UserFilter | None = None,
    *,
    context: ContextPolicy | None = None,
) -> InputFilter:
    """A ``call_model_input_filter`` that applies ``form`` (default C3) at the decision step.

    With C3 the failed output stays as the tool returned it and a user item
    follows the tool outputs with the runtime note and the true next step;
    ``c1`` appends the step to the output, ``c2``/``c4`` replace the failed call
    with the note, ``off`` only reports.  ``then`` is your own filter, called
    with our result (sync or async).  ``context`` is the core's
    :class:`toolmend.ContextPolicy`: earlier failures collapsed once resolved,
    the pile-up note, the developer-step filter (default ``ContextPolicy()``).

    Args:
        form: The delivery form.
        then: Your own filter, run on our output.
        context: What happens to errors in context beyond the decision step.

    Returns:
        The filter.
    """
    return InputFilter(form, then, context=context)
