"""Inference: deterministic local generation on llama.cpp, one request at a time.

The model and its exact prefix cache (``_model``), the embedded model file
(``_modelfile``), the prompt template (``_template``), constrained decoding for
``tool_choice`` and response formats (``_constraints``), reading tool calls out of
generated text (``_toolcalls``) and one request through layer, render and generate
(``_service``).  Private: use :class:`toolmend_engine.LocalModel` and
:class:`toolmend_engine.ChatEngine`.
"""

__all__: list[str] = []
