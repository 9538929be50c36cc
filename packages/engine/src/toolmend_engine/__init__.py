"""Deterministic local inference with the toolmend recovery layer: OpenAI-compatible server, proxy and evaluation."""
