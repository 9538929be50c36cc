"""toolmend for the OpenAI Agents SDK."""
