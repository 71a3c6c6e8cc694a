"""GuidelineDesign: the bank behind update(episode) / recall(task), as the ALMA harness calls it."""

from __future__ import annotations

from atlas.infra.llm import ScriptedLLM
from atlas.memory.guidelines import GuidelineBank, GuidelineDesign
from guideline_doubles import auto_responder

EPISODE = {
    "task": {"goal": "bring the apple to room_C", "observation": {"room": "room_A"}, "domain": "graphworld"},
    "steps": [
        {"action": {"tool": "look", "args": {}}, "observation": {"exits": ["room_B"]}, "error": None},
        {
            "action": {"tool": "move_to", "args": {"room": "room_B"}},
            "observation": {"room": "room_B"},
            "error": None,
        },
        {
            "action": {"tool": "pick_up", "args": {"obj": "apple"}},
            "observation": {"holding": "apple"},
            "error": None,
        },
    ],
    "success": True,
    "score": 0.9,
    "steps_taken": 3,
}


async def test_update_then_recall_then_freeze(embedder):
    design = GuidelineDesign(GuidelineBank(llm=ScriptedLLM(auto_responder()), embedder=embedder))
    assert await design.recall({"goal": "bring the apple to room_D"}) == ""
    result = await design.update(EPISODE)
    assert result.status == "processed"
    advice = await design.recall({"goal": "bring the apple to room_D", "observation": {}})
    assert advice.startswith("Guidelines learned from past tasks:") and "[strategy]" in advice
    design.freeze()
    assert await design.update(EPISODE) is None
