"""parse_json_reply: JSON out of fences, prose and slightly broken replies."""

from __future__ import annotations

import pytest

from atlas.errors import LLMResponseError
from atlas.infra.llm import parse_json_reply, repair_json


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ('```json\n{"a": [1, 2]}\n```', {"a": [1, 2]}),
        ('Sure! Here it is:\n```\n{"a": 1}\n```\nAnything else?', {"a": 1}),
        ('The answer is {"x": {"y": "z"}} as requested.', {"x": {"y": "z"}}),
        ('{"a": [1, 2,], "b": 3,}', {"a": [1, 2], "b": 3}),
        ("{'a': 'it\\'s', 'b': True, 'c': None}", {"a": "it's", "b": True, "c": None}),
        ('{name: "x", count: 2}', {"name": "x", "count": 2}),
        ('{"a": "http://x.y/z"} // trailing comment', {"a": "http://x.y/z"}),
        ('{"steps": ["look", "go"', {"steps": ["look", "go"]}),
        ("[1, 2, 3]", [1, 2, 3]),
        ("42", 42),
        ('Use {"tool": "look"} then {"tool": "go"}', {"tool": "look"}),
    ],
)
def test_parse_json_reply(text, expected):
    assert parse_json_reply(text) == expected


@pytest.mark.parametrize("text", ["", "   ", "no json here", "{{{{", "the value is maybe"])
def test_parse_json_reply_raises_with_raw(text):
    with pytest.raises(LLMResponseError) as info:
        parse_json_reply(text)
    assert info.value.raw == text


def test_repair_keeps_strings_intact():
    assert repair_json("{'k': \"a 'quoted', True, word\",}") == '{"k": "a \'quoted\', True, word"}'
