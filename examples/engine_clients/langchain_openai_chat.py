"""langchain-openai's ChatOpenAI on the engine: the X-Tool-Errors header, form C3.

pip install 'toolmend-engine[clients,model]'
toolmend-engine serve          # or: toolmend-engine proxy --upstream URL
python examples/engine_clients/langchain_openai_chat.py
"""

import os

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_openai import ChatOpenAI
from pydantic import SecretStr

base_url = os.environ.get("TOOLMEND_BASE_URL", "http://127.0.0.1:8080/v1")
chat = ChatOpenAI(
    base_url=base_url,
    model="local",
    api_key=SecretStr("not-needed"),
    max_completion_tokens=32,
    include_response_headers=True,  # the headers land in response_metadata["headers"]
    extra_body={"tool_errors": "c3"},
)
messages = [
    HumanMessage("What is the weather in Oslo?"),
    AIMessage("", tool_calls=[{"name": "get_weather", "args": {"city": "Oslo"}, "id": "call_1"}]),
    ToolMessage("Error: 503 Service Unavailable", tool_call_id="call_1"),
]
reply = chat.invoke(messages)
print("X-Tool-Errors:", reply.response_metadata["headers"]["x-tool-errors"])
print("reply:", reply.content)
