"""Evaluation: does a delivery form help a given model recover?

The scenarios and their simulated tools (``_scenarios``), where replies come from
(``_backends``: the local engine or any OpenAI-compatible server), the run and its
scoring (``_evaluate``) and its outputs (``_results``).  Private: the way in is
``toolmend-engine eval``.
"""

__all__: list[str] = []
