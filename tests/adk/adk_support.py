"""Run an ADK agent on the real ``InMemoryRunner`` with a scripted model."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.runners import InMemoryRunner
from google.genai import types

from toolmend import Kind
from toolmend.integrations import GUIDANCE, VERIFY_FIRST
from toolmend_adk.testing import ScriptedLlm

TRANSIENT = GUIDANCE[Kind.TRANSIENT]
FIXABLE = GUIDANCE[Kind.FIXABLE]
UNRECOVERABLE = GUIDANCE[Kind.UNRECOVERABLE]
__all__ = ["FIXABLE", "TRANSIENT", "UNRECOVERABLE", "VERIFY_FIRST", "arun_agent", "run_agent"]


async def arun_agent(
    tools: Sequence[Any], script: list[LlmResponse], plugins: Sequence[BasePlugin] = ()
) -> ScriptedLlm:
    """Run one user turn through ``InMemoryRunner``; the model, with every request it got."""
    model = ScriptedLlm(script=script)
    agent = LlmAgent(name="assistant", model=model, tools=list(tools))
    runner = InMemoryRunner(app=App(name="toolmend_test", root_agent=agent, plugins=list(plugins)))
    session = await runner.session_service.create_session(app_name=runner.app_name, user_id="u")
    message = types.Content(role="user", parts=[types.Part(text="Please help.")])
    try:
        async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=message):
            pass
    finally:
        await runner.close()
    return model


def run_agent(
    tools: Sequence[Any], script: list[LlmResponse], plugins: Sequence[BasePlugin] = ()
) -> ScriptedLlm:
    """:func:`arun_agent`, from sync code."""
    return asyncio.run(arun_agent(tools, script, plugins))
