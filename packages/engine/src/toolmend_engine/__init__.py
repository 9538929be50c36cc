"""Deterministic local inference with the toolmend recovery layer.

An OpenAI-compatible server and proxy that apply the layer, and the evaluation
that measures whether a delivery form helps a given model.  The command line
(``toolmend-engine serve | proxy | eval | render | info``) is the main way in;
these names are for embedding the same pieces in a program.
"""

from ._layer import HEADER, choose_form, header_value
from .http._proxy import make_proxy
from .http._server import make_server
from .inference._model import LocalModel, ModelSettings, Step, TopLogprob
from .inference._modelfile import default_model_path
from .inference._service import ChatEngine

__all__ = [
    "HEADER",
    "ChatEngine",
    "LocalModel",
    "ModelSettings",
    "Step",
    "TopLogprob",
    "choose_form",
    "default_model_path",
    "header_value",
    "make_proxy",
    "make_server",
]
