"""LLMClient behaviour through ScriptedLLM and tiny real backends (no mocks of the client)."""

from __future__ import annotations

import asyncio
import json

import pytest
from pydantic import BaseModel

import atlas.infra.llm as llm_pkg
from atlas.errors import (
    InvalidInputError,
    LLMConfigError,
    LLMConnectionError,
    LLMResponseError,
    ScriptExhaustedError,
)
from atlas.infra.llm import (
    ALIASES,
    LLMClient,
    LLMRequest,
    RetryPolicy,
    ScriptedLLM,
    assistant_message,
    make_llm,
    resolve_alias,
    resolve_default_model,
    tool_message,
)
from atlas.protocols.llm import LLM, Completion, ToolSpec, Usage

MSG = [{"role": "user", "content": "hello"}]


class Plan(BaseModel):
    goal: str
    steps: list[str]


def test_public_api_is_pinned():
    assert set(llm_pkg.__all__) >= {"LLMClient", "ScriptedLLM", "make_llm", "parse_json_reply"}
    for name in llm_pkg.__all__:
        assert hasattr(llm_pkg, name), name


def test_scripted_llm_replays_and_records():
    llm = ScriptedLLM(["one"], default="fallback")
    llm.enqueue("two", Completion(text="three"))
    assert isinstance(llm, LLM) and isinstance(llm, LLMClient)
    assert llm.model == "scripted"
    texts = [llm.complete(MSG, temperature=0.1).text for _ in range(4)]
    assert texts == ["one", "two", "three", "fallback"]
    assert len(llm.history) == 4
    assert llm.history[0].messages == MSG
    assert llm.history[0].kwargs["temperature"] == 0.1
    assert llm.history[0].prompt == "hello"


def test_scripted_llm_exhausted_raises():
    llm = ScriptedLLM(["only"])
    llm.complete(MSG)
    with pytest.raises(ScriptExhaustedError):
        llm.complete(MSG)


def test_scripted_callable_sees_messages_and_kwargs():
    def reply(messages, **kwargs):
        return f"{messages[-1]['content']}|{kwargs['max_tokens']}"

    llm = ScriptedLLM(reply)
    assert llm.complete(MSG, max_tokens=7).text == "hello|7"
    assert llm.complete([{"role": "user", "content": "x"}]).text == "x|None"


def test_tool_calls_through_scripted_llm():
    tools = [ToolSpec("move_to", "Move", {"type": "object", "properties": {"room": {"type": "string"}}})]
    llm = ScriptedLLM([{"tool_calls": [{"name": "move_to", "arguments": {"room": "room_B"}}], "text": ""}])
    completion = llm.complete(MSG, tools=tools)
    assert completion.tool_calls[0].name == "move_to"
    assert completion.tool_calls[0].arguments == {"room": "room_B"}
    assert llm.history[0].kwargs["tools"] == tools
    assert llm.supports_tools
    # the helpers build an OpenAI-form history from it
    turn = assistant_message(completion)
    assert json.loads(turn["tool_calls"][0]["function"]["arguments"]) == {"room": "room_B"}
    assert tool_message(completion.tool_calls[0], "ok")["tool_call_id"] == turn["tool_calls"][0]["id"]


def test_structured_pydantic_from_fenced_prose():
    llm = ScriptedLLM(['Sure!\n```json\n{"goal": "key", "steps": ["look", "go",],}\n```\nDone.'])
    plan = llm.structured(MSG, Plan)
    assert plan == Plan(goal="key", steps=["look", "go"])
    # the schema went to the backend, and the instruction was appended to the user turn
    assert llm.history[0].kwargs["json_schema"]["title"] == "Plan"
    assert "JSON schema" in llm.history[0].prompt


def test_structured_repairs_python_literals_with_json_schema():
    schema = {
        "type": "object",
        "properties": {"ok": {"type": "boolean"}, "n": {"type": ["null", "integer"]}},
        "required": ["ok", "n"],
    }
    llm = ScriptedLLM(["{'ok': True, 'n': None}"])
    assert llm.structured(MSG, schema) == {"ok": True, "n": None}


def test_structured_reasks_with_the_error_then_succeeds():
    llm = ScriptedLLM(["I think the plan is to look around.", '{"goal": "key", "steps": ["look"]}'])
    assert llm.structured(MSG, Plan).steps == ["look"]
    second = llm.history[1].messages
    assert second[-2] == {"role": "assistant", "content": "I think the plan is to look around."}
    assert "not valid" in second[-1]["content"] and "no parsable JSON" in second[-1]["content"]


def test_structured_reasks_on_schema_violation():
    llm = ScriptedLLM(['{"goal": "key"}', '{"goal": "key", "steps": []}'])
    assert llm.structured(MSG, Plan).steps == []
    assert "steps" in llm.history[1].messages[-1]["content"]


def test_structured_gives_up_with_typed_error():
    llm = ScriptedLLM(default="not json at all")
    with pytest.raises(LLMResponseError) as info:
        llm.structured(MSG, Plan, retries=2)
    assert info.value.raw == "not json at all"
    assert len(llm.history) == 3


def test_invalid_messages_rejected():
    with pytest.raises(InvalidInputError):
        ScriptedLLM(default="x").complete([])
    with pytest.raises(InvalidInputError):
        ScriptedLLM(default="x").complete(["hello"])  # type: ignore[list-item]


class FlakyBackend:
    """A real backend that fails ``failures`` times with the converted error, then answers."""

    model = "flaky"
    supports_tools = False

    def __init__(self, failures: int, error: Exception | None = None) -> None:
        self.failures = failures
        self.error = error or LLMConnectionError("flaky: rate limited")
        self.calls = 0

    async def complete(self, request: LLMRequest) -> Completion:
        self.calls += 1
        if self.calls <= self.failures:
            raise self.error
        return Completion(text="ok", usage=Usage(prompt_tokens=10, completion_tokens=2, cost_usd=0.001))


FAST = RetryPolicy(max_retries=3, base_delay=0.0, jitter=0.0)


def test_retries_then_succeeds():
    backend = FlakyBackend(failures=2)
    client = LLMClient(backend, retry=FAST)
    assert client.complete(MSG).text == "ok"
    assert backend.calls == 3
    assert client.usage.calls == 1


def test_retries_exhausted_raise_connection_error():
    backend = FlakyBackend(failures=10)
    client = LLMClient(backend, retry=FAST)
    with pytest.raises(LLMConnectionError, match="gave up after 4 attempts"):
        client.complete(MSG)
    assert backend.calls == 4


def test_config_errors_are_not_retried():
    backend = FlakyBackend(failures=10, error=LLMConfigError("bad key"))
    client = LLMClient(backend, retry=FAST)
    with pytest.raises(LLMConfigError):
        client.complete(MSG)
    assert backend.calls == 1


def test_backoff_grows_exponentially():
    policy = RetryPolicy(base_delay=1.0, max_delay=5.0, jitter=0.0)
    assert [policy.delay(i) for i in range(4)] == [1.0, 2.0, 4.0, 5.0]


class SlowBackend:
    model = "slow"
    supports_tools = False

    def __init__(self) -> None:
        self.calls = 0

    async def complete(self, request: LLMRequest) -> Completion:
        self.calls += 1
        await asyncio.sleep(5)
        return Completion(text="late")


def test_per_call_timeout_is_retried_then_raised():
    backend = SlowBackend()
    client = LLMClient(backend, timeout=0.05, retry=RetryPolicy(max_retries=1, base_delay=0.0, jitter=0.0))
    with pytest.raises(LLMConnectionError, match="no reply within"):
        client.complete(MSG)
    assert backend.calls == 2


class TimingOutBackend:
    """A backend whose own transport times out (no client-side timeout set)."""

    model = "times-out"
    supports_tools = False

    async def complete(self, request: LLMRequest) -> Completion:
        raise TimeoutError("read timed out")


def test_backend_timeout_without_a_client_timeout_is_a_clear_error():
    client = LLMClient(TimingOutBackend(), timeout=None, retry=RetryPolicy(max_retries=0))
    with pytest.raises(LLMConnectionError, match=r"times-out: no reply .*timed out"):
        client.complete(MSG)


def test_usage_accounting_per_call_and_total():
    backend = FlakyBackend(failures=0)
    client = LLMClient(backend)
    first = client.complete(MSG)
    client.complete(MSG)
    assert first.usage.prompt_tokens == 10 and first.usage.calls == 1
    assert client.usage.to_dict() == {
        "prompt_tokens": 20,
        "completion_tokens": 4,
        "total_tokens": 24,
        "cost_usd": 0.002,
        "calls": 2,
    }
    scripted = ScriptedLLM(["abcdefgh"])
    scripted.complete([{"role": "user", "content": "x" * 40}])
    assert scripted.usage.prompt_tokens == 10 and scripted.usage.completion_tokens == 2


def test_cache_hit_on_second_call_writes_file(tmp_path):
    llm = ScriptedLLM(["first"], cache=tmp_path)
    a = llm.complete(MSG, temperature=0.0)
    b = llm.complete(MSG, temperature=0.0)
    assert (a.text, a.cached) == ("first", False)
    assert (b.text, b.cached) == ("first", True)
    assert len(llm.history) == 1 and llm.cache_hits == 1 and llm.usage.calls == 1
    files = list(tmp_path.rglob("*.json"))
    assert len(files) == 1
    record = json.loads(files[0].read_text())
    assert record["value"]["completion"]["text"] == "first" and record["value"]["request"]["messages"] == MSG
    # a different parameter is a different key; a new client replays from the same directory
    with pytest.raises(ScriptExhaustedError):
        llm.complete(MSG, temperature=0.5)
    replay = ScriptedLLM([], cache=tmp_path)
    assert replay.complete(MSG, temperature=0.0).cached


def test_cache_roundtrips_tool_calls(tmp_path):
    reply = {"tool_calls": [{"name": "look", "arguments": {"x": [1, 2]}}]}
    llm = ScriptedLLM([reply], cache=tmp_path)
    llm.complete(MSG)
    again = llm.complete(MSG)
    assert again.cached and again.tool_calls[0].arguments == {"x": [1, 2]}


async def test_sync_and_async_give_the_same_result():
    def script():
        return ScriptedLLM(["plain", '{"goal": "g", "steps": ["a"]}'])

    sync_llm, async_llm = script(), script()
    # sync wrappers work even inside a running loop (run_sync uses a worker thread)
    s1 = sync_llm.complete(MSG)
    s2 = sync_llm.structured(MSG, Plan)
    a1 = await async_llm.acomplete(MSG)
    a2 = await async_llm.astructured(MSG, Plan)
    assert (s1.text, s1.usage) == (a1.text, a1.usage)
    assert s2 == a2
    assert [c.messages for c in sync_llm.history] == [c.messages for c in async_llm.history]
    assert sync_llm.usage == async_llm.usage


def test_alias_table():
    assert resolve_alias("haiku") == "anthropic/claude-haiku-4-5"
    assert resolve_alias("Sonnet") == "anthropic/claude-sonnet-4-5"
    assert resolve_alias("gpt-4.1-mini") == "openai/gpt-4.1-mini"
    assert resolve_alias("4o") == "openai/gpt-4o"
    assert resolve_alias("qwen-0.5b") == "local:qwen2.5-coder-0.5b"
    assert resolve_alias("openai/gpt-4.1") == "openai/gpt-4.1"
    assert all(v.startswith(("local:",)) or "/" in v for v in ALIASES.values())


def test_default_model_resolution():
    assert resolve_default_model("haiku", {"OPENAI_API_KEY": "k"})[0] == "anthropic/claude-haiku-4-5"
    model, reason = resolve_default_model(None, {"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k"})
    assert model == "anthropic/claude-haiku-4-5" and "ANTHROPIC_API_KEY" in reason
    assert resolve_default_model(None, {"OPENAI_API_KEY": "k"})[0] == "openai/gpt-4.1-mini"
    model, reason = resolve_default_model(None, {})
    assert model == "local:qwen2.5-coder-0.5b" and "no provider API key" in reason
    assert resolve_default_model(None, {"ATLAS_MODEL": "4o"})[0] == "openai/gpt-4o"


def test_missing_key_is_reported_before_any_call():
    with pytest.raises(LLMConfigError, match="ANTHROPIC_API_KEY") as info:
        make_llm("haiku", env={})
    assert "export ANTHROPIC_API_KEY" in str(info.value)
    with pytest.raises(LLMConfigError, match="AWS_ACCESS_KEY_ID"):
        make_llm("bedrock-haiku", env={})


def test_key_present_builds_client_and_unknown_model_fails():
    client = make_llm("gpt-4.1-mini", env={"OPENAI_API_KEY": "sk-test"})
    assert client.model == "openai/gpt-4.1-mini" and client.supports_tools
    with pytest.raises(LLMConfigError, match="unknown model"):
        make_llm("definitely-not-a-model", env={})
    with pytest.raises(LLMConfigError, match="atlas models pull"):
        make_llm("local:qwen2.5-coder-1.5b", env={"ATLAS_CACHE_DIR": "/nonexistent-atlas-dir"})
    with pytest.raises(LLMConfigError, match="does not exist"):
        make_llm("local:/nonexistent/model.gguf", env={})
