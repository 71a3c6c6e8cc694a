"""Pure helpers of the llama.cpp backend (no model needed): history flattening, tool prompts,
tool-call parsing and the tool-call grammar schema."""

from __future__ import annotations

import jsonschema

from atlas.infra.llm.llamacpp_backend import _fits, _plain_messages, parse_tool_calls, tool_call_schema
from atlas.protocols.llm import ToolSpec

TOOLS = [
    ToolSpec(
        "move_to",
        "Move",
        {"type": "object", "properties": {"room": {"type": "string"}}, "required": ["room"]},
    ),
    ToolSpec("look", "Look around"),
]


def test_history_with_tool_calls_is_flattened_for_any_template():
    history = [
        {"role": "system", "content": "Play."},
        {"role": "user", "content": "Go."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "look", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "room_A"},
    ]
    flat = _plain_messages(history, TOOLS)
    assert [m["role"] for m in flat] == ["system", "user", "assistant", "user"]
    assert "<tools>" in flat[0]["content"] and '"move_to"' in flat[0]["content"]
    assert '<tool_call>\n{"name": "look", "arguments": {}}' in flat[2]["content"]
    assert flat[3]["content"] == "<tool_response>\nroom_A\n</tool_response>"


def test_parse_tool_calls_tagged_bare_and_text():
    text, calls = parse_tool_calls(
        '<tool_call>\n{"name": "move_to", "arguments": {"room": "room_B"}}\n</tool_call>', TOOLS
    )
    assert text == "" and calls[0].name == "move_to" and calls[0].arguments == {"room": "room_B"}
    _, calls = parse_tool_calls('{"name": "look", "arguments": {}}', TOOLS)
    assert calls[0].name == "look"
    text, calls = parse_tool_calls("I am done.", TOOLS)
    assert text == "I am done." and calls == []


def test_tool_call_schema_accepts_exactly_valid_calls():
    schema = tool_call_schema(TOOLS)
    jsonschema.validate({"name": "move_to", "arguments": {"room": "room_B"}}, schema)
    assert _fits('<tool_call>{"name": "move_to", "arguments": {"room": "x"}}</tool_call>', schema, TOOLS)
    assert not _fits('{"name": "move_to", "arguments": {}}', schema, TOOLS)  # room is required
    assert not _fits("Let me think.", schema, TOOLS)
    assert _fits('```json\n{"a": 1}\n```', {"type": "object", "required": ["a"]}, None)
