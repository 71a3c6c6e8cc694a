"""The climb learns from the agent check: genomes whose probe with the task agent's own collection games
was best (``checked_anchors``) stay sources of the screening's climb, each candidate made from one names
it, and the best-screened of those takes a check slot before the screening's own picks (``to_check``)."""

from __future__ import annotations

import asyncio
import random

from atlas.alma.evaluate.harness import make_tasks
from atlas.alma.genome import baseline_genome
from atlas.alma.genome.operators import env_observation_keys, random_genome
from atlas.alma.genome.step import Candidate, evolve_candidates
from atlas.alma.search.agent_check import ANCHORS, OWN_KIND, checked_anchors, checked_likeness, to_check
from atlas.alma.state.archive import ArchiveEntry
from atlas.alma.state.search_record import CheckedRow, SearchRecord
from atlas.envs.registry import get_env

G = [baseline_genome(n) for n in ("trajectory_retrieval", "cheatsheet", "reasoning_bank", "spatial_graph")]


def _row(genome, agent_probe, steered=0.1):
    return CheckedRow(genome=genome.model_dump(), agent_probe=agent_probe, agent_steered=steered)


def _entry(i: int, *checked: CheckedRow) -> ArchiveEntry:
    return ArchiveEntry(
        id=f"d-{i:04d}", name=f"m{i}", origin="meta", status="invalid", search=SearchRecord(checked=checked)
    )


def test_anchors_are_the_best_own_games_probes_each_once_never_0_and_unloadable_genomes_are_skipped():
    entries = [
        _entry(1, _row(G[0], 0.30), _row(G[1], 0.0), CheckedRow(genome={"encode": 3}, agent_probe=0.9)),
        _entry(2, _row(G[2], 0.50, 0.2), _row(G[0], 0.45)),
        ArchiveEntry(id="d-0003", name="m3", origin="baseline"),  # no search record
    ]
    assert [g.key for g in checked_anchors(entries)] == [G[2].key, G[0].key]  # G[0] at its best, 0.45
    assert ANCHORS == 2 and [g.key for g in checked_anchors(entries, n=5)] == [G[2].key, G[0].key]
    # a played genome whose probe was measured with its own games (``probe_of``) counts too
    played = ArchiveEntry(
        id="d-0004",
        name="m4",
        origin="meta",
        status="ok",
        search=SearchRecord(genome=G[3].model_dump(), probe_score=0.9, steered=0.9, probe_kind=OWN_KIND),
    )
    assert checked_anchors([*entries, played])[0].key == G[3].key
    played.search.probe_kind = "logged"  # a screening score is not an own-games probe
    assert G[3].key not in {g.key for g in checked_anchors([*entries, played], n=5)}


def test_an_anchors_best_screened_child_is_checked_first_then_the_screenings_best_of_each_kind():
    rng = random.Random(4)
    keys = env_observation_keys(get_env("graphworld"), 0)
    a, b, *near = [random_genome(rng, keys) for _ in range(5)]
    kinds = [tuple(sorted(u.part for u in g.retrieve)) for g in (G[0], G[1], near[0], near[1])]
    assert len(set(kinds)) == 4, "the premise: each candidate below retrieves with other parts"

    def cand(g, score, anchor=None, solved=1, error=""):
        key = anchor.key if anchor is not None else ""
        return Candidate(genome=g, probe_score=score, steered=score, solved=solved, anchor=key, error=error)

    top = cand(G[0], 0.9)
    screened = [
        top,
        cand(G[0].model_copy(update={"name": "copy"}), 0.8),  # the same retrieve parts as ``top``
        cand(near[0], 0.2, anchor=a),
        cand(near[1], 0.4, anchor=a),  # a's best-screened child
        cand(
            near[2], 0.0, anchor=b, solved=0
        ),  # its probe scored nothing (no solve, no partial): never checked
        cand(G[1], 0.5),
        cand(G[2], 0.95, error="crashed"),
    ]
    assert to_check(screened, [a, b], limit=4) == [screened[3], top, screened[5], screened[2]]
    assert to_check(screened, [a, b], limit=2) == [screened[3], top]  # anchors take at most half
    assert to_check(screened, [a], limit=1) == [top]
    assert to_check(screened, [], limit=6) == [top, screened[5], screened[3], screened[2]]


def test_a_near_copy_of_a_checked_genome_or_of_another_pick_is_not_checked():
    a, b = G[0], G[3]
    reordered = a.model_copy(update={"name": "reordered", "retrieve": list(reversed(a.retrieve))})
    other = G[1]

    def cand(g, score, anchor):
        return Candidate(genome=g, probe_score=score, steered=score, solved=1, anchor=anchor.key)

    earlier = [
        _entry(1, _row(a, 0.7).model_copy(update={"screen_score": 0.6698}), _row(b, 0.5)),
        _entry(2, CheckedRow(genome={"encode": 3}, agent_probe=0.2, screen_score=0.1)),
    ]
    known = checked_likeness(earlier)
    # rows without a screening score, and genomes that do not load, are skipped
    assert known == {(tuple(sorted({r.part for r in a.retrieve})), 0.67)}
    screened = [
        cand(reordered, 0.66981, a),  # a again, parts reordered: screens the same as a did
        cand(other, 0.55, a),
        cand(other.model_copy(update={"name": "twin"}), 0.55, b),  # b's child, a near copy of a's pick
        cand(b, 0.4, b),
    ]
    assert to_check(screened, [a, b], limit=4, checked=known) == [screened[1], screened[3]]
    assert (
        to_check(screened, [a, b], limit=4)[0] is screened[0]
    )  # nothing checked before: a's copy goes first


def test_the_climb_keeps_an_anchor_as_a_source_and_its_children_name_it(pool, embedder):
    env = get_env("graphworld", rooms=5)
    collection, deployment = make_tasks(env, episodes=2, seed=4, family=4, deployment_seeds=[10_011])
    # the anchor is one of ~6 sources each climb draw picks from, and while nothing scores half the draws
    # are random genomes: about one seed in twenty never picks it in 32 draws (seed 6 of this catalog)
    keys, rng = env_observation_keys(env, 4), random.Random(7)
    anchor = baseline_genome("spatial_graph")
    screened, _ = asyncio.run(
        evolve_candidates(
            "mutate",
            [(baseline_genome("trajectory_retrieval"), None, "")],
            keys,
            rng,
            budget=40,
            seen={anchor.key},
            env=env,
            collection=collection,
            probe_tasks=deployment[:2],
            embedder=embedder,
            pool=pool,
            name="t",
            anchors=[anchor],
        )
    )
    first_round = screened[:8]  # the operator's children of the parent
    assert all(c.anchor == "" for c in first_round)
    made = [c for c in screened if c.anchor]
    assert made and {c.anchor for c in made} == {anchor.key}
    assert all(c.genome.key != anchor.key for c in screened)
