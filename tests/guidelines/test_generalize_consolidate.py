"""Stage 5: entity stripping, clustering on real embeddings, ADD/UPDATE/DELETE/NONE decisions."""

from __future__ import annotations

import numpy as np
import pytest
from gl_helpers import reply

from atlas.core.types import Guideline
from atlas.infra.llm import ScriptedLLM
from atlas.memory.guidelines.consolidate import LLMDecider, RuleDecider, cluster, merge_into
from atlas.memory.guidelines.generalize import LLMGeneralizer, RuleGeneralizer


def test_rule_generalizer_strips_entities():
    g = RuleGeneralizer()
    out = g.generalize_text(
        "Retrieve Spotify password for john.doe@email.com and bring obj_12 to room_B, order 42"
    )
    for entity in ("john.doe@email.com", "obj_12", "room_B", "42"):
        assert entity not in out
    assert "a room" in out and "an email address" in out
    assert (
        g.generalize_text('open "Quarterly report.xlsx" at /home/u/docs/a.txt')
        == "open a named item at a file path"
    )


async def test_llm_generalizer_then_rules():
    llm = ScriptedLLM([reply(descriptions=["Retrieve service account credentials", "Go to room_B"])])
    out = await LLMGeneralizer(llm).generalize(
        ["Retrieve Spotify password for john.doe@email.com", "Go to room_B"]
    )
    assert out == ["Retrieve service account credentials", "Go to a room"]


def test_clustering_on_real_embeddings(embedder):
    texts = [
        "Retrieve service account credentials",
        "Retrieve the credentials of a service account",
        "Navigate to the room containing the target object",
        "Navigate to the room that contains the target object",
        "Clean an object at the sink",
    ]
    vecs = embedder.embed(texts)
    groups = cluster(vecs, 0.85)
    as_sets = sorted(sorted(g) for g in groups)
    assert as_sets == [[0, 1], [2, 3], [4]]
    assert len(cluster(vecs, 0.999)) == 5  # the threshold is honoured


def G(content, category="strategy", evidence="success", tid="t1", **kw):
    return Guideline(
        category=category,
        content=content,
        evidence=evidence,
        source_trajectory_ids=[tid],
        metadata={"source_outcomes": {tid: "failure" if evidence == "failure" else "success"}},
        **kw,
    )


def sims(embedder, new, existing):
    if not existing:
        return np.zeros((len(new), 0), dtype=np.float32)
    return embedder.embed([g.content for g in new]) @ embedder.embed([g.content for g in existing]).T


async def test_rule_decider_update_add_on_real_embeddings(embedder):
    old = G("Check which rooms are adjacent before moving to a room", tid="t1")
    dup = G("Check which rooms are adjacent before you move to a room", tid="t2")
    other = G("Pick up the object before leaving the room", tid="t2")
    plan = await RuleDecider().decide("navigate", [old], [dup, other], sims(embedder, [dup, other], [old]))
    actions = [(r.action, r.guideline_id) for r in plan.log]
    assert actions == [("UPDATE", old.id), ("ADD", other.id)]
    merged = plan.writes[old.id]
    assert merged.support == 2 and merged.source_trajectory_ids == ["t1", "t2"]


async def test_success_outranks_failure_when_merging(embedder):
    old = G("Check which rooms are adjacent before moving", evidence="failure", tid="f1")
    new = G("Check which rooms are adjacent before moving anywhere", evidence="success", tid="s1")
    plan = await RuleDecider().decide("navigate", [old], [new], sims(embedder, [new], [old]))
    merged = plan.writes[old.id]
    assert merged.content == new.content and merged.evidence == "both"
    assert "success outranks failure" in plan.log[0].reason


async def test_full_cluster_deletes_weakest_or_skips(embedder):
    existing = [
        G(f"Distinct tip number {w}", evidence="failure", tid=f"f{i}")
        for i, w in enumerate(["alpha", "bravo"])
    ]
    strong = G("Use the map to plan the whole route first", tid="s1")
    plan = await RuleDecider(max_tips_per_cluster=2).decide(
        "x", existing, [strong], sims(embedder, [strong], existing)
    )
    assert [r.action for r in plan.log] == ["DELETE", "ADD"]
    weak = G("Another weak idea", evidence="failure", tid="f9")
    plan2 = await RuleDecider(max_tips_per_cluster=2).decide(
        "x", existing, [weak], sims(embedder, [weak], existing)
    )
    assert [r.action for r in plan2.log] == ["NONE"] and not plan2.writes


async def test_llm_decider_validates_ids_and_applies(embedder):
    a, b = G("tip a text", tid="t1"), G("tip b text", tid="t1")
    n0, n1, n2 = G("new zero", tid="t2"), G("new one", tid="t2"), G("new two", tid="t2")
    bad = reply(decisions=[{"tip": 0, "action": "UPDATE", "target_id": "nope"}])
    good = reply(
        decisions=[
            {
                "tip": 0,
                "action": "UPDATE",
                "target_id": a.id,
                "merged_content": "tip a, merged",
                "reason": "same",
            },
            {"tip": 1, "action": "delete", "target_id": b.id, "reason": "b was wrong"},
            {"tip": 2, "action": "NONE", "reason": "nothing new"},
        ]
    )
    llm = ScriptedLLM([bad, good])
    plan = await LLMDecider(llm).decide("x", [a, b], [n0, n1, n2], np.zeros((3, 2)))
    assert len(llm.history) == 2
    assert [r.action for r in plan.log] == ["UPDATE", "DELETE", "ADD", "NONE"]
    assert plan.writes[a.id].content == "tip a, merged" and plan.deletes == [b.id] and n1.id in plan.writes
    assert all(r.decided_by == "llm" for r in plan.log)


def test_merge_counts_support_once_per_trajectory():
    a = G("x", tid="t1")
    assert merge_into(a, G("x", tid="t1")).support == 1
    assert merge_into(a, G("x", tid="t2")).support == 2


@pytest.mark.parametrize("threshold", [0.0, 1.0])
def test_cluster_extremes(threshold, embedder):
    vecs = embedder.embed(["a cat", "a dog", "quantum physics"])
    n = len(cluster(vecs, threshold))
    assert n == (1 if threshold == 0.0 else 3)
