"""Stages 3 and 4: segmentation (validated ranges) and tip generation (every field filled)."""

from __future__ import annotations

import pytest
from gl_helpers import make_traj, reply

from atlas.errors import LLMResponseError
from atlas.infra.llm import ScriptedLLM
from atlas.memory.guidelines.attribution import LLMAttributor
from atlas.memory.guidelines.intelligence import TrajectoryAnalyzer
from atlas.memory.guidelines.segmentation import LLMSegmenter, SegmentSpec, TaskLevelSegmenter
from atlas.memory.guidelines.tips import LLMTipGenerator


def seg(d, a, b):
    return {"description": d, "start": a, "end": b}


async def test_segmenter_valid_ranges():
    t = make_traj("clean")
    intel = await TrajectoryAnalyzer().analyze(t)
    llm = ScriptedLLM(
        [
            reply(
                segments=[
                    seg("Explore to find the target object", 0, 1),
                    seg("Deliver the object to the destination", 2, 3),
                ]
            )
        ]
    )
    out = await LLMSegmenter(llm).segment(t, intel)
    assert [(s.start, s.end) for s in out] == [(0, 1), (2, 3)]


@pytest.mark.parametrize(
    "bad",
    [
        [seg("overlap a", 0, 2), seg("overlap b", 1, 3)],
        [seg("reversed", 3, 1)],
        [seg("out of range", 0, 9)],
    ],
)
async def test_segmenter_invalid_ranges_are_reasked(bad):
    t = make_traj("clean")
    intel = await TrajectoryAnalyzer().analyze(t)
    llm = ScriptedLLM([reply(segments=bad), reply(segments=[seg("Whole task", 0, 3)])])
    out = await LLMSegmenter(llm).segment(t, intel)
    assert len(llm.history) == 2 and out[0].description == "Whole task"


async def test_segmenter_garbage_raises():
    t = make_traj("clean")
    intel = await TrajectoryAnalyzer().analyze(t)
    with pytest.raises(LLMResponseError):
        await LLMSegmenter(ScriptedLLM(["?", "??", "???"])).segment(t, intel)


async def test_task_level_segmenter_makes_no_call():
    t = make_traj("clean")
    out = await TaskLevelSegmenter().segment(t, await TrajectoryAnalyzer().analyze(t))
    assert out == [SegmentSpec(t.task.description, 0, 3)]


def tip(category, **kw):
    base = {
        "category": category,
        "content": "Read the room connections before moving",
        "purpose": "avoid illegal moves",
        "implementation_steps": ["look", "plan a path"],
        "trigger": "before navigating",
        "application_context": "grid worlds",
        "task_category": "navigation",
        "priority": "high",
    }
    return {**base, **kw}


async def test_recovery_tips_fill_every_field_and_negative_example():
    t = make_traj("recovery")
    intel = await TrajectoryAnalyzer().analyze(t)
    att_llm = ScriptedLLM(
        [
            reply(
                failure_enabler={"description": "moved without a path", "step": 1},
                recognition={"description": "read the error", "step": 1},
                corrective_action={"description": "went through room_B", "step": 2},
                why_it_worked="adjacency",
            )
        ]
    )
    att = await LLMAttributor(att_llm).attribute(t, intel)
    llm = ScriptedLLM(
        [
            reply(
                tips=[
                    tip("recovery", negative_example=None),
                    tip("strategy", content="Verify the held object"),
                ]
            )
        ]
    )
    tips = await LLMTipGenerator(llm).generate(t, intel, att, SegmentSpec("Navigate to a room", 0, 4))
    assert [g.category for g in tips] == ["recovery", "strategy"]
    g = tips[0]
    assert g.negative_example == "moved without a path"  # filled from the attribution
    assert g.source_trajectory_ids == [t.id] and g.evidence == "success"
    assert g.subtask == "Navigate to a room" and g.priority == "high"
    assert g.purpose and g.trigger and g.implementation_steps and g.application_context and g.task_category
    assert "recovery" in llm.history[0].prompt and "Attribution:" in llm.history[0].prompt


async def test_wrong_category_for_outcome_is_reasked():
    t = make_traj("clean")
    intel = await TrajectoryAnalyzer().analyze(t)
    from atlas.memory.guidelines.attribution import Attribution

    llm = ScriptedLLM([reply(tips=[tip("optimization")]), reply(tips=[tip("strategy")] * 2)])
    tips = await LLMTipGenerator(llm).generate(
        t, intel, Attribution("clean_success"), SegmentSpec("x y z", 0, 3)
    )
    assert len(llm.history) == 2 and [g.category for g in tips] == ["strategy", "strategy"]
    assert tips[0].evidence == "success" and tips[0].negative_example is None


async def test_too_many_tips_is_reasked_then_fails():
    t = make_traj("failure")
    intel = await TrajectoryAnalyzer().analyze(t)
    from atlas.memory.guidelines.attribution import Attribution

    five = reply(tips=[tip("recovery")] * 5)
    with pytest.raises(LLMResponseError):
        await LLMTipGenerator(ScriptedLLM([five, five, five])).generate(
            t, intel, Attribution("failure"), SegmentSpec("x y z", 0, 2)
        )


async def test_one_tip_where_two_were_asked_is_kept_after_the_retries():
    t = make_traj("clean")
    intel = await TrajectoryAnalyzer().analyze(t)
    from atlas.memory.guidelines.attribution import Attribution

    one = reply(tips=[tip("strategy", content="Check the map first")])
    llm = ScriptedLLM([one, one, one])
    tips = await LLMTipGenerator(llm).generate(
        t, intel, Attribution("clean_success"), SegmentSpec("x y z", 0, 3)
    )
    assert len(llm.history) == 3  # re-asked for 2 to 4 first
    assert [g.content for g in tips] == ["Check the map first"]
    wrong = reply(tips=[tip("optimization")])  # too few AND a category this outcome may not produce
    with pytest.raises(LLMResponseError):
        await LLMTipGenerator(ScriptedLLM([wrong] * 3)).generate(
            t, intel, Attribution("clean_success"), SegmentSpec("x y z", 0, 3)
        )


async def test_a_tip_that_copies_the_templates_placeholders_says_nothing_there():
    """The 0.5B copies the reply template ("When: When to apply it"): a copied field is left to the
    segment's own description, and a copied ``content`` is re-asked like any invalid reply."""
    from atlas.memory.guidelines.attribution import Attribution
    from atlas.memory.guidelines.prompts import stage_messages
    from atlas.memory.guidelines.schemas import TIP_PLACEHOLDERS

    t = make_traj("clean")
    intel = await TrajectoryAnalyzer().analyze(t)
    template = stage_messages(
        "tips", trajectory="", attribution="", focus="", min_tips=1, max_tips=2, categories="strategy"
    )[-1]["content"]
    assert all(f'"{p}"' in template for p in TIP_PLACEHOLDERS.values())  # the template has what we filter
    copied = tip(
        "strategy",
        trigger="When to apply it",
        application_context=" where it applies.",
        purpose="Why it helps",
        task_category="short kind of task",
        negative_example="what not to do",
        implementation_steps=["...", "open the map"],
    )
    llm = ScriptedLLM([reply(tips=[tip("strategy", content="The advice")]), reply(tips=[copied] * 2)])
    tips = await LLMTipGenerator(llm).generate(
        t, intel, Attribution("clean_success"), SegmentSpec("Find the exit", 0, 3)
    )
    assert len(llm.history) == 2 and "placeholder 'the advice'" in llm.history[1].prompt
    g = tips[0]
    assert g.trigger == g.application_context == "Find the exit" and g.task_category == "general"
    assert g.negative_example is None and g.implementation_steps == ["open the map"]
    assert g.purpose.startswith("learned from") and g.content == copied["content"]
