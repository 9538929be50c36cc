"""Arguments that fail a tool's schema: the core's fixable failure, not Pydantic's error dump.

Pydantic AI validates a call's arguments before the toolset sees the call, with
the validator the toolset handed over in ``get_tools``.  Stock, a failure reaches
the model as the raw list of Pydantic errors.  The wrapper hands over this
validator instead: it validates exactly as the tool's own does, and turns a
``ValidationError`` into a ``ModelRetry`` carrying the core's text (which
argument, what was expected, what was sent, and that nothing ran).  It stays a
``ModelRetry``, so it counts against the tool's retries as before.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError
from pydantic_ai import ModelRetry
from pydantic_ai.toolsets.abstract import SchemaValidatorProt
from pydantic_core import SchemaValidator

from toolmend import Form, ToolFailure
from toolmend.integrations import argument_errors, parse_arguments, validation_details

from ._delivery import message

__all__ = ["CheckedArguments"]


@dataclass(frozen=True, slots=True)
class CheckedArguments:
    """A tool's argument validator whose failures read as the core's fixable failure.

    Attributes:
        tool: The tool's name, as the model called it.
        inner: The tool's own validator.
        form: The delivery form.
        schema: The input schema to check the validated arguments against (``None``:
            the tool's own validator is the whole check).
    """

    tool: str
    inner: SchemaValidator | SchemaValidatorProt
    form: Form
    schema: Mapping[str, Any] | None = None

    def _checked(self, validated: Any) -> Any:
        if self.schema is None or not isinstance(validated, Mapping):
            return validated
        details = argument_errors(self.schema, validated)
        if details is None:
            return validated
        failure = ToolFailure.invalid_arguments(self.tool, dict(validated), details)
        raise ModelRetry(message(failure, self.form))

    def _refused(self, raw: Any, error: ValidationError) -> ModelRetry:
        parsed = parse_arguments(raw, repair=False).value
        arguments = parsed if isinstance(parsed, dict) else {}
        details = validation_details(error) or "they do not match the tool's parameters"
        failure = ToolFailure.invalid_arguments(self.tool, arguments, details)
        return ModelRetry(message(failure, self.form))

    def _validated(self, validate: Callable[..., Any], input: Any, kwargs: dict[str, Any]) -> Any:
        try:
            validated = validate(input, **kwargs)
        except ValidationError as error:
            raise self._refused(input, error) from error
        return self._checked(validated)

    def validate_json(self, input: str | bytes | bytearray, **kwargs: Any) -> Any:
        """The tool's own JSON validation; a failure is raised as ``ModelRetry``.

        Args:
            input: The arguments as the model wrote them.
            **kwargs: As Pydantic AI passes them.
        """
        return self._validated(self.inner.validate_json, input, kwargs)

    def validate_python(self, input: Any, **kwargs: Any) -> Any:
        """The tool's own validation of parsed arguments; a failure is raised as ``ModelRetry``.

        Args:
            input: The arguments as the model wrote them.
            **kwargs: As Pydantic AI passes them.
        """
        return self._validated(self.inner.validate_python, input, kwargs)
