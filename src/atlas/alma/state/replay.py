"""Deterministic replay of the task model: under greedy decoding (temperature 0) the same prompt
gives the same reply, so an episode prompt seen before (the no-memory baseline and a design that
gave no advice, two designs that gave the same advice, a resumed run) is answered from an on-disk
cache instead of the model. Sampled calls (the agent's loop-guard resample, the meta agent) are
never cached."""

from __future__ import annotations

from pathlib import Path

from atlas.infra.llm import LLMClient, ResponseCache

LOCAL_PREFIX = "local:"  # in-process models: every call costs this machine's time


def use_replay_cache(llm: LLMClient, directory: Path) -> bool:
    """Give ``llm`` (an ``LLMClient``) a greedy-only response cache in ``directory`` when it is a
    local model without a cache of its own; True when it now replays."""
    if llm.cache is not None or not str(llm.model).startswith(LOCAL_PREFIX):
        return False
    llm.cache = ResponseCache(directory, greedy_only=True)
    return True


__all__ = ["use_replay_cache"]
