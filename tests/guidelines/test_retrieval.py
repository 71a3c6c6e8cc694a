"""Stage 6: cosine threshold + top-k (no LLM) and LLM-guided selection (one call per task)."""

from __future__ import annotations

import pytest
from gl_helpers import make_traj, reply

from atlas.errors import InvalidInputError, LLMResponseError
from atlas.infra.llm import ScriptedLLM
from atlas.memory.guidelines import GuidelineBank, GuidelineConfig
from atlas.memory.guidelines.prompts import stage_of
from guideline_doubles import auto_responder


@pytest.fixture
def filled(embedder):
    llm = ScriptedLLM(auto_responder())
    # llm_sure above 1: every candidate goes to the selector (the sure band is tested on its own)
    bank = GuidelineBank(llm=llm, embedder=embedder, config=GuidelineConfig(llm_sure=2.0))
    bank.save(make_traj("clean"))
    bank.save(make_traj("failure", task="bring the apple to room_D"))
    return bank, llm


def test_cosine_mode_makes_no_llm_call_and_respects_k_and_threshold(filled):
    bank, llm = filled
    before = len(llm.history)
    found = bank.get_guidelines("bring the apple to room_A", k=2, mode="cosine")
    assert len(found) == 2 and len(llm.history) == before
    assert found[0].similarity >= found[1].similarity >= bank.threshold
    assert all(g.metadata["relevance"] >= bank.threshold for g in found)
    strict = GuidelineBank(store=bank.store, embedder=bank.embedder, config=GuidelineConfig(threshold=0.95))
    assert strict.get_guidelines("bring the pear to room_A") == []
    assert bank.get_guidelines("bring the pear to room_A")  # a sibling task passes the calibrated floor


def test_success_tips_outrank_failure_tips(embedder):
    from atlas.core.types import Guideline

    bank = GuidelineBank(embedder=embedder)
    task = {"task": "bring the apple to room_D"}
    bank.import_guidelines(
        [
            Guideline(
                category="recovery",
                content=f"failure lesson {i}",
                subtask="carry the object",
                evidence="failure",
                metadata=task,
            )
            for i in range(2)
        ]
        + [
            Guideline(
                category="strategy", content="success lesson", subtask="carry the object", metadata=task
            )
        ]
    )
    found = bank.get_guidelines("bring the apple to room_D", k=10)
    assert [g.evidence for g in found] == ["success", "failure", "failure"]
    assert found[0].similarity > found[1].similarity  # same relevance, failures weighted down


def test_llm_mode_one_call_selects_from_candidates(filled):
    bank, llm = filled
    before = len(llm.history)
    found = bank.get_guidelines("bring the apple to room_A", k=2, mode="llm")
    calls = llm.history[before:]
    assert len(calls) == 1 and stage_of(calls[0].messages) == "select"
    assert len(found) == 2 and all(g.metadata["retrieval"] == "llm" for g in found)


def test_llm_mode_metadata_filters(filled):
    bank, llm = filled
    found = bank.get_guidelines(
        "bring the apple to room_D", k=5, mode="llm", filters={"category": "recovery"}
    )
    assert found and {g.category for g in found} == {"recovery"}
    assert "[strategy;" not in llm.history[-1].prompt
    with pytest.raises(InvalidInputError, match=r"filters\.colour"):
        bank.get_guidelines("x y", filters={"colour": "red"})


def test_llm_selection_of_unknown_ids_is_reasked_then_falls_back(embedder):
    filler = GuidelineBank(llm=ScriptedLLM(auto_responder()), embedder=embedder)
    filler.save(make_traj("clean"))
    bank = GuidelineBank(
        store=filler.store,
        llm=ScriptedLLM([reply(selected=["made-up"])] * 3),
        embedder=embedder,
        config=GuidelineConfig(llm_sure=2.0),
    )
    found = bank.get_guidelines("bring the apple to room_A", mode="llm")
    assert len(bank.llm.history) == 3  # asked, re-asked twice
    assert found and all(g.metadata["retrieval"] == "cosine-fallback" for g in found)
    strict = GuidelineBank(
        store=bank.store,
        embedder=embedder,
        llm=ScriptedLLM(["junk"] * 3),
        config=GuidelineConfig(llm_fallback_to_cosine=False, llm_sure=2.0),
    )
    with pytest.raises(LLMResponseError):
        strict.get_guidelines("bring the apple to room_A", mode="llm")


def test_bad_arguments(filled):
    bank, _ = filled
    with pytest.raises(InvalidInputError, match="task"):
        bank.get_guidelines("   ")
    with pytest.raises(InvalidInputError, match="mode"):
        bank.get_guidelines("x", mode="fuzzy")
    with pytest.raises(InvalidInputError, match="k"):
        bank.get_guidelines("x", k=0)
