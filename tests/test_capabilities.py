"""The optional capabilities callers test with ``isinstance`` (instead of ``getattr``) are recognised on
the classes that have them, and only there."""

from __future__ import annotations

from atlas.agent import TaskAgent
from atlas.envs.alfworld.env import AlfWorldEnv
from atlas.envs.graphworld import GraphWorldEnv
from atlas.infra.llm import ScriptedLLM
from atlas.memory.experience import LLMSummarizingExtractor, SimpleExperienceExtractor
from atlas.memory.strategies import BayesianUpdater, EMASuccessUpdater
from atlas.protocols import (
    ExtractsAsync,
    GivesTaskInstructions,
    StartsAtPrior,
    StepsInThread,
    SupportsTools,
    TaskPlayer,
    UpdatesStrategies,
)


def test_model_capabilities():
    llm = ScriptedLLM(["ok"])
    assert isinstance(llm, SupportsTools) and llm.supports_tools
    assert not isinstance(object(), SupportsTools)
    assert isinstance(TaskAgent(llm), TaskPlayer)


def test_environment_capabilities():
    graph = GraphWorldEnv(rooms=3)
    assert isinstance(graph, GivesTaskInstructions) and not isinstance(graph, StepsInThread)
    alfworld = AlfWorldEnv()  # a text game: its engine steps in a worker thread
    assert isinstance(alfworld, StepsInThread) and alfworld.step_in_thread


def test_memory_capabilities():
    assert isinstance(LLMSummarizingExtractor(ScriptedLLM(["x"])), ExtractsAsync)
    assert not isinstance(SimpleExperienceExtractor(), ExtractsAsync)
    assert isinstance(BayesianUpdater(), StartsAtPrior) and isinstance(BayesianUpdater(), UpdatesStrategies)
    assert not isinstance(EMASuccessUpdater(), StartsAtPrior)
    assert not isinstance(EMASuccessUpdater(), UpdatesStrategies)
