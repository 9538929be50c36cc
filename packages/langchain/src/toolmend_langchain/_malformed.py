"""Malformed calls under ``create_agent``, answered with the core's fixable errors.

Malformed calls under ``create_agent``: a tool that does not exist, arguments that are
not a JSON object, arguments that break the tool's schema.

LangChain handles each its own way: ``ToolNode`` answers an unknown name with
its own text, a call whose arguments do not parse lands in
``AIMessage.invalid_tool_calls``, which ``create_agent`` never runs (the run
ends with no answer to it), and a schema error comes back as the text of a
pydantic error.  The core (:func:`toolmend.run._malformed.check_call`,
:meth:`toolmend.ToolFailure.invalid_arguments`) decides; this module translates.

At the model step, as soon as the model has answered (so every ``after_model``
hook, human review included, sees the mended message), each call is checked
against the tools the model was offered.  A call whose arguments the core
repaired moves into ``tool_calls`` with those arguments and runs.  A refused
call is answered in the same step with an error ``ToolMessage``; a refused
invalid call moves into ``tool_calls`` (arguments ``{}``) as well, so the
agent's own routing ("every call is answered: back to the model") continues the
run, and each call id is answered exactly once.  A ``jump_to`` written here
would not do: it lasts one step and is gone once any other middleware's
``after_model`` hook has run.

At the tool step, the arguments are validated with the tool's own pydantic
schema before it runs (:func:`schema_errors`), so the model reads which field is
wrong and the tool body never runs.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from langchain.agents.middleware.types import ModelRequest, ModelResponse
from langchain.agents.structured_output import AutoStrategy, ToolStrategy
from langchain_core.messages import AIMessage, InvalidToolCall, ToolCall, ToolMessage
from langchain_core.messages.tool import tool_call
from langchain_core.tools import BaseTool
from pydantic import BaseModel, ValidationError

from toolmend import Form
from toolmend.integrations import check_call, validation_details

from ._records import failure_message, record_of, with_record

__all__ = ["mend_response", "offered", "schema_errors"]

log = logging.getLogger("toolmend.langchain")


def _name_of(tool: Any) -> str | None:
    if isinstance(tool, BaseTool):
        return tool.name
    if isinstance(tool, Mapping):
        function = tool.get("function")
        name = function.get("name") if isinstance(function, Mapping) else tool.get("name")
        return name if isinstance(name, str) else None
    return None


def offered(tools: Sequence[Any]) -> dict[str, None] | None:
    """The tools the model was offered, by name; ``None`` when it was offered none.

    Schemas are not needed here: arguments are validated at the tool step, by
    the tool's own pydantic schema, which is what would accept or refuse them.
    """
    names = [name for name in map(_name_of, tools) if name is not None]
    return dict.fromkeys(names) if names else None


def _structured(response_format: Any) -> set[str]:
    """Names of the structured-output tools: the agent answers those calls itself."""
    if isinstance(response_format, AutoStrategy):
        response_format = ToolStrategy(schema=response_format.schema)
    if isinstance(response_format, ToolStrategy):
        return {spec.name for spec in response_format.schema_specs}
    return set()


@dataclasses.dataclass
class _Mending:
    """What checking one AI message's calls produced (filled in by :func:`_check`)."""

    calls: list[ToolCall] = dataclasses.field(default_factory=list)
    invalid: list[InvalidToolCall] = dataclasses.field(default_factory=list)
    answers: list[ToolMessage] = dataclasses.field(default_factory=list)
    repairs: list[dict[str, str]] = dataclasses.field(default_factory=list)
    moved: int = 0


def _check(
    message: AIMessage, tools: Mapping[str, None], answered: set[str], own: set[str], form: Form
) -> _Mending:
    """Check each call of ``message``.

    Check each call of ``message``; calls without an id, calls already ``answered``
    and calls to the agent's ``own`` tools stay as they are.
    """
    out = _Mending()
    for call in message.tool_calls:
        out.calls.append(call)
        call_id = call.get("id")
        if call_id is None or call_id in answered or call["name"] in own:
            continue
        check = check_call(call["name"], call["args"], tools, validate=False)
        if check.failure is not None:
            answer = failure_message(check.failure, call_id=call_id, name=call["name"], form=form)
            out.answers.append(answer)
    for bad in message.invalid_tool_calls:
        call_id, name = bad.get("id"), bad.get("name") or ""
        if call_id is None or call_id in answered or name in own:
            out.invalid.append(bad)
            continue
        check = check_call(name, bad.get("args"), tools, validate=False)
        out.calls.append(tool_call(name=name, args=check.arguments, id=call_id))
        out.moved += 1
        if check.failure is not None:
            out.answers.append(
                failure_message(check.failure, call_id=call_id, name=name, form=form)
            )
        elif check.repair is not None:
            out.repairs.append({"tool_call_id": call_id, "tool": name, "repair": check.repair})
    return out


def _mend(response: Any, request: ModelRequest[Any], form: Form) -> Any:
    whole = ModelResponse(result=[response]) if isinstance(response, AIMessage) else response
    tools = offered(request.tools)
    if not isinstance(whole, ModelResponse) or tools is None:
        return response
    result = list(whole.result)
    found_at = [i for i, m in enumerate(result) if isinstance(m, AIMessage)]
    if not found_at:
        return response
    index = found_at[-1]
    message = result[index]
    assert isinstance(message, AIMessage)
    # Calls the agent answered in this step (structured output) are its own.
    answered = {m.tool_call_id for m in result if isinstance(m, ToolMessage)}
    found = _check(message, tools, answered, _structured(request.response_format), form)
    if not found.answers and not found.moved:
        return response
    mended = message.model_copy(
        update={"tool_calls": found.calls, "invalid_tool_calls": found.invalid}
    )
    if found.repairs:
        mended = with_record(mended, {**(record_of(mended) or {}), "repaired": found.repairs})
    log.info(
        "toolmend.langchain: malformed calls: %d refused, %d repaired",
        len(found.answers), len(found.repairs),
    )  # fmt: skip
    result[index] = mended
    return dataclasses.replace(whole, result=[*result, *found.answers])


def mend_response(response: Any, request: ModelRequest[Any], form: Form) -> Any:
    """The model's response with its malformed calls repaired or answered; never raises."""
    try:
        return _mend(response, request, form)
    except Exception as exc:
        log.warning("toolmend.langchain: tool calls not understood (%r); left unchanged", exc)
        return response


def schema_errors(
    tool: Any, arguments: Mapping[str, Any], *, ignore: Collection[str] = ()
) -> str | None:
    """What the tool's own pydantic schema says is wrong with the model's arguments.

    ``None``: nothing, or no pydantic schema to ask.  The whole ``args_schema``
    is asked, so its validators count; only errors on the arguments the model
    writes (``tool_call_schema``) are kept, since injected ones (the call id,
    state, runtime) and ``ignore`` (an idempotency key) are added when the call
    runs.
    """
    if not isinstance(tool, BaseTool):
        return None
    schema = tool.args_schema
    if not (isinstance(schema, type) and issubclass(schema, BaseModel)):
        return None
    visible = tool.tool_call_schema
    fields = visible if isinstance(visible, type) and issubclass(visible, BaseModel) else schema
    names = set(fields.model_fields) - set(ignore)
    try:
        schema.model_validate(dict(arguments))
    except ValidationError as exc:
        return validation_details(exc, only=names) or None
    except Exception as exc:
        log.debug("toolmend.langchain: schema of %s raised %r; left to the tool", tool.name, exc)
    return None
