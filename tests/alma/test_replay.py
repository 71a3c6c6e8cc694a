"""Deterministic replay: identical greedy (temperature 0) task-model prompts are paid once; sampled
calls are never replayed; the loop turns replay on for local models only."""

from __future__ import annotations

from atlas.alma.state.replay import use_replay_cache
from atlas.infra.llm import ResponseCache, ScriptedLLM

MESSAGES = [{"role": "system", "content": "play"}, {"role": "user", "content": "You are in the hall."}]


def _counting():
    calls: list[float | None] = []

    def policy(messages, **kwargs):
        calls.append(kwargs.get("temperature"))
        return f"reply {len(calls)}"

    return ScriptedLLM(policy), calls


async def test_greedy_calls_are_replayed_and_sampled_calls_are_not(tmp_path):
    llm, calls = _counting()
    llm.cache = ResponseCache(tmp_path, greedy_only=True)
    first = await llm.acomplete(MESSAGES, temperature=0.0)
    again = await llm.acomplete(MESSAGES, temperature=0.0)
    assert first.text == again.text == "reply 1" and again.cached and llm.cache_hits == 1
    assert llm.usage.calls == 1  # the replayed call cost nothing
    await llm.acomplete(MESSAGES, temperature=0.7)
    sampled = await llm.acomplete(MESSAGES, temperature=0.7)
    assert sampled.text == "reply 3" and len(calls) == 3 and llm.cache_hits == 1


def test_the_loop_replays_local_models_only(tmp_path):
    local, _ = _counting()
    local.model = "local:qwen2.5-coder-0.5b"
    assert use_replay_cache(local, tmp_path / "replay")
    assert local.cache.greedy_only and local.cache.directory == tmp_path / "replay"
    scripted, _ = _counting()
    assert not use_replay_cache(scripted, tmp_path / "replay") and scripted.cache is None
    own = ResponseCache(tmp_path / "own")
    local.cache = own
    assert not use_replay_cache(local, tmp_path / "replay") and local.cache is own
