"""toolmend for MCP client sessions."""
