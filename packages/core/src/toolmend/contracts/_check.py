"""Check one tool result against its contract: ``(tool, arguments, result) -> violations``.

Deterministic and local: no model call, no tool call, nothing waits.  A result
the checker cannot read yields no violations rather than an exception, because
the middleware must never make an agent's turn worse than it was.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from typing import Any

from .. import telemetry
from ._contract import ORDER, Code, Contracts, ToolContract, Violation
from ._schema import validate
from ._values import (
    MAX_DEPTH,
    MAX_ITEMS,
    ROOT,
    cap,
    child,
    element,
    error_fields,
    is_number,
    looks_failed,
    parse_arguments,
    parse_result,
    type_name,
)

__all__ = ["check", "check_contract"]

log = logging.getLogger("toolmend.contracts")


def check(
    contracts: Contracts | None, tool: str, arguments: Any, result: Any
) -> tuple[Violation, ...]:
    """The violations of ``result`` against ``tool``'s contract; empty when clean or unknown.

    Args:
        contracts: The contracts (``None``: nothing to check).
        tool: The tool's name.
        arguments: The call's arguments, which echoes compare with.
        result: The result: a text or a JSON value.
    """
    try:
        if contracts is None:
            return ()
        contract = contracts.tools.get(tool)
        if contract is None:
            return ()
        found = check_contract(contract, arguments, result, tolerance=contracts.tolerance)
    except Exception:
        log.warning("toolmend.contracts: could not check a result of %s", tool, exc_info=True)
        return ()
    for v in found:
        log.info(
            "toolmend.contracts: %s violated %s at %s: %s",
            tool, v.code.value, v.path, v.detail,
        )  # fmt: skip
    telemetry.contract_violations(tool, found)
    return found


def check_contract(
    contract: ToolContract, arguments: Any, result: Any, *, tolerance: float = 1e-5
) -> tuple[Violation, ...]:
    """``check`` for one contract, without the logging and the safety net."""
    value, text = parse_result(result)
    walker = _Walker(contract)
    if contract.error_free:
        walker.errors(value, text)
    if contract.schema is not None:
        walker.found.extend(validate(contract.schema, value, contract.tool))
    flat: dict[str, Any] = {}
    walker.walk(value, ROOT, ROOT, 0, flat)
    walker.echoes(parse_arguments(arguments), flat)
    walker.affine(flat, tolerance)
    return tuple(sorted(walker.found, key=lambda v: ORDER[v.code]))


class _Walker:
    __slots__ = ("contract", "found", "tool")

    def __init__(self, contract: ToolContract) -> None:
        self.contract = contract
        self.tool = contract.tool
        self.found: list[Violation] = []

    def add(self, code: Code, path: str, expected: Any, observed: Any, detail: str) -> None:
        self.found.append(Violation(code, path, expected, cap(observed), detail, self.tool))

    def errors(self, value: Any, text: bool) -> None:
        if text:
            if isinstance(value, str) and looks_failed(value):
                self.add(
                    Code.EXPLICIT_ERROR,
                    ROOT,
                    "a result without an error",
                    value,
                    "the result text is an error message or error page",
                )
            return
        fields = error_fields(value)
        if fields:
            names = ", ".join(p for p, _ in fields)
            path, observed = fields[0]
            self.add(
                Code.EXPLICIT_ERROR,
                path,
                "absent or empty",
                observed,
                f"error-bearing field(s): {names}",
            )

    def walk(
        self, value: Any, path: str, where: str, depth: int, flat: dict[str, Any] | None
    ) -> None:
        c = self.contract
        kind = type_name(value)
        expected = c.types.get(path)
        if expected is not None and kind not in expected and not _compatible(kind, value, expected):
            self.add(
                Code.LEARNED_TYPE_MISMATCH,
                where,
                sorted(expected),
                kind,
                f"field {where} has unexpected type",
            )
            if kind == "object" or kind == "array":
                return
        if kind == "object":
            self._object(value, path, where, depth, flat)
        elif kind == "array":
            if depth < MAX_DEPTH:
                inner = element(path)
                for index, item in enumerate(value[:MAX_ITEMS]):
                    self.walk(item, inner, f"{where}[{index}]", depth + 1, None)
        elif kind == "string":
            domain = c.domains.get(path)
            if domain is not None and value not in domain:
                self.add(
                    Code.UNSEEN_CATEGORY,
                    where,
                    sorted(domain),
                    value,
                    f"field {where} has unseen categorical value",
                )
            if flat is not None:
                flat[path] = value
        elif kind == "integer" or kind == "number":
            if path in c.positive and not value > 0:
                self.add(
                    Code.NONPOSITIVE_VALUE,
                    where,
                    "> 0",
                    value,
                    f"nominally positive field {where} is not positive",
                )
            if flat is not None:
                flat[path] = value

    def _object(
        self,
        value: Mapping[Any, Any],
        path: str,
        where: str,
        depth: int,
        flat: dict[str, Any] | None,
    ) -> None:
        rule = self.contract.objects.get(path)
        keys = value.keys()
        names = keys if all(type(k) is str for k in keys) else {str(k): 0 for k in keys}.keys()
        if rule is not None:
            if not rule.required <= names:
                for key in sorted(rule.required.difference(names)):
                    at = child(where, key)
                    self.add(
                        Code.MISSING_LEARNED_FIELD,
                        at,
                        "present",
                        "absent",
                        f"missing nominal field {at}",
                    )
            if rule.allowed is not None and not names <= rule.allowed:
                for key, item in zip(names, value.values(), strict=True):
                    if key not in rule.allowed:
                        at = child(where, key)
                        self.add(
                            Code.UNEXPECTED_FIELD,
                            at,
                            "absent",
                            item,
                            f"field absent from nominal traces: {at}",
                        )
        if depth < MAX_DEPTH:
            same = where is path
            for key, item in zip(names, value.values(), strict=True):
                inner = child(path, key)
                self.walk(item, inner, inner if same else child(where, key), depth + 1, flat)

    def echoes(self, arguments: Mapping[str, Any], flat: Mapping[str, Any]) -> None:
        for e in self.contract.echoes:
            observed = flat.get(e.path)
            argument = arguments.get(e.argument)
            if observed is None or argument is None:
                continue
            if not (isinstance(argument, str) or is_number(argument)):
                continue
            if _same(observed, argument, e.fold_case):
                continue
            self.add(
                Code.LEARNED_ECHO_MISMATCH,
                e.path,
                cap(argument),
                observed,
                f"field {e.path} differs from call argument {e.argument}",
            )

    def affine(self, flat: Mapping[str, Any], tolerance: float) -> None:
        for a in self.contract.affine:
            target: Any = flat.get(a.target)
            if not is_number(target):
                continue
            terms: list[float] = []
            for path, coefficient in a.terms:
                x: Any = flat.get(path)
                if not is_number(x):
                    break
                terms.append(coefficient * float(x))
            else:
                predicted = a.intercept + sum(terms)
                scale = max(1.0, abs(target), abs(a.intercept), *(abs(t) for t in terms))
                if not abs(float(target) - predicted) <= tolerance * scale:
                    fields = ", ".join([a.target, *(p for p, _ in a.terms)])
                    self.add(
                        Code.AFFINE_RELATION_BROKEN,
                        a.target,
                        _round(predicted),
                        target,
                        f"fields {fields} violate a nominal relation ({a.formula()})",
                    )


def _compatible(kind: str, value: Any, expected: frozenset[str]) -> bool:
    """An integer is a number; a whole float is an integer (JSON writers differ on ``1.0``)."""
    if kind == "integer":
        return "number" in expected
    if kind == "number":
        return "integer" in expected and math.isfinite(value) and float(value).is_integer()
    return False


def _same(observed: Any, argument: Any, fold_case: bool) -> bool:
    if is_number(observed) and is_number(argument):
        return bool(observed == argument)
    if isinstance(observed, str) and isinstance(argument, str):
        return observed.casefold() == argument.casefold() if fold_case else observed == argument
    return False


def _round(value: float) -> float:
    return round(value, 10) if math.isfinite(value) else value
