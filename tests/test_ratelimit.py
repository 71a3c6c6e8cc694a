"""The request-rate limit (``atlas.infra.llm.ratelimit``): slots evenly spaced, the first at once;
a limited model keeps the inner model's signature and capabilities, in both call paths."""

from __future__ import annotations

import asyncio
import inspect
import time

import pytest

from atlas.errors import ConfigError
from atlas.infra.llm import ScriptedLLM
from atlas.infra.llm.ratelimit import RateLimitedLLM, Spacing


def test_spacing_hands_out_evenly_spaced_slots():
    pacer = Spacing(per_minute=600)  # one every 0.1 s
    delays = [pacer.delay() for _ in range(4)]
    assert delays[0] == 0.0
    assert [round(d, 2) for d in delays[1:]] == [0.1, 0.2, 0.3]
    with pytest.raises(ConfigError):
        Spacing(0)


async def test_a_limited_model_waits_for_its_slots_sync_and_async():
    llm = RateLimitedLLM(ScriptedLLM(default="ok"), Spacing(per_minute=1200))  # 50 ms apart
    assert llm.model == "scripted" and "tool_choice" in inspect.signature(llm.acomplete).parameters
    t0 = time.perf_counter()
    replies = await asyncio.gather(*(llm.acomplete([{"role": "user", "content": "hi"}]) for _ in range(5)))
    assert [r.text for r in replies] == ["ok"] * 5 and time.perf_counter() - t0 >= 0.19
    t0 = time.perf_counter()
    assert llm.complete([{"role": "user", "content": "hi"}]).text == "ok"
    assert llm.complete([{"role": "user", "content": "hi"}]).text == "ok"
    assert time.perf_counter() - t0 >= 0.045
    assert llm.usage.calls == 7  # the inner model's accounting
