"""Stage 1: thought kinds, cognitive patterns, outcome classes."""

from __future__ import annotations

import pytest
from gl_helpers import make_traj, reply

from atlas.core.types import Step, Task, Trajectory
from atlas.errors import LLMResponseError
from atlas.infra.llm import ScriptedLLM
from atlas.memory.guidelines.config import OutcomeRules
from atlas.memory.guidelines.intelligence import (
    LLMThoughtClassifier,
    RuleThoughtClassifier,
    TrajectoryAnalyzer,
    detect_patterns,
)


async def test_rule_classifier_labels_the_four_kinds():
    labels = await RuleThoughtClassifier().classify(
        [
            "The observation shows two exits.",
            "I will go to room_B next.",
            "Let me verify that I hold the key.",
            "That was a mistake, I should have checked the map.",
        ]
    )
    assert labels == ["analytical", "planning", "validation", "reflection"]


async def test_llm_classifier_valid_and_wrong_count_is_reasked():
    llm = ScriptedLLM([reply(labels=["planning"]), reply(labels=["planning", "reflection"])])
    assert await LLMThoughtClassifier(llm).classify(["a", "b"]) == ["planning", "reflection"]
    assert len(llm.history) == 2  # first reply had 1 label for 2 thoughts → re-asked


async def test_llm_classifier_garbage_raises_after_retries():
    llm = ScriptedLLM(["nonsense", "still not json", '{"labels": ["bogus"]}'])
    with pytest.raises(LLMResponseError):
        await LLMThoughtClassifier(llm).classify(["only one"])


@pytest.mark.parametrize(
    ("kind", "outcome"),
    [
        ("clean", "clean_success"),
        ("recovery", "recovery"),
        ("failure", "failure"),
        ("inefficient", "inefficient_success"),
    ],
)
async def test_outcome_classes(kind, outcome):
    intel = await TrajectoryAnalyzer().analyze(make_traj(kind))
    assert intel.outcome == outcome
    assert intel.reasons


async def test_outcome_rules_are_configurable():
    t = make_traj("clean")
    assert (
        await TrajectoryAnalyzer(OutcomeRules(max_clean_steps=3)).analyze(t)
    ).outcome == "inefficient_success"
    t2 = t.model_copy(update={"metadata": {"optimal_steps": 2}})
    assert (await TrajectoryAnalyzer().analyze(t2)).outcome == "inefficient_success"


def test_patterns_self_correction_discovery_repeated_failure():
    kinds = {p.kind for p in detect_patterns(make_traj("recovery"), OutcomeRules())}
    assert {"self_correction", "api_discovery"} <= kinds
    failing = detect_patterns(make_traj("failure"), OutcomeRules())
    rep = [p for p in failing if p.kind == "repeated_failing_action"]
    assert rep and rep[0].steps == [1, 2]


def test_api_discovery_from_an_error_message():
    t = Trajectory(
        task=Task(description="x"),
        success=True,
        steps=[
            Step(action="open()", tool="open", error="unknown tool open; try open_door"),
            Step(action="open_door()", tool="open_door", observation="opened"),
        ],
    )
    disc = [p for p in detect_patterns(t, OutcomeRules()) if p.kind == "api_discovery"]
    assert disc and disc[0].steps == [0, 1]


async def test_thoughts_are_indexed_by_step():
    intel = await TrajectoryAnalyzer().analyze(make_traj("recovery"))
    assert intel.thoughts[0] == "planning" and intel.thoughts[1] == "reflection"
    assert intel.error_steps == [1]
