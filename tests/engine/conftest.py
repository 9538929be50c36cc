"""Fixtures: one real model per session (tests marked ``engine``), fakes for the rest."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import openai
import pytest
from engine_fakes import FakeModel, echo_or_call, running

from toolmend_engine import ChatEngine, make_server


@pytest.fixture(scope="session")
def model() -> Iterator[Any]:
    """The embedded SmolLM2-135M, loaded once for every test that needs it."""
    pytest.importorskip("llama_cpp")
    from toolmend_engine import LocalModel, default_model_path

    loaded = LocalModel(default_model_path())
    yield loaded
    loaded.close()


@pytest.fixture
def fake() -> FakeModel:
    """A scripted model that echoes, or calls a tool when the prompt asks for one."""
    return FakeModel(echo_or_call)


@pytest.fixture
def base(fake: FakeModel) -> Iterator[str]:
    """A live ``serve`` on loopback over the fake model; modules may override it."""
    with running(make_server(ChatEngine(fake), port=0)) as url:
        yield url


@pytest.fixture
def client(base: str) -> openai.OpenAI:
    """The official client against ``base``, in strict response validation."""
    return openai.OpenAI(
        base_url=base + "/v1", api_key="unused", max_retries=0, _strict_response_validation=True
    )
