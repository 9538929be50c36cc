"""The OpenAI client on the engine's Chat Completions: the X-Tool-Errors header, form C3.

pip install 'toolmend-engine[clients,model]'
toolmend-engine serve          # or: toolmend-engine proxy --upstream URL
python examples/engine_clients/openai_chat.py
"""

import os

from openai import OpenAI

base_url = os.environ.get("TOOLMEND_BASE_URL", "http://127.0.0.1:8080/v1")
client = OpenAI(base_url=base_url, api_key="not-needed")
messages = [
    {"role": "user", "content": "What is the weather in Oslo?"},
    {
        "role": "assistant",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "Error: 503 Service Unavailable"},
]
raw = client.chat.completions.with_raw_response.create(
    model="local",
    messages=messages,  # type: ignore[arg-type]
    max_tokens=32,
    extra_body={"tool_errors": "c3"},  # this request's form; the server's default otherwise
)
print("X-Tool-Errors:", raw.headers["X-Tool-Errors"])
completion = raw.parse()  # the usual ChatCompletion
print("reply:", completion.choices[0].message.content)
