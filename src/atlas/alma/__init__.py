"""ALMA: an evolutionary search for memory designs (LLM-written Python modules).

from atlas.alma import run, Archive
archive, trace_path = run(llm=llm, meta_llm=meta_llm, env="graphworld", iterations=5)
best = archive.best()
archive = Archive.load("runs/graphworld-…/archive.json").hydrate()
"""

from __future__ import annotations

from typing import Any

from atlas.alma.state.archive import Archive, ArchiveEntry, TaskResult
from atlas.alma.state.config import AlmaConfig

__all__ = [
    "AlmaConfig",
    "Archive",
    "ArchiveEntry",
    "DebugAgent",
    "DebugLog",
    "Harness",
    "MetaAgent",
    "Search",
    "TaskResult",
    "arun",
    "headroom",
    "paired_difference",
    "run",
]

_LAZY = {
    "DebugAgent": "atlas.alma.author.debug_agent",
    "DebugLog": "atlas.alma.author.debug_log",
    "Harness": "atlas.alma.evaluate.harness",
    "MetaAgent": "atlas.alma.author.meta_agent",
    "Search": "atlas.alma.search.loop",
    "arun": "atlas.alma.api",
    "headroom": "atlas.alma.evaluate.advice_headroom",
    "paired_difference": "atlas.alma.state.stats",
    "run": "atlas.alma.api",
}


def __getattr__(name: str) -> Any:
    # The loop pulls in the agent, environments and sandbox: import it only when asked for.
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'atlas.alma' has no attribute {name!r}")
