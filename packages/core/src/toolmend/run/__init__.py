"""Run: one tool call under a retry policy, returning its value or a failure.

What a tool does to the world (``_effects``) decides whether repeating it is safe;
the policy (``_retry``) decides when and how long to wait; the runner
(``_runner``) makes the attempts; a failure becomes a value (``_failure``) with its
attempts (``_attempts``) and one record per call (``_records``).  Around the call:
the loop guard (``_loop``), the fail-soft wrapper (``_wrapper``), malformed calls
(``_malformed``), per-run state for adapters serving many runs (``_registry``), the
options every tool-server wrapper takes (``_options``) and a tool's signature
(``_signature``).

Every module here is private: callers use :class:`toolmend.RetryPolicy`,
:func:`toolmend.fail_soft`, :class:`toolmend.LoopGuard` and the names
:mod:`toolmend.integrations` exports.
"""

__all__: list[str] = []
