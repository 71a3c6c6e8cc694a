"""The screening's climb keeps drawing random genomes after a candidate solved a probe task: one child
in ``EXPLORE_EVERY`` of each climbing round (every other one before anything solved), so a generation
whose first solving genome sits in a poor basin can still meet a better one."""

from __future__ import annotations

import asyncio
import random

import pytest

from atlas.alma.evaluate.harness import make_tasks
from atlas.alma.genome import operators, parse_genome, step
from atlas.alma.genome.operators import env_observation_keys
from atlas.envs.registry import get_env

# GraphWorld's learned map and take rules: its children solve probe tasks from the first round
SOLVER = {
    "name": "solver",
    "encode": [
        {"part": "goal_actions", "params": {"successes_only": False, "state_key": "location"}},
        {"part": "transitions", "params": {"state_key": "location", "neighbors_key": "adjacent_rooms"}},
    ],
    "retrieve": [{"part": "route"}, {"part": "explore"}, {"part": "goal_rules"}],
}


def _climb(pool, embedder, monkeypatch, every: int, **kw) -> tuple[list, int, list[str]]:
    """A 24-candidate screening (one operator round, two climbing rounds) from ``SOLVER``; how many random
    genomes the climbing rounds drew; the screening's notes."""
    drawn = []

    def spy(*args, **kwargs):
        genome = operators.random_genome(*args, **kwargs)
        drawn.append(genome.key)
        return genome

    monkeypatch.setattr(step, "EXPLORE_EVERY", every)
    monkeypatch.setattr(step, "random_genome", spy)
    env = get_env("graphworld", rooms=5)
    collection, deployment = make_tasks(env, episodes=2, seed=4, family=4, deployment_seeds=[10_011])
    screened, notes = asyncio.run(
        step.evolve_candidates(
            "mutate",
            [(parse_genome(SOLVER), None, "")],
            env_observation_keys(env, 4),
            random.Random(3),
            budget=24,
            seen=set(),
            env=env,
            collection=collection,
            probe_tasks=deployment[:2],
            embedder=embedder,
            pool=pool,
            name="t",
            **kw,
        )
    )
    return screened, len(drawn), notes


@pytest.mark.parametrize("every", [4, 0])
def test_after_a_solve_one_child_in_explore_every_is_a_random_genome(pool, embedder, monkeypatch, every):
    screened, drawn, _ = _climb(pool, embedder, monkeypatch, every)
    assert len(screened) == 24
    assert any(c.solved for c in screened[:8]), "the first round solved nothing: the test needs a solver"
    # two climbing rounds of 8 at least (a round whose children repeat earlier ones adds a partial round)
    if every:
        assert drawn >= 2 * 8 // every
    else:
        assert drawn == 0


def test_a_screening_says_how_far_it_got_after_each_round_that_ends_a_while_after_the_last(
    pool, embedder, monkeypatch
):
    lines: list[str] = []
    monkeypatch.setattr(step, "ROUND_LINE_S", 0.0)  # every round is "a while" after the last
    screened, _, _ = _climb(pool, embedder, monkeypatch, 4, on_round=lines.append)
    assert len(lines) >= 3  # the operator's round and two climbing rounds at least
    assert lines[0].startswith("screened  t: 8 of up to 24 candidates, best probe ")
    best = max(c.probe_score for c in screened if not c.error)
    assert f"best probe {best:.3f}" in lines[-1] and "24 of up to 24 candidates" in lines[-1]
    assert "solved a probe task" in lines[-1] and not lines[-1].endswith(" 0 solved a probe task")


def test_a_screening_under_a_time_box_stops_after_its_first_round_once_the_box_is_spent(
    pool, embedder, monkeypatch
):
    screened, _, notes = _climb(pool, embedder, monkeypatch, 4, time_box_s=0.0)
    assert len(screened) == 8  # the first round is always screened; no other starts once the box is spent
    assert notes and notes[-1].startswith("screening stopped after 8 of up to 24 candidates")
    assert len(_climb(pool, embedder, monkeypatch, 4, time_box_s=3600.0)[0]) == 24  # a box not spent
