"""The idempotency keys the runner generates: uuid4 hex, one per logical call."""

from __future__ import annotations

import uuid

from toolmend.integrations import CallContext, execute


def test_generated_keys_are_uuid4_hex_one_per_call() -> None:
    keys: list[str] = []

    def tool(ctx: CallContext) -> str:
        keys.append(ctx.idempotency_key)
        return "ok"

    for _ in range(500):
        assert execute(tool, tool="pay", effect="write") == "ok"

    parsed = [uuid.UUID(hex=key) for key in keys]
    assert [p.hex for p in parsed] == keys
    assert {(p.version, p.variant) for p in parsed} == {(4, uuid.RFC_4122)}
    assert len(set(keys)) == 500
