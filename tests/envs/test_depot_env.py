"""The depot plug-in (``tests/envs/depot_env.py``): a world with none of GraphWorld's wording, played
by the policies and learned from by environment-blind parts, as a user's plug-in would be."""

from __future__ import annotations

import asyncio

import depot_env  # noqa: F401  (registers "depot")

from atlas.alma.author.smoke import asmoke_run
from atlas.alma.genome import genome_design, parse_genome
from atlas.envs.policies import GoalWordPolicy
from atlas.envs.registry import get_env

GENOME = {
    "name": "depot-map-and-goal",
    "encode": [
        {"part": "transitions", "params": {"state_key": "position", "neighbors_key": "paths"}},
        {"part": "goal_actions", "params": {"successes_only": False, "state_key": "position"}},
    ],
    "retrieve": [
        {"part": "goal_rules"},
        {"part": "route", "params": {"context": "goal_items"}},
        {"part": "explore", "params": {"form": "plan", "max_steps": 30}},
    ],
}


def test_the_plugin_plays_and_a_genome_learns_it_from_failures_alone(embedder):
    env = get_env("depot")
    tasks = env.generate_tasks(7, 42)
    walks = [GoalWordPolicy(0).run(env, t) for t in tasks[:3]]
    assert not any(w.success for w in walks)  # nothing to learn from but failures
    report = asyncio.run(
        asmoke_run(
            genome_design(parse_genome(GENOME)),
            env,
            tasks=(tasks[:3], tasks[3:]),
            explorer_episodes=0,
            embedder=embedder,
        )
    )
    assert report.ran_clean, report.to_feedback()
    advice = "\n".join(report.advice)
    assert ": grab " in advice and "with holding " in advice, advice  # framed in depot's own words
    assert sum(p["success"] for p in report.probes) >= 2, report.probes
