"""The top-level public API is pinned: removing or renaming a name is a deliberate change."""

from __future__ import annotations

import atlas

EXPECTED = {
    "__version__",
    "AtlasError",
    "Archive",
    "CodeConcept",
    "Design",
    "Experience",
    "Guideline",
    "GuidelineBank",
    "LLMClient",
    "MemoryQueryResult",
    "MemorySystemImpl",
    "ScriptedLLM",
    "Step",
    "Strategy",
    "Task",
    "TaskAgent",
    "Trajectory",
    "build_memory_system",
    "format_advice",
    "get_env",
    "make_embedder",
    "make_llm",
    "register_env",
}


def test_all_is_pinned() -> None:
    assert set(atlas.__all__) == EXPECTED


def test_every_name_resolves() -> None:
    for name in atlas.__all__:
        assert getattr(atlas, name) is not None, name
