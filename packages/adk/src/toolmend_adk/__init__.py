"""toolmend for Google's Agent Development Kit (ADK).

One plugin turns it on for a runner:
``InMemoryRunner(agent=agent, plugins=[ToolMendPlugin(effects={...})])``.  It
replaces ADK's ``ReflectAndRetryToolPlugin``: failures are classified by the
core, transient failures of repeatable tools are retried inside the call, a
write is never repeated blindly, and the model reads the true cause and the
kind's next step in the function response.  :mod:`toolmend_adk.testing` has a
scripted model for running an agent offline.
"""

from ._plugin import ToolMendPlugin, Verify

__all__ = ["ToolMendPlugin", "Verify"]
