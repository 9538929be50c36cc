"""toolmend for the OpenAI Agents SDK.

One line turns it on for a run: ``Runner.run(agent, input, run_config=run_config())``.
Tools built with :func:`function_tool` retry safe transient failures inside
the call, fail with the true cause, and deliver the receipt for a result that
violates its outcome contract (``contracts=`` there or in :func:`run_config`);
:func:`failure_error_function` and :func:`input_filter` are the two halves for
tools built elsewhere.  :class:`RecoveringServer` does the same for the tools of an
MCP server.
"""

from ._config import run_config
from ._failure import FailureFunction, ToolFailed, failure_error_function, tool_error_formatter
from ._filter import InputFilter, input_filter
from ._mcp import mcp_error_results, mcp_server_options
from ._recovering import RecoveringServer
from ._report import Captured, capture
from ._tools import function_tool

__all__ = [
    "Captured",
    "FailureFunction",
    "InputFilter",
    "RecoveringServer",
    "ToolFailed",
    "capture",
    "failure_error_function",
    "function_tool",
    "input_filter",
    "mcp_error_results",
    "mcp_server_options",
    "run_config",
    "tool_error_formatter",
]
