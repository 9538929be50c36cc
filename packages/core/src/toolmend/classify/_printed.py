"""Numeric codes that count only where their system prints them.

A database's error number or SQLSTATE is a bare number or five characters:
read anywhere, ``1146`` or ``42000`` would match ports, sizes and ids.  They
count only in the settings where the software that owns them writes them:

- SQLSTATE: psql's verbose ``ERROR:  42P01:``, MySQL's ``ERROR 1146 (42S02)``,
  PDO's ``SQLSTATE[42S02]``, JDBC's ``SQLState: 42P01``;
- MySQL and MariaDB error numbers: the client's ``ERROR 1146 (42S02)``, the
  Python drivers' ``(1146, "...")``, Go's ``Error 1146:``, phpMyAdmin's ``#1146 -``.

The meanings come from the code tables: ``codes/sqlstate.json`` (an exact code
first, then its class) and ``codes/mysql.json``, whose ``"match": "printed"``
keeps it out of the substring tables.  These readings run only when no word or
substring code decided, so they never change a verdict the words already give.
"""

from __future__ import annotations

import re

from .._types import Kind
from ._codes import table_named

__all__ = ["read_printed"]

_SQLSTATE_TABLE = table_named("sqlstate")
_MYSQL_TABLE = table_named("mysql")

_STATE = r"(?P<state>[0-9A-Z]{5})(?![0-9A-Za-z])"
_PAIRED = r"(?P<paired>[0-9A-Z]{5})"
_NUMBER = r"(?P<number>[1-4]\d{3})(?!\d)"
# Each pattern with the literal it starts with: a text without the literal costs
# one substring test.
_PATTERNS = (
    ("ERROR", re.compile(rf"ERROR(?::  {_STATE}:| {_NUMBER}(?: \({_PAIRED}\))?:? )")),
    ("Error ", re.compile(rf"Error {_NUMBER}(?: \({_STATE}\))?:? ")),
    (
        "SQL",
        re.compile(rf"SQL(?:STATE\[|STATE:? ?|State:? ?| state:? ?\[?|STATE ?= ?['\"]?){_STATE}"),
    ),
    ("#", re.compile(rf"#{_NUMBER} - ")),
)
# The Python drivers' ``(1146, "...")`` counts at the start or right after the
# exception's name (``ProgrammingError: (1146, ...``, SQLAlchemy's ``...Error) (1146,``).
_TUPLE = re.compile(rf"\({_NUMBER}, [\"']")
_TUPLE_AFTER = ("Error: ", "Error) ", "Error")


def _state_kind(state: str) -> Kind | None:
    codes = _SQLSTATE_TABLE.codes
    return codes.get(f"SQLSTATE {state}") or codes.get(f"SQLSTATE {state[:2]}")


def read_printed(text: str) -> tuple[Kind, str, str] | None:
    """The kind, the code and its table of the first printed code with a meaning.

    A MySQL number decides over the SQLSTATE printed beside it: the number is the
    finer reading.

    Args:
        text: The deciding region of an error text.
    """
    for literal, pattern in _PATTERNS:
        if literal not in text:
            continue
        match = pattern.search(text)
        while match is not None:
            found = _meaning(match)
            if found is not None:
                return found
            match = pattern.search(text, match.end())
    match = _TUPLE.search(text) if ", " in text else None
    while match is not None:
        start = match.start()
        if start == 0 or text.endswith(_TUPLE_AFTER, 0, start):
            found = _meaning(match)
            if found is not None:
                return found
        match = _TUPLE.search(text, match.end())
    return None


def _meaning(match: re.Match[str]) -> tuple[Kind, str, str] | None:
    groups = match.groupdict()
    number = groups.get("number")
    if number is not None:
        kind = _MYSQL_TABLE.codes.get(number)
        if kind is not None:
            return kind, f"MySQL {number}", _MYSQL_TABLE.name
    state = groups.get("state") or groups.get("paired")
    if state is not None:
        kind = _state_kind(state)
        if kind is not None:
            return kind, f"SQLSTATE {state}", _SQLSTATE_TABLE.name
    return None
