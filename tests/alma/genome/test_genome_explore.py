"""``explore`` on real TextWorld ``fetch`` episodes, where the observation names the room but not its
neighbours: the map's only way out is a move the room listed that was never tried there. The search
plan covers the known rooms and then takes the nearest untried move; a task that starts off the map
gets the rules instead (from each known room, toward the nearest untried move). Real environment, real
sandbox; the random walk below is test scaffolding, not a part."""

from __future__ import annotations

import random
import re

import pytest

from atlas.alma.author.smoke import stub_llm
from atlas.alma.evaluate.runner import DesignRunner
from atlas.alma.genome import genome_design, parse_genome
from atlas.envs.base import EpisodeRecorder, action_label
from atlas.envs.views import episode_view, task_view

pytestmark = pytest.mark.filterwarnings(
    "ignore:.*(not fully supported|unsupported game|Unable to retrieve walkthrough)"
)


def genome(form: str):
    keyed = {"state_key": "location"}
    return parse_genome(
        {
            "name": "explore",
            "encode": [{"part": "transitions", "params": keyed}],
            "retrieve": [{"part": "explore", "params": {"form": form}}],
        }
    )


def labels_of(env, obs) -> dict:
    return {action_label(a.tool, a.args): a for a in env.candidate_actions(obs)}


def short_walk(env, task, seed: int, moves: int = 4):
    """A few random moves: a collection that saw part of the house. Also which move was tried where
    and the rooms entered."""
    rng = random.Random(seed)
    obs = env.reset(task)
    rec = EpisodeRecorder(env, task, obs)
    tried, entered = set(), {obs["location"]}
    for _ in range(moves):
        labels = labels_of(env, obs)
        label = rng.choice(sorted(lb for lb in labels if lb.startswith("go ")))
        tried.add((obs["location"], label))
        result = env.step(labels[label])
        rec.record(labels[label].tool, labels[label].args, result)
        obs = result.observation
        entered.add(obs["location"])
        if result.done:
            break
    return rec.finish(policy="short-walk", turns=len(rec.steps)), tried, entered


def advice_for(env, played, target, form, pool, embedder) -> list[str]:
    runner = DesignRunner(genome_design(genome(form)), embedder=embedder, llm=stub_llm(), pool=pool)
    try:
        for j, ep in enumerate(played):
            assert runner.update_sync(episode_view(env, ep), label=f"C{j}").ok
        text, log = runner.recall_sync(task_view(env, target, env.clone().reset(target)))
        assert log.ok, log.error
        return (text or "").splitlines()
    finally:
        runner.close()


def test_the_search_plan_leaves_the_known_map_by_an_untried_move(make_env, pool, embedder):
    env = make_env("textworld-fetch")
    tasks = env.generate_tasks(8, seed=3)
    walks = [short_walk(env, t, i) for i, t in enumerate(tasks[:2])]
    played = [w[0] for w in walks]
    tried, entered = set().union(*(w[1] for w in walks)), set().union(*(w[2] for w in walks))
    sought = {env.format_goal(t) for t in tasks[:2]}  # a goal sought in vain is looked for off the map
    target = next(
        t
        for t in tasks[2:]
        if env.clone().reset(t)["location"] in entered and env.format_goal(t) not in sought
    )
    lines = advice_for(env, played, target, "plan", pool, embedder)
    plans = [x for x in lines if x.startswith("Search plan: ")]
    assert len(plans) == 1, lines
    steps = plans[0].removeprefix("Search plan: ").removesuffix(".").split(", ")
    game = env.clone()
    obs = game.reset(target)
    seen = []
    for step in steps:  # a walk the game allows, every step listed where it is taken
        labels = labels_of(game, obs)
        assert step in labels, (step, obs["location"], sorted(labels))
        seen.append(obs["location"])
        obs = game.step(labels[step]).observation
    assert (seen[-1], steps[-1]) not in tried, (seen[-1], steps[-1])  # the last move was never tried there
    assert set(seen) <= entered


def test_a_task_that_starts_off_the_map_gets_rules_toward_its_edge(make_env, pool, embedder):
    env = make_env("textworld-fetch")
    tasks = env.generate_tasks(12, seed=3)
    played, _, entered = short_walk(env, tasks[0], 0, moves=2)
    played = [played]
    target = next(t for t in tasks[1:] if env.clone().reset(t)["location"] not in entered)
    lines = advice_for(env, played, target, "plan", pool, embedder)
    assert not [x for x in lines if x.startswith("Search plan")], lines
    rules = [re.fullmatch(r"In (\w+): (go \w+)\.", x) for x in lines]
    assert rules and all(rules), lines
    assert {m.group(1) for m in rules} <= entered, (lines, entered)
