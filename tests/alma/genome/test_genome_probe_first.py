"""While no candidate of a screening has scored, each plays every probe task; once one has, the next play
the first ``PROBE_FIRST`` and the rest only after scoring one of them (memory that helps only tasks
starting where its collection looked sees nothing on two tasks)."""

from __future__ import annotations

import asyncio
import random

from atlas.alma.evaluate.harness import make_tasks
from atlas.alma.genome import step
from atlas.alma.genome.baselines import baseline_genome
from atlas.alma.genome.operators import env_observation_keys
from atlas.envs.registry import get_env


def _first_round(pool, embedder, monkeypatch, every: bool) -> tuple[list, int]:
    """The first round of a screening from ``trajectory_retrieval`` on 4 GraphWorld probe tasks, on whose
    first two none of its mutations scores."""
    monkeypatch.setattr(step, "PROBE_ALL_WHILE_FLAT", every)
    env = get_env("graphworld", rooms=5)
    collection, deployment = make_tasks(env, episodes=2, seed=4, family=4, deployment_seeds=[10_011, 10_012])
    screened, _ = asyncio.run(
        step.evolve_candidates(
            "mutate",
            [(baseline_genome("trajectory_retrieval"), None, "")],
            env_observation_keys(env, 4),
            random.Random(7),
            budget=4,
            seen=set(),
            env=env,
            collection=collection,
            probe_tasks=deployment,
            embedder=embedder,
            pool=pool,
            name="t",
        )
    )
    return screened, len(deployment)


def test_while_nothing_scored_every_candidate_plays_every_probe_task(pool, embedder, monkeypatch):
    two_first, tasks = _first_round(pool, embedder, monkeypatch, every=False)
    every, _ = _first_round(pool, embedder, monkeypatch, every=True)
    collections = len(step.PROBE_COLLECTIONS)
    assert tasks > step.PROBE_FIRST
    assert not any(c.probe_score > 0 for c in two_first)
    assert [c.played for c in two_first] == [step.PROBE_FIRST * collections] * len(two_first)
    assert [c.played for c in every] == [tasks * collections] * len(every)
    assert [c.genome.key for c in every] == [c.genome.key for c in two_first], "the same candidates"
    assert any(c.probe_score > 0 for c in every), "the later probe tasks show what the first two did not"
