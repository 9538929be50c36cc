"""Smoke test of the installed ``toolmend`` wheel: the README's C3 example, exactly."""

from __future__ import annotations

import toolmend

MESSAGES = [
    {"role": "user", "content": "Is flight TM-481 on time tomorrow?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {
                    "name": "flight_status",
                    "arguments": '{"flight": "TM-481", "day": "2026-12-01"}',
                },
            }
        ],
    },
    {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": "Error: HTTP Error 503: Service Unavailable",
    },
]
NOTE = (
    "Note from the tool runtime: the last attempt called flight_status with "
    "`flight=TM-481, day=2026-12-01` and it failed with: `Error: HTTP Error 503: "
    "Service Unavailable`\n\n"
    "This is a temporary failure. Retrying the same call is expected to succeed."
)


def main() -> None:
    result = toolmend.rewrite(MESSAGES, form="c3")
    assert result.messages[:3] == MESSAGES, result.messages
    assert result.messages[3:] == [{"role": "user", "content": NOTE}], result.messages[3:]
    print("toolmend: C3 note as in the README")


if __name__ == "__main__":
    main()
