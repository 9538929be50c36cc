"""Classify: is a tool result a failure, and what kind (transient, fixable, unrecoverable)?

Pure functions over the result's text, its structure and the exception raised: the
paper's words and wider wording (``_words``), published code tables (``_codes`` and
its ``codes/`` data), structured error bodies (``_envelope``), numbers printed by
their own system (``_printed``), the argument an error names (``_arguments``), the
user's own rules (``_rules``), raised exceptions (``_raised``), and the decision that
puts them together for one tool result (``_detect``).

Every module here is private: callers use :func:`toolmend.classify_result`,
:func:`toolmend.classify_exception` and the names :mod:`toolmend.integrations`
exports.  Nothing here imports from ``deliver`` or ``run``.
"""

__all__: list[str] = []
