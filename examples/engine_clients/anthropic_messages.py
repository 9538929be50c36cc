"""The Anthropic client on the engine's /v1/messages: the X-Tool-Errors header, form C3.

pip install 'toolmend-engine[clients,model]'
toolmend-engine serve          # or: toolmend-engine proxy --upstream URL
python examples/engine_clients/anthropic_messages.py
"""

import os

from anthropic import Anthropic

base_url = os.environ.get("TOOLMEND_BASE_URL", "http://127.0.0.1:8080/v1")
# The Anthropic client adds /v1 itself: give it the server's root.
client = Anthropic(base_url=base_url.removesuffix("/v1"), api_key="not-needed")
messages = [
    {"role": "user", "content": "What is the weather in Oslo?"},
    {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Oslo"}}
        ],
    },
    {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_1",
                "content": "Error: 503 Service Unavailable",
                "is_error": True,
            }
        ],
    },
]
raw = client.messages.with_raw_response.create(
    model="local",
    max_tokens=32,
    messages=messages,  # type: ignore[arg-type]
    extra_body={"tool_errors": "c3"},
)
print("X-Tool-Errors:", raw.headers["X-Tool-Errors"])
message = raw.parse()  # the usual Message
print("reply:", "".join(block.text for block in message.content if block.type == "text"))
