"""Deliver: what the model reads about a failure, and where in the conversation.

The delivery forms C1-C4 (``_forms``), the guidance sentences and the runtime
note (``_guidance``), the quoting that keeps untrusted tool text from passing for
our framing (``_quote``), the provider message formats (``_codecs``), and the
policies for errors already in context: collapse once resolved, count a pile-up,
leave out steps meant for a developer (``_context``, ``_pileup``, ``_actionable``).

Every module here is private: callers use :func:`toolmend.rewrite`,
:class:`toolmend.ContextPolicy` and the names :mod:`toolmend.integrations` exports.
Delivery reads verdicts from ``classify``; it never runs a tool.
"""

__all__: list[str] = []
