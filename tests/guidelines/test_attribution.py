"""Stage 2: causal attribution with validated step indices."""

from __future__ import annotations

import pytest
from gl_helpers import make_traj, reply

from atlas.errors import LLMResponseError
from atlas.infra.llm import ScriptedLLM
from atlas.memory.guidelines.attribution import LLMAttributor
from atlas.memory.guidelines.intelligence import TrajectoryAnalyzer
from atlas.memory.guidelines.prompts import stage_of
from atlas.memory.guidelines.schemas import FailureAttribution, InefficiencyAttribution, RecoveryAttribution


def ref(d, s):
    return {"description": d, "step": s}


async def _intel(kind):
    t = make_traj(kind)
    return t, await TrajectoryAnalyzer().analyze(t)


async def test_failure_attribution_four_levels():
    t, intel = await _intel("failure")
    llm = ScriptedLLM(
        [
            reply(
                immediate_cause=ref("moved to a non-adjacent room", 2),
                proximate_cause=ref("retried the same move", 2),
                root_cause=ref("never read the room connections", 0),
                contributing_factors=[ref("ignored the error", 1)],
            )
        ]
    )
    att = await LLMAttributor(llm).attribute(t, intel)
    assert isinstance(att.detail, FailureAttribution)
    assert att.detail.root_cause.step == 0
    assert "root cause (step 0)" in att.summary()
    assert stage_of(llm.history[0].messages) == "attribution"


async def test_out_of_range_step_is_reasked():
    t, intel = await _intel("recovery")
    bad = reply(
        failure_enabler=ref("a", 99),
        recognition=ref("b", 1),
        corrective_action=ref("c", 2),
        why_it_worked="d",
    )
    good = reply(
        failure_enabler=ref("guessed a path", 0),
        recognition=ref("read the error", 1),
        corrective_action=ref("moved via room_B", 2),
        why_it_worked="adjacent rooms only",
    )
    llm = ScriptedLLM([bad, good])
    att = await LLMAttributor(llm).attribute(t, intel)
    assert isinstance(att.detail, RecoveryAttribution) and att.detail.corrective_action.step == 2
    assert "out of range" in llm.history[1].messages[-1]["content"]


async def test_inefficiency_attribution():
    t, intel = await _intel("inefficient")
    llm = ScriptedLLM(
        [reply(suboptimal="looked three times", steps=[1, 2], efficient_alternative="look once")]
    )
    att = await LLMAttributor(llm).attribute(t, intel)
    assert isinstance(att.detail, InefficiencyAttribution)
    assert att.negative_example() == "looked three times"


async def test_clean_success_needs_no_call():
    t, intel = await _intel("clean")
    llm = ScriptedLLM([])
    att = await LLMAttributor(llm).attribute(t, intel)
    assert att.detail is None and llm.history == []


async def test_garbage_raises_llm_response_error():
    t, intel = await _intel("failure")
    llm = ScriptedLLM(["no", "json", "here"])
    with pytest.raises(LLMResponseError):
        await LLMAttributor(llm).attribute(t, intel)
    assert len(llm.history) == 3


async def test_prompt_states_the_index_range_not_the_step_count():
    # Small models cited "step 30" of a 30-step trajectory when the prompt said "Steps (30, ...)".
    t, intel = await _intel("failure")
    last = intel.n_steps - 1
    llm = ScriptedLLM(
        [
            reply(
                immediate_cause=ref("a", last),
                proximate_cause=ref("b", 0),
                root_cause=ref("c", 0),
            )
        ]
    )
    await LLMAttributor(llm).attribute(t, intel)
    prompt = llm.history[0].messages[-1]["content"]
    assert f"numbered 0 to {last}" in prompt
    assert f"from 0 to {last}." in prompt
    assert f"({intel.n_steps}," not in prompt
