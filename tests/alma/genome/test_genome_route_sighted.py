"""``route(towards=sighted)``: a path in the learned map toward where the goal's words were seen most,
on real episodes of TextWorld's ``fetch`` (the goal names an object, never the room it lies in), played
by the real advice probe in the real sandbox. The same genome routing toward the state the goal names
has nothing to route to there."""

from __future__ import annotations

import asyncio

import pytest

from atlas.alma.genome import genome_design, parse_genome
from atlas.alma.genome.step import probe

pytestmark = [
    pytest.mark.slow,
    pytest.mark.filterwarnings(
        "ignore:.*(not fully supported|unsupported game|Unable to retrieve walkthrough)"
    ),
]


def route_genome(towards: str):
    return parse_genome(
        {
            "name": f"route-{towards}",
            "encode": [
                {"part": "transitions", "params": {"state_key": "location"}},
                {"part": "goal_actions", "params": {"successes_only": False, "state_key": "location"}},
                {"part": "sightings", "params": {"state_key": "location"}},
            ],
            "retrieve": [{"part": "goal_rules"}, {"part": "route", "params": {"towards": towards}}],
        }
    )


def test_route_towards_sighted_leads_to_the_object_where_named_cannot(make_env, pool, embedder):
    env = make_env("textworld-fetch")
    tasks = env.generate_tasks(14, seed=42)
    collection, probe_tasks = tasks[:6], tasks[6:]

    def run(towards: str) -> dict:
        design = genome_design(route_genome(towards))
        return asyncio.run(probe(design, env, collection, probe_tasks, embedder=embedder, pool=pool))

    sighted, named = run("sighted"), run("named")
    assert not sighted["error"] and not named["error"]
    assert sighted["solved"] >= 2, sighted
    assert named["solved"] == 0, named
