"""ATLAS: memory for LLM agents that learn from experience, and ALMA, a search for memory designs.

The names below are the public API; they load lazily so ``import atlas`` stays cheap.

    from atlas import build_memory_system, GuidelineBank, make_llm, get_env, TaskAgent
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    # core types
    "Task": "atlas.core.types",
    "Step": "atlas.core.types",
    "Trajectory": "atlas.core.types",
    "Experience": "atlas.core.types",
    "CodeConcept": "atlas.core.types",
    "Strategy": "atlas.core.types",
    "Guideline": "atlas.core.types",
    "MemoryQueryResult": "atlas.core.types",
    # errors
    "AtlasError": "atlas.errors",
    # infrastructure
    "LLMClient": "atlas.infra.llm",
    "ScriptedLLM": "atlas.infra.llm",
    "make_llm": "atlas.infra.llm",
    "make_embedder": "atlas.infra.embeddings",
    # memory library
    "MemorySystemImpl": "atlas.memory",
    "build_memory_system": "atlas.memory",
    "format_advice": "atlas.memory",
    "GuidelineBank": "atlas.memory.guidelines",
    # environments and agent
    "get_env": "atlas.envs",
    "register_env": "atlas.envs",
    "TaskAgent": "atlas.agent",
    # ALMA
    "Design": "atlas.alma.design",
    "Archive": "atlas.alma.state.archive",
}

__all__ = ["__version__", *sorted(_EXPORTS)]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'atlas' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
