"""The real local model (Qwen2.5-Coder-0.5B GGUF) through llama.cpp: constrained JSON and tools."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from atlas.infra import local_models
from atlas.protocols.llm import ToolSpec

pytestmark = [pytest.mark.local_llm, pytest.mark.slow]


@pytest.fixture(scope="module")
def local_llm():
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (extra [local])")
    if not local_models.is_verified("qwen2.5-coder-0.5b") and not local_models.verify("qwen2.5-coder-0.5b"):
        pytest.skip("local model not assembled: run `atlas models pull qwen2.5-coder-0.5b`")
    from atlas.infra.llm import make_llm

    return make_llm("qwen-0.5b", n_ctx=2048, temperature=0.0)


class Person(BaseModel):
    name: str
    age: int
    hobbies: list[str]


def test_structured_output_gives_valid_json(local_llm):
    """Default grammar="fallback": free generation, grammar only if the reply does not fit."""
    person = local_llm.structured(
        [{"role": "user", "content": "Invent a fictional person with two hobbies."}], Person, max_tokens=120
    )
    assert isinstance(person, Person)
    assert local_llm.usage.calls >= 1 and local_llm.usage.cost_usd == 0.0
    assert local_llm.usage.prompt_tokens > 0 and local_llm.usage.completion_tokens > 0


def test_grammar_constrained_decoding(local_llm):
    """grammar="always": the reply is produced under the JSON-schema grammar from the first token."""
    schema = {
        "type": "object",
        "properties": {"room": {"type": "string", "enum": ["room_A", "room_B"]}, "ok": {"type": "boolean"}},
        "required": ["room", "ok"],
    }
    local_llm.backend.grammar_mode = "always"
    try:
        completion = local_llm.complete(
            [{"role": "user", "content": "Which room has the key? It is room_B."}],
            json_schema=schema,
            max_tokens=40,
        )
    finally:
        local_llm.backend.grammar_mode = "fallback"
    value = json.loads(completion.text)  # strictly valid JSON: no extraction or repair needed
    assert value["room"] in ("room_A", "room_B") and isinstance(value["ok"], bool)


def test_required_tool_call(local_llm):
    tools = [
        ToolSpec(
            "move_to",
            "Move to an adjacent room",
            {"type": "object", "properties": {"room": {"type": "string"}}, "required": ["room"]},
        ),
        ToolSpec("look", "Look around the current room"),
    ]
    completion = local_llm.complete(
        [{"role": "user", "content": "You are in room_A; the exits are room_B and room_C. Go to room_B."}],
        tools=tools,
        tool_choice="required",
        max_tokens=60,
    )
    assert len(completion.tool_calls) == 1
    assert completion.tool_calls[0].name in {"move_to", "look"}


def test_timeout_stops_the_generation(local_llm):
    """A timed-out call raises LLMConnectionError and the worker stops generating (the lock is
    free again), so the next call works."""
    from atlas.errors import LLMConnectionError
    from atlas.infra.llm import LLMClient, RetryPolicy

    impatient = LLMClient(local_llm.backend, timeout=0.5, retry=RetryPolicy(max_retries=0))
    with pytest.raises(LLMConnectionError, match="no reply within"):
        impatient.complete(
            [{"role": "user", "content": "Write a 2000-word essay on rooms."}], max_tokens=2000
        )
    reply = local_llm.complete([{"role": "user", "content": "Say OK."}], max_tokens=5)
    assert reply.usage.completion_tokens >= 1
