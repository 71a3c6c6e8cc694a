"""Helpers that build OpenAI-form history messages, so every caller writes them the same way."""

from __future__ import annotations

import json
from typing import Any

from atlas.protocols.llm import Completion, Message, ToolCall


def system(content: str) -> Message:
    return {"role": "system", "content": content}


def user(content: str) -> Message:
    return {"role": "user", "content": content}


def assistant_message(completion: Completion) -> Message:
    """The assistant turn for ``completion`` (text and/or tool calls) to append to the history."""
    message: dict[str, Any] = {"role": "assistant", "content": completion.text or ""}
    if completion.tool_calls:
        message["tool_calls"] = [
            {
                "id": call.id or f"call_{i}",
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(call.arguments, ensure_ascii=False)},
            }
            for i, call in enumerate(completion.tool_calls)
        ]
    return message


def tool_message(call: ToolCall, content: str, index: int = 0) -> Message:
    """The result of ``call`` as a ``role: tool`` message answering it."""
    return {"role": "tool", "tool_call_id": call.id or f"call_{index}", "name": call.name, "content": content}


__all__ = ["assistant_message", "system", "tool_message", "user"]
