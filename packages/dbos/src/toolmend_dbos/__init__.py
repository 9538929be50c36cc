"""toolmend for DBOS: each tool call a DBOS step, with durable keys and verify-on-resume.

tools = DurableTools("sqlite:///agent.sqlite")

@tools.tool(effect="write", idempotency_key="key")
def pay(invoice: str, key: str) -> str: ...
"""

from ._steps import DurableTools, step_options, store_for_url

__all__ = ["DurableTools", "step_options", "store_for_url"]
