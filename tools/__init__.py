"""Development tools the benchmarks and tests share: importable, never published.

``split`` deals the real-world corpus into train, dev and test; ``generate_corpus``
records the library corpus from real libraries; ``pg_cluster`` starts a throwaway
PostgreSQL on loopback; ``engine_process`` starts ``toolmend-engine serve`` or ``proxy``
on loopback; ``example_headers`` reads what each example's header says to install and
run.  ``./dev python`` and pytest put the repository root on the
path, so ``from tools import split`` works from a benchmark, a test or the shell.
"""
