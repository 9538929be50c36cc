"""The settings every wrapper of a tool server takes, read once and decided in one place.

An MCP client session and an Agents SDK MCP server are wrapped the same way:
effects declared by tool name, MCP annotations trusted or not, a retry policy
(``None``: never retry), outcome contracts and a delivery form.  Each adapter
accepts these as keyword arguments typed by :class:`RecoveryOptions` and turns
them into a :class:`Recovery`, so their defaults, their parsing and the rule
that decides a tool's effect are the core's, not each adapter's copy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

from .._types import Form
from ..contracts import Contracts
from ._effects import Effect, effect_from_mcp
from ._retry import RetryPolicy

__all__ = ["DEFAULT_RETRY", "Delegating", "Recovery", "RecoveryOptions"]

DEFAULT_RETRY = RetryPolicy()
"""The policy used when none is given (``retry=None`` means no automatic retry)."""


class RecoveryOptions(TypedDict, total=False):
    """The keyword arguments of a wrapped tool server, for ``**options: Unpack[...]``.

    Attributes:
        effects: Tool name to ``read_only``, ``idempotent``, ``write`` or
            ``unknown``; only read-only and idempotent tools are retried
            automatically, and an undeclared tool is handled as a write.
        trust_annotations: Let a tool's MCP annotations stand in for an
            undeclared effect; the spec calls them untrusted hints, so the
            default is ``False``.
        retry: The retry policy (default :data:`DEFAULT_RETRY`; ``None``: never).
        contracts: Outcome contracts for successful results.
        form: How guidance reaches the model (default C3).
    """

    effects: Mapping[str, Effect | str] | None
    trust_annotations: bool
    retry: RetryPolicy | None
    contracts: Contracts | None
    form: Form | str


@dataclass(frozen=True, slots=True)
class Recovery:
    """:class:`RecoveryOptions` parsed: effects as :class:`Effect`, a policy, a form.

    Attributes:
        effects: The declared effects, parsed (a typo is ``UNKNOWN``: a write).
        trust_annotations: Whether MCP annotations may stand in for a declaration.
        policy: The retry policy (``RetryPolicy.none()`` for ``retry=None``).
        contracts: The outcome contracts, if any.
        form: The delivery form.
    """

    effects: Mapping[str, Effect]
    trust_annotations: bool
    policy: RetryPolicy
    contracts: Contracts | None
    form: Form

    @classmethod
    def of(
        cls,
        *,
        effects: Mapping[str, Effect | str] | None = None,
        trust_annotations: bool = False,
        retry: RetryPolicy | None = DEFAULT_RETRY,
        contracts: Contracts | None = None,
        form: Form | str = Form.C3,
    ) -> Recovery:
        """Parse the options once, when the wrapper is built (a bad form raises here).

        Args:
            effects: See :class:`RecoveryOptions`.
            trust_annotations: See :class:`RecoveryOptions`.
            retry: See :class:`RecoveryOptions`.
            contracts: See :class:`RecoveryOptions`.
            form: See :class:`RecoveryOptions`.

        Returns:
            The parsed settings.

        Raises:
            ValueError: ``form`` names no delivery form.
        """
        return cls(
            effects={name: Effect.parse(value) for name, value in (effects or {}).items()},
            trust_annotations=trust_annotations,
            policy=retry if retry is not None else RetryPolicy.none(),
            contracts=contracts,
            form=Form.parse(form),
        )

    def effect(self, *names: str | None, annotations: Any = None) -> tuple[Effect, str]:
        """A tool's effect and where it came from; a declaration always wins over a hint.

        Args:
            *names: The names the tool is declared under (its own, and the name
                the model sees when a framework renames it); the first declared wins.
            annotations: The tool's MCP annotations, read only when trusted.

        Returns:
            ``(effect, source)`` with source ``declared``, ``annotations`` or
            ``default`` (neither: ``UNKNOWN``, handled as a write).
        """
        for name in names:
            if name is not None and name in self.effects:
                return self.effects[name], "declared"
        if self.trust_annotations:
            hinted = effect_from_mcp(annotations)
            if hinted is not Effect.UNKNOWN:
                return hinted, "annotations"
        return Effect.UNKNOWN, "default"


class Delegating:
    """A wrapper whose every attribute it does not define is the wrapped object's own.

    A recovering wrapper changes how tools are called and nothing else, so the
    host keeps using it as the object it wraps (listing tools, settings,
    sessions).  Dunder names are not forwarded: copying and pickling must see
    the wrapper, not reach into the wrapped object.

    Attributes:
        wrapped: The wrapped object (a client, session or server).
    """

    wrapped: Any

    def __getattr__(self, name: str) -> Any:
        """The wrapped object's attribute ``name`` (only called when ours has none)."""
        if name.startswith("__") or name == "wrapped":
            raise AttributeError(name)
        return getattr(self.wrapped, name)
