"""The recovery layer as the engine applies it: choose the form, rewrite, report.

Detection always runs and is recorded; rewriting happens only when a form is
chosen.  The form comes from the request field ``tool_errors``, else from the
server option, else it is ``off``.  The report goes to the response header
``X-Tool-Errors`` in the core's one-line form (``Report.header()``):

    failed=<index>:<tool>:<kind>:<rule>[/<basis>][,...]; form=<form>; changed=<true|false>
    [; neutralised=<n>][; collapsed=<n>]

``rule`` is the detection rule (``generic``, ``is_error``, an agent's rule) and
``basis`` the classification rule that chose the kind (``paper``, ``http``,
``code.slack``, ``envelope/code.slack``, ``user.quota``...; ``:`` becomes ``.``);
``failed=none`` when nothing failed; ``collapsed`` counts earlier failed results
shown as a one-line stub (the server's :class:`toolmend.ContextPolicy`).  The
value is printable ASCII on one line and at most ``HEADER_LIMIT`` characters:
tool names are reduced to ``[A-Za-z0-9_.-]`` and, when there are too many
failures to fit, the last ones are replaced by ``+N more``.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from typing import Any

import toolmend
from toolmend import ContextPolicy, Form
from toolmend.integrations import Report, Rewrite

__all__ = [
    "FORM_CHOICES",
    "HEADER",
    "HEADER_LIMIT",
    "apply_layer",
    "choose_form",
    "header_value",
    "parse_form",
]

log = logging.getLogger("toolmend.engine")

HEADER = "X-Tool-Errors"
HEADER_LIMIT = 1024
FORM_CHOICES = ("off", "c0", "c1", "c2", "c3", "c4")
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]")
_UNPRINTABLE = re.compile(r"[^\x20-\x7e]")
_UNSAFE_BASIS = re.compile(r"[^A-Za-z0-9_./-]")


def parse_form(value: object) -> Form:
    """A form from user input; ``ValueError`` names the accepted values."""
    if isinstance(value, str | Form):
        try:
            return Form.parse(value)
        except ValueError:
            pass
    raise ValueError(f"tool_errors must be one of {', '.join(FORM_CHOICES)}; got {value!r}")


def choose_form(requested: object, server: Form | None) -> Form:
    """The request's field wins over the server option, which wins over ``off``.

    Args:
        requested: The request's ``tool_errors`` field, if any.
        server: The server's default form.
    """
    if requested is not None:
        return parse_form(requested)
    return server if server is not None else Form.OFF


def apply_layer(
    messages: Any,
    form: Form,
    *,
    format: str,
    client: str | None,
    context: ContextPolicy | None = None,
) -> Rewrite:
    """Detect (always) and rewrite (when ``form`` is not off) the decision step.

    ``context`` is the core's policy for errors in context (collapse once
    resolved, the pile-up note, the developer-step filter); default ``ContextPolicy()``.
    """
    result = toolmend.rewrite(messages, form, format=format, client=client, context=context)
    if result.report.detections or result.report.skipped:
        log.info("toolmend-engine: %s", header_value(result.report))
    return result


def _rule(rule: str, basis: str | None) -> str:
    if not basis or basis == "none":
        return rule
    return f"{rule}/{_UNSAFE_BASIS.sub('_', basis.replace(':', '.'))}"


def _safe_report(report: Report) -> Report:
    detections = tuple(
        dataclasses.replace(
            d,
            tool_name=_UNSAFE_NAME.sub("_", d.tool_name) if d.tool_name else None,
            rule=_rule(d.rule, d.basis),
        )
        for d in report.detections
    )
    return dataclasses.replace(report, detections=detections)


def header_value(report: Report, limit: int = HEADER_LIMIT) -> str:
    """The ``X-Tool-Errors`` value for a report (format in the module doc).

    Args:
        report: The rewrite's report.
        limit: Characters the value may have at most.
    """
    safe = _safe_report(report)
    value = _UNPRINTABLE.sub("?", safe.header())
    if len(value) <= limit:
        return value
    total = len(safe.detections)
    for kept in range(total - 1, -1, -1):
        short = _UNPRINTABLE.sub(
            "?", dataclasses.replace(safe, detections=safe.detections[:kept]).header()
        )
        failed, rest = short.split("; form=", 1)
        more = f"+{total - kept} more"
        failed = f"{failed},{more}" if kept else f"failed={more}"
        value = f"{failed}; form={rest}"
        if len(value) <= limit:
            return value
    return value[:limit]
