"""Fixtures: one real model per session (tests marked ``engine``), fakes for the rest."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def model() -> Iterator[Any]:
    """The embedded SmolLM2-135M, loaded once for every test that needs it."""
    pytest.importorskip("llama_cpp")
    from toolmend_engine.inference import LocalModel
    from toolmend_engine.modelfile import default_model_path

    loaded = LocalModel(default_model_path())
    yield loaded
    loaded.close()
