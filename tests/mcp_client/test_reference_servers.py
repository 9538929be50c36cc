"""RecoveringSession on the reference MCP servers, run as real subprocesses over stdio,
on whichever MCP SDK line this environment has (./dev test runs both): the verdicts,
retries and notes on the servers' own error texts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp_sdk import is_error, open_connection

from reference_mcp import (
    BAD_TIMEZONE,
    FIXABLE,
    INVALID_SUM,
    MARS,
    NO_GET_TIME,
    PAGE,
    UNRECOVERABLE,
    Site,
    fetch_server,
    note,
    npm_server,
    outside,
    python_server,
    time_server,
)
from toolmend_mcp import RecoveringSession, findings_of


def _text(result: Any) -> str:
    [block] = result.content
    return str(block.text)


def _found(result: Any) -> dict[str, Any]:
    findings = findings_of(result)
    assert findings is not None
    return dict(findings)


async def test_time_server_mistakes_are_fixable_and_unknown_names_never_leave() -> None:
    async with open_connection(time_server()) as client:
        session = RecoveringSession(client)
        mars = await session.call_tool("get_current_time", {"timezone": "Mars/Olympus"})
        unknown = await session.call_tool("get_time", {"timezone": "UTC"})
        typed = await session.call_tool("get_current_time", {"timezone": 5})
        tokyo = await session.call_tool("get_current_time", {"timezone": "Asia/Tokyo"})
    assert _text(mars) == MARS
    found = _found(mars)
    assert (found["kind"], found["rule"], found["attempts"]) == ("fixable", "is_error", 1)
    assert found["note"] == note("get_current_time with timezone=Mars/Olympus", MARS, FIXABLE)
    assert (_text(unknown), _found(unknown)["rule"], _found(unknown)["attempts"]) == (
        NO_GET_TIME,
        "unknown-tool",
        0,
    )
    assert (_text(typed), _found(typed)["rule"]) == (BAD_TIMEZONE, "invalid-arguments")
    assert is_error(tokyo) is False
    assert '"timezone": "Asia/Tokyo"' in _text(tokyo)


async def test_fetch_server_503_is_retried_for_a_read_only_tool() -> None:
    with Site() as site:
        async with open_connection(fetch_server()) as client:
            session = RecoveringSession(client, effects={"fetch": "read_only"})
            result = await session.call_tool("fetch", {"url": f"{site.url}/flaky"})
            denied = await session.call_tool("fetch", {"url": f"{site.url}/denied"})
        hits = dict(site.hits)
    assert hits == {"/flaky": 2, "/denied": 1}
    assert is_error(result) is False
    assert _text(result).startswith(f"Contents of {site.url}/flaky:\n")
    found = _found(result)
    assert found["attempts"] == 2
    [earlier] = found["history"]
    assert earlier["error"] == (
        f"Error executing tool fetch: Failed to fetch {site.url}/flaky - status code 503"
    )
    forbidden = f"Error executing tool fetch: Failed to fetch {site.url}/denied - status code 403"
    assert _text(denied) == forbidden
    found = _found(denied)
    assert (found["kind"], found["attempts"]) == ("unrecoverable", 1)
    assert found["note"] == note(f"fetch with url={site.url}/denied", forbidden, UNRECOVERABLE)
    assert PAGE not in _text(denied)


async def test_git_server_answers_a_missing_repository_with_its_path_alone(
    tmp_path: Path,
) -> None:
    missing = tmp_path / "not-a-repo"
    missing.mkdir()
    async with open_connection(python_server("mcp-server-git")) as client:
        session = RecoveringSession(client, effects={"git_status": "read_only"})
        result = await session.call_tool("git_status", {"repo_path": str(missing)})
    assert _text(result) == f"Error executing tool git_status: {missing}"
    found = _found(result)
    # Only a path: no guidance (wrong guidance costs more than none), no retry.
    assert (found["kind"], found["guidance"], found["note"], found["attempts"]) == (
        "ambiguous",
        None,
        None,
        1,
    )


async def test_filesystem_server_refusal_is_unrecoverable(tmp_path: Path) -> None:
    allowed = tmp_path / "files"
    allowed.mkdir()
    async with open_connection(npm_server("server-filesystem", str(allowed))) as client:
        session = RecoveringSession(client)
        result = await session.call_tool("read_text_file", {"path": "/etc/passwd"})
        again = await session.call_tool("read_text_file", {"path": "/etc/passwd"})
    refused = outside("/etc/passwd", allowed)
    assert _text(result) == refused
    found = _found(result)
    assert (found["kind"], found["attempts"]) == ("unrecoverable", 1)
    assert found["note"] == note("read_text_file with path=/etc/passwd", refused, UNRECOVERABLE)
    assert _text(again) == (
        "Tool 'read_text_file' was not run: this exact call already failed in this task. "
        f"The earlier error: {refused}"
    )


async def test_everything_server_schema_errors_are_caught_before_sending() -> None:
    async with open_connection(npm_server("server-everything")) as client:
        session = RecoveringSession(client)
        warm = await session.call_tool("echo", {"message": "hi"})
        empty = await session.call_tool("echo", {})
        typed = await session.call_tool("get-sum", {"a": "one", "b": 2})
        unchecked = RecoveringSession(client, malformed_calls=False)
        server_says = await unchecked.call_tool("get-sum", {"a": "one", "b": 2})
    assert _text(warm) == "Echo: hi"
    assert _text(empty) == (
        "Tool 'echo' was not run: invalid arguments. message: 'message' is a required property"
    )
    assert _text(typed) == (
        "Tool 'get-sum' was not run: invalid arguments. a: 'one' is not of type 'number'"
    )
    assert (_found(typed)["kind"], _found(typed)["attempts"]) == ("fixable", 0)
    assert _text(server_says) == INVALID_SUM
    assert (_found(server_says)["kind"], _found(server_says)["attempts"]) == ("fixable", 1)
