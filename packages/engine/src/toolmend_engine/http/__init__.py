"""HTTP: the OpenAI-compatible server and the proxy, on the standard library alone.

Shared plumbing and limits (``_base``), the request error and the provider error
bodies it becomes (``_errors``), strict request checks (``_validation``), Chat
Completions and Anthropic Messages requests (``_requests``) and replies
(``_replies``), the OpenAI Responses API's requests (``_responses_request``) and
replies (``_responses_reply``), the server (``_server``) and the proxy
(``_proxy``).  Private: use :func:`toolmend_engine.make_server` and
:func:`toolmend_engine.make_proxy`.
"""

__all__: list[str] = []
