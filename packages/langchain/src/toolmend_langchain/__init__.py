"""toolmend for LangChain create_agent and LangGraph."""
