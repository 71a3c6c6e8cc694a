"""The retrieval defaults: a calibrated floor, three keys per tip, duplicates collapsed,
entity stripping of names and objects, the LLM generalizer when there is an LLM, 2–4 tips a segment."""

from __future__ import annotations

import json

import pytest
from gl_helpers import make_traj

from atlas.core.types import Guideline
from atlas.infra.llm import ScriptedLLM
from atlas.memory.guidelines import GuidelineBank, GuidelineConfig
from atlas.memory.guidelines.generalize import LLMGeneralizer, RuleGeneralizer
from atlas.memory.guidelines.prompts import stage_of
from atlas.memory.relevance import FLOORS
from guideline_doubles import auto_responder


def _tip(content: str, subtask: str, task: str = "Bring the key to room_C") -> Guideline:
    return Guideline(category="strategy", content=content, subtask=subtask, metadata={"task": task})


def test_threshold_defaults_to_the_calibrated_floor_of_the_embedder(embedder):
    from atlas.infra.embeddings import NGramEmbedder

    assert GuidelineBank(embedder=embedder).threshold == FLOORS["minilm"]["guidelines"]
    assert GuidelineBank(embedder=NGramEmbedder()).threshold == FLOORS["ngram"]["guidelines"]
    assert GuidelineBank(embedder=embedder, config=GuidelineConfig(threshold=0.7)).threshold == 0.7


def test_same_advice_under_two_subtasks_comes_back_once(embedder):
    bank = GuidelineBank(embedder=embedder)
    bank.import_guidelines(
        [
            _tip("Look around before the first move.", "find the target object"),
            _tip("look around before the first move", "carry the object to the goal room"),
            _tip("Plan the shortest path first", "carry the object to the goal room"),
        ]
    )
    found = bank.get_guidelines("Bring the lamp to room_D", k=5)
    assert sorted(g.content.lower().rstrip(".") for g in found) == [
        "look around before the first move",
        "plan the shortest path first",
    ]


def test_each_tip_is_indexed_under_three_keys_without_entities_in_clear(embedder):
    bank = GuidelineBank(llm=ScriptedLLM(auto_responder()), embedder=embedder)
    bank.save(make_traj("clean", task="bring the apple to room_C for john.doe@email.com"))
    tips = bank.list_guidelines()
    rows = bank.store.vectors.get_sync(None)
    assert len(rows) == 3 * len(tips)
    assert {r["id"].rsplit(":", 1)[1] for r in rows} == {"s", "t", "r"}
    assert not any("john.doe" in r["document"] or "room_C" in r["document"] for r in rows)


def test_rule_generalizer_strips_names_and_objects_from_descriptions():
    g = RuleGeneralizer()
    out = g.generalize_description("Retrieve Spotify password for john.doe@email.com")
    assert "Spotify" not in out and "john" not in out and "password" in out
    assert g.generalize_description("Bring the key to room_C") == g.generalize_description(
        "Bring the lamp to room_D"
    )
    assert "Maria" not in g.generalize_description("Reply to Maria's email on Saturday at 7pm")
    assert "a name" in g.generalize_description("Book a flight from Paris to Berlin")
    # tips keep their words: only ids, emails, numbers... are replaced there
    assert g.generalize_text("Grill on the BBQ, then use the FileSystem API") == (
        "Grill on the BBQ, then use the FileSystem API"
    )


def test_rule_generalizer_strips_the_payload_of_a_task_and_keeps_its_kind():
    g = RuleGeneralizer()
    assert (
        g.generalize_description(
            "Post a question about hiking boots in the outdoors forum titled Best boots for wet trails"
        )
        == "Post a question in the outdoors forum"
    )
    assert g.generalize_description("File an issue on the chatbot repository about slow responses") == (
        "File an issue on the chatbot repository"
    )
    # the payload ends where the next clause starts
    assert g.generalize_description("Reply to the email about the budget and attach the report") == (
        "Reply to the email and attach the report"
    )
    assert g.generalize_description("List the reviews of the headphones that mention battery life") == (
        "List the reviews of the headphones"
    )
    # nothing to strip: unchanged; and the switch turns it off
    assert g.generalize_description("Explain how photosynthesis produces oxygen") == (
        "Explain how photosynthesis produces oxygen"
    )
    assert "slow responses" in RuleGeneralizer(strip_payload=False).generalize_description(
        "File an issue on the chatbot repository about slow responses"
    )


def test_llm_generalizer_is_the_default_only_with_an_llm(embedder):
    assert isinstance(
        GuidelineBank(llm=ScriptedLLM(auto_responder()), embedder=embedder).generalizer, LLMGeneralizer
    )
    assert isinstance(GuidelineBank(embedder=embedder).generalizer, RuleGeneralizer)
    off = GuidelineConfig(llm_generalizer=False)
    assert isinstance(
        GuidelineBank(llm=ScriptedLLM([]), embedder=embedder, config=off).generalizer, RuleGeneralizer
    )


def test_a_reply_with_one_tip_is_reasked_for_two_to_four(embedder):
    auto = auto_responder()
    one = {"tips": [{"category": "strategy", "content": "only one tip"}]}
    tips_replies = iter([json.dumps(one)])

    def respond(messages, **kw):
        if stage_of(messages) == "tips":
            return next(tips_replies, None) or auto(messages, **kw)
        return auto(messages, **kw)

    llm = ScriptedLLM(respond)
    bank = GuidelineBank(llm=llm, embedder=embedder, config=GuidelineConfig(granularity="task"))
    result = bank.save(make_traj("clean"))
    assert result.status == "processed" and len(result.guideline_ids) == 2
    assert [stage_of(c.messages) for c in llm.history].count("tips") == 2  # re-asked once
    assert bank.config.min_tips_per_segment == 2 and bank.config.max_tips_per_segment == 4
    with pytest.raises(ValueError):
        GuidelineConfig(min_tips_per_segment=5)


def test_llm_selection_shows_short_ids_and_maps_them_back(embedder):
    llm = ScriptedLLM(auto_responder(select=1))
    bank = GuidelineBank(llm=llm, embedder=embedder, config=GuidelineConfig(llm_sure=2.0))
    ids = bank.import_guidelines(
        [_tip("Look first", "find the target object"), _tip("Plan the path", "carry the object")]
    )
    found = bank.get_guidelines("Bring the lamp to room_D", mode="llm")
    assert "- id=g1 " in llm.history[-1].prompt and ids[0] not in llm.history[-1].prompt
    assert len(found) == 1 and found[0].id in ids and found[0].metadata["retrieval"] == "llm"


def test_llm_selection_of_an_unrelated_task_makes_no_call(embedder):
    llm = ScriptedLLM(auto_responder())
    bank = GuidelineBank(llm=llm, embedder=embedder)
    bank.import_guidelines([_tip("Look first", "find the target object")])
    assert bank.get_guidelines("compile the linux kernel with clang", mode="llm") == []
    assert llm.history == []  # the candidate pool is floored too: nothing to choose from


def _banded(embedder, sure: float) -> tuple[GuidelineBank, ScriptedLLM]:
    llm = ScriptedLLM(auto_responder())
    bank = GuidelineBank(llm=llm, embedder=embedder, config=GuidelineConfig(llm_sure=sure))
    bank.import_guidelines(
        [
            _tip(
                "Pick the object up as soon as you see it.",
                "find the target object",
                "Bring the apple to room_A",
            ),
            _tip("Walk the shortest known route.", "carry the object", "Bring the pear to room_C"),
            _tip("Check the room list before moving.", "plan the route", "Take the lamp to room_B"),
        ]
    )
    return bank, llm


def test_llm_selector_keeps_sure_tips_without_asking_and_asks_only_about_the_rest(embedder):
    query = "Bring the apple to room_A"
    bank, llm = _banded(embedder, 2.0)
    pool = bank.get_guidelines(query, k=5, mode="cosine")
    rel = [g.metadata["relevance"] for g in pool]
    assert len(rel) == 3 and rel[0] > rel[-1], rel
    cut = (rel[0] + rel[1]) / 2  # only the tip learned on this very task is sure
    banded, llm = _banded(embedder, cut)
    found = banded.get_guidelines(query, k=5, mode="llm")
    assert len(llm.history) == 1  # one call, about the two unsure tips
    assert found[0].content == pool[0].content and found[0].metadata["retrieval"] == "sure"
    assert pool[0].content not in llm.history[0].prompt
    assert pool[1].content in llm.history[0].prompt and pool[2].content in llm.history[0].prompt
    assert all(g.metadata["retrieval"] == "llm" for g in found[1:])

    all_sure, llm = _banded(embedder, rel[-1])
    got = all_sure.get_guidelines(query, k=2, mode="llm")
    assert llm.history == []  # a pool of sure tips costs no call
    assert [g.content for g in got] == [g.content for g in pool[:2]]


def test_the_sure_band_defaults_to_the_embedders_calibrated_value(embedder):
    from atlas.infra.embeddings import NGramEmbedder

    for emb, name in ((embedder, "minilm"), (NGramEmbedder(), "ngram")):
        bank = GuidelineBank(llm=ScriptedLLM(auto_responder()), embedder=emb)
        assert bank.threshold < FLOORS[name]["guidelines_sure"] <= 1.0
        assert bank._retriever("llm").sure == FLOORS[name]["guidelines_sure"]
