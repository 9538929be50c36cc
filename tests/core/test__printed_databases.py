"""Database codes: published tables, and numbers that count only where they are printed.

Every text was produced on this machine by the real software (MariaDB 10.11.19 and
its ``mariadb`` 15.1 client, redis-server and redis-cli 7.0.15, DuckDB 2.0.1's
Python API with ``f"{type(exc).__name__}: {exc}"``) for a mistake a model makes.
Each case asserts the whole verdict: failed, kind, detection rule, basis, evidence.
"""

from __future__ import annotations

import pytest

import toolmend
from toolmend.classify._printed import read_printed

MARIADB = [
    (
        "ERROR 1146 (42S02) at line 1: Table 'shop.nope' doesn't exist",
        "fixable",
        "code:mysql",
        "MySQL 1146",
    ),
    (
        "ERROR 1064 (42000) at line 1: You have an error in your SQL syntax; check the manual"
        " that corresponds to your MariaDB server version for the right syntax to use near"
        " 'selec 1' at line 1",
        "fixable",
        "code:mysql",
        "MySQL 1064",
    ),
    (
        "ERROR 1049 (42000) at line 1: Unknown database 'nodb'",
        "fixable",
        "code:mysql",
        "MySQL 1049",
    ),
    (
        "ERROR 1048 (23000) at line 1: Column 'email' cannot be null",
        "fixable",
        "code:mysql",
        "MySQL 1048",
    ),
    (
        "ERROR 1366 (22007) at line 1: Incorrect integer value: 'x' for column"
        " `shop`.`users`.`id` at row 1",
        "fixable",
        "code:mysql",
        "MySQL 1366",
    ),
    (
        "ERROR 1364 (HY000) at line 1: Field 'email' doesn't have a default value",
        "fixable",
        "code:mysql",
        "MySQL 1364",
    ),
    # Words decide before a printed number does.
    (
        "ERROR 1054 (42S22) at line 1: Unknown column 'nam' in 'SELECT'",
        "fixable",
        "word",
        "nknown column",
    ),
    (
        "ERROR 1045 (28000): Access denied for user 'ghost'@'localhost' (using password: YES)",
        "unrecoverable",
        "paper",
        "ccess denied",
    ),
    # The client's 2002 (no server on that socket or port) is not in the table: a server
    # that is not running may never come.
    ("ERROR 2002 (HY000): Can't connect to server on '127.0.0.1' (115)", "ambiguous", "none", None),
]

REDIS = [
    (
        "WRONGTYPE Operation against a key holding the wrong kind of value",
        "fixable",
        "WRONGTYPE",
    ),
    (
        "ERR wrong number of arguments for 'get' command",
        "fixable",
        "ERR wrong number of arguments for",
    ),
    (
        "ERR value is not an integer or out of range",
        "fixable",
        "ERR value is not an integer or out of range",
    ),
    ("NOSCRIPT No matching script. Please use EVAL.", "fixable", "NOSCRIPT"),
    (
        "ERR unknown command 'foo', with args beginning with: 'bar' ",
        "fixable",
        "ERR unknown command",
    ),
    (
        "OOM command not allowed when used memory > 'maxmemory'.",
        "unrecoverable",
        "OOM command not allowed",
    ),
    ("NOAUTH Authentication required.", "unrecoverable", "NOAUTH"),
]

DUCKDB = [
    (
        "CatalogException: Catalog Error: Table with name nope does not exist!\nDid you mean"
        ' "pg_enum"?\n\nLINE 1: select * from nope\n                      ^^^^',
        "fixable",
        "code:duckdb",
        "Catalog Error:",
    ),
    (
        'BinderException: Binder Error: Referenced column "nam" not found in FROM clause!\n'
        'Candidate bindings: "email"\n\nLINE 1: select nam from users\n               ^^^',
        "fixable",
        "code:duckdb",
        "Binder Error:",
    ),
    (
        "ConversionException: Conversion Error: Could not convert string 'x' to INT32\n\n"
        "LINE 1: insert into users values ('x', 'a')\n                                  ^^^",
        "fixable",
        "code:duckdb",
        "Conversion Error:",
    ),
    # "Catalog Error" also says a name is taken: that stays ambiguous.
    (
        'CatalogException: Catalog Error: Table with name "users" already exists!',
        "ambiguous",
        "ambiguous",
        "already exists",
    ),
]


def _whole(verdict: toolmend.Verdict) -> tuple[object, ...]:
    kind = verdict.kind.value if verdict.kind else None
    return (verdict.failed, kind, verdict.rule, verdict.basis, verdict.reason)


@pytest.mark.parametrize(("text", "kind", "basis", "reason"), MARIADB)
@pytest.mark.parametrize(("flag", "rule"), [(True, "is_error"), (None, "generic")])
def test_mariadb_client_errors(
    text: str, kind: str, basis: str, reason: str | None, flag: bool | None, rule: str
) -> None:
    verdict = toolmend.classify_result(text, is_error=flag)
    assert _whole(verdict) == (True, kind, rule, basis, reason)


@pytest.mark.parametrize(("text", "kind", "reason"), REDIS)
@pytest.mark.parametrize(("flag", "rule"), [(True, "is_error"), (None, "generic")])
def test_redis_error_replies(
    text: str, kind: str, reason: str, flag: bool | None, rule: str
) -> None:
    verdict = toolmend.classify_result(text, is_error=flag)
    assert _whole(verdict) == (True, kind, rule, "code:redis", reason)


@pytest.mark.parametrize(("text", "kind", "basis", "reason"), DUCKDB)
def test_duckdb_errors(text: str, kind: str, basis: str, reason: str) -> None:
    verdict = toolmend.classify_result(text, is_error=None)
    assert _whole(verdict) == (True, kind, "generic", basis, reason)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # psql's verbose form, PDO, JDBC and the MySQL client print SQLSTATE in context.
        ("ERROR:  22012: division by zero", ("fixable", "SQLSTATE 22012", "sqlstate")),
        (
            "SQLSTATE[42S02]: Base table or view not found",
            ("fixable", "SQLSTATE 42S02", "sqlstate"),
        ),
        ("FATAL: SQLState: 28P01", ("unrecoverable", "SQLSTATE 28P01", "sqlstate")),
        (
            "ERROR 1290 (HY000): The MariaDB server is running with the --read-only option",
            ("unrecoverable", "MySQL 1290", "mysql"),
        ),
        (
            "ProgrammingError: (1146, \"Table 'shop.nope' doesn't exist\")",
            ("fixable", "MySQL 1146", "mysql"),
        ),
        ("Error 1213 (40001): Deadlock found", ("transient", "MySQL 1213", "mysql")),
        ("#1054 - Unknown column 'x' in 'field list'", ("fixable", "MySQL 1054", "mysql")),
        # A number where no system prints one is not a code.
        ("listening on port 1146 (42S02 is a test id)", None),
        ("Fetched (1146, 'rows')", None),
        (
            "(pymysql.err.ProgrammingError) (1146, \"Table 'a.b' doesn't exist\")",
            ("fixable", "MySQL 1146", "mysql"),
        ),
        ("took 1213 ms", None),
        ("ERROR 9999 (HY000): Unknown error", None),
    ],
)
def test_printed_codes_count_only_in_their_settings(
    text: str, expected: tuple[str, str, str] | None
) -> None:
    found = read_printed(text)
    assert (None if found is None else (found[0].value, found[1], found[2])) == expected
