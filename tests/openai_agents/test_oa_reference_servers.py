"""The Agents SDK path on the reference MCP servers, run as real subprocesses:
``RecoveringServer`` around the SDK's own ``MCPServerStdio``, a scripted model, and
the servers' own error texts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agents import Agent, Runner
from agents.mcp import MCPServerStdio
from agents.testing import ScriptedModel, assistant_message, function_call
from mcp.client.stdio import StdioServerParameters
from oa_support import call_item, config, note, output_item, user

import toolmend_openai_agents as tm
from reference_mcp import (
    FIXABLE,
    INVALID_SUM,
    MARS,
    NO_GET_TIME,
    UNRECOVERABLE,
    Site,
    fetch_server,
    npm_server,
    outside,
    python_server,
    time_server,
)
from reference_mcp import note as runtime_note


def _stdio(params: StdioServerParameters) -> MCPServerStdio:
    return MCPServerStdio(
        {"command": params.command, "args": list(params.args)}, client_session_timeout_seconds=30
    )


def text(value: str) -> list[dict[str, str]]:
    return [{"type": "input_text", "text": value}]


async def _run(
    server: tm.RecoveringServer, turns: list[list[Any]]
) -> tuple[ScriptedModel, tm.Captured]:
    model = ScriptedModel([*turns, [assistant_message("done")]])
    async with server:
        agent = Agent(name="helper", model=model, mcp_servers=[server])
        with tm.capture() as captured:
            await Runner.run(agent, "go", run_config=config())
    return model, captured


async def test_time_server_mistakes_reach_the_model_as_fixable_and_the_run_goes_on() -> None:
    server = tm.RecoveringServer(_stdio(time_server()))
    model, captured = await _run(
        server,
        [
            [function_call("get_current_time", {"timezone": "Mars/Olympus"}, call_id="c1")],
            [function_call("get_time", {"timezone": "UTC"}, call_id="c2")],
        ],
    )
    assert model.calls[1].input == [
        user("go"),
        call_item("get_current_time", {"timezone": "Mars/Olympus"}, "c1"),
        output_item("c1", text(MARS)),
        note(runtime_note("get_current_time with timezone=Mars/Olympus", MARS, FIXABLE)),
    ]
    assert model.calls[2].input[-2:] == [
        output_item("c2", NO_GET_TIME),
        note(runtime_note("get_time with timezone=UTC", NO_GET_TIME, FIXABLE)),
    ]
    assert [(f.call_id, f.kind, f.rule) for f in captured.failures] == [
        ("c1", "fixable", "is_error"),
        ("c2", "fixable", "unknown-tool"),
    ]


async def test_fetch_server_503_is_retried_for_a_read_only_tool() -> None:
    with Site() as site:
        server = tm.RecoveringServer(_stdio(fetch_server()), effects={"fetch": "read_only"})
        url = f"{site.url}/flaky"
        model, captured = await _run(server, [[function_call("fetch", {"url": url}, call_id="c1")]])
        hits = dict(site.hits)
    assert hits == {"/flaky": 2}
    [output] = model.calls[1].input[2:]
    assert output["output"][0]["text"].startswith(f"Contents of {url}:\n")
    assert [(r.tool, r.attempts) for r in captured.retries] == [("fetch", 2)]
    assert captured.failures == ()


async def test_filesystem_server_refusal_is_unrecoverable(tmp_path: Path) -> None:
    allowed = tmp_path / "files"
    allowed.mkdir()
    server = tm.RecoveringServer(_stdio(npm_server("server-filesystem", str(allowed))))
    model, _ = await _run(
        server, [[function_call("read_text_file", {"path": "/etc/passwd"}, call_id="c1")]]
    )
    refused = outside("/etc/passwd", allowed)
    assert model.calls[1].input[2:] == [
        output_item("c1", text(refused)),
        note(runtime_note("read_text_file with path=/etc/passwd", refused, UNRECOVERABLE)),
    ]


async def test_git_and_everything_servers_errors_in_their_own_words(tmp_path: Path) -> None:
    missing = tmp_path / "not-a-repo"
    missing.mkdir()
    git = tm.RecoveringServer(
        _stdio(python_server("mcp-server-git")), effects={"git_status": "read_only"}
    )
    model, captured = await _run(
        git, [[function_call("git_status", {"repo_path": str(missing)}, call_id="c1")]]
    )
    assert model.calls[1].input[2:] == [
        output_item("c1", text(f"Error executing tool git_status: {missing}"))
    ]
    [failure] = captured.failures
    assert (failure.kind, failure.guidance) == ("ambiguous", None)

    everything = tm.RecoveringServer(_stdio(npm_server("server-everything")))
    model, captured = await _run(
        everything, [[function_call("get-sum", {"a": "one", "b": 2}, call_id="c1")]]
    )
    assert model.calls[1].input[2:] == [
        output_item("c1", text(INVALID_SUM)),
        note(runtime_note("get-sum with a=one, b=2", INVALID_SUM, FIXABLE)),
    ]
    [failure] = captured.failures
    assert (failure.kind, failure.attempts) == ("fixable", 1)
