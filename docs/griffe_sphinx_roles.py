"""A griffe extension for the API reference: Sphinx roles in docstrings become links.

The packages' docstrings are Google style, but name other objects the Sphinx way
(``:class:`toolmend.RetryPolicy```, ``:func:`execute```).  mkdocstrings would print
those roles as they are; this turns each into an optional cross-reference, the kind
mkdocstrings itself writes for type annotations: a link where the object is on the
site, plain code where it is not (an implementation module, a third-party class), so
the strict build never fails on one.  A relative name is resolved as Python would
resolve it in the docstring's scope (its members, its module's names and imports).
``mkdocs.yml`` loads this file by path; griffe only reads the packages, never imports
them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from griffe import Extension, Module, NameResolutionError, Object

ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|data|attr|exc|obj|const):`([~!]?)([^`<>]+)`")


def resolve(obj: Object, target: str) -> str:
    """The full path ``target`` names in ``obj``'s scope (as written when unknown)."""
    head, _, rest = target.partition(".")
    try:
        path = obj.resolve(head)
    except NameResolutionError:
        return target
    return f"{path}.{rest}" if rest else path


def link_roles(obj: Object, text: str) -> str:
    """``text`` with each Sphinx role replaced by an optional autorefs cross-reference."""

    def replace(match: re.Match[str]) -> str:
        prefix, target = match.group(1), match.group(2).strip()
        shown = target.rsplit(".", 1)[-1] if prefix == "~" else target
        identifier = resolve(obj, target)
        return f'<autoref identifier="{identifier}" optional><code>{shown}</code></autoref>'

    return ROLE.sub(replace, text)


def walk(obj: Object) -> Iterator[Object]:
    """``obj`` and everything defined in it (imported names are their own module's)."""
    yield obj
    for member in obj.members.values():
        if not member.is_alias and isinstance(member, Object):
            yield from walk(member)


class SphinxRoles(Extension):
    """Rewrite the roles of every docstring of a package once griffe has read all of it."""

    def on_package(self, *, pkg: Module, **kwargs: Any) -> None:
        """Rewrite the docstrings of ``pkg`` and of everything in it.

        Args:
            pkg: The package just read, with every module in it.
            **kwargs: What else griffe passes (unused).
        """
        for obj in walk(pkg):
            if obj.docstring is not None:
                obj.docstring.value = link_roles(obj, obj.docstring.value)
