"""Fixtures of the guideline tests: trajectories of each outcome class and banks over real
embeddings with a ScriptedLLM."""

from __future__ import annotations

import pytest


@pytest.fixture
def auto_llm():
    from atlas.infra.llm import ScriptedLLM
    from guideline_doubles import auto_responder

    return ScriptedLLM(auto_responder())


@pytest.fixture
def bank(auto_llm, embedder):
    from atlas.memory.guidelines import GuidelineBank

    return GuidelineBank(llm=auto_llm, embedder=embedder)
