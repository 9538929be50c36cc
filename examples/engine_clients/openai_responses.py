"""The OpenAI client on the engine's Responses API: the X-Tool-Errors header, form C3.

pip install 'toolmend-engine[clients,model]'
toolmend-engine serve          # or: toolmend-engine proxy --upstream URL
python examples/engine_clients/openai_responses.py
"""

import os

from openai import OpenAI

base_url = os.environ.get("TOOLMEND_BASE_URL", "http://127.0.0.1:8080/v1")
client = OpenAI(base_url=base_url, api_key="not-needed")
items = [
    {"role": "user", "content": "What is the weather in Oslo?"},
    {
        "type": "function_call",
        "call_id": "call_1",
        "name": "get_weather",
        "arguments": '{"city": "Oslo"}',
    },
    {
        "type": "function_call_output",
        "call_id": "call_1",
        "output": "Error: 503 Service Unavailable",
    },
]
raw = client.responses.with_raw_response.create(
    model="local",
    input=items,  # type: ignore[arg-type]
    max_output_tokens=32,
    extra_body={"tool_errors": "c3"},
)
print("X-Tool-Errors:", raw.headers["X-Tool-Errors"])
response = raw.parse()  # the usual Response
print("reply:", response.output_text)
