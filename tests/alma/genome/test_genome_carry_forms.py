"""``goal_actions(any_item)`` on real TextWorld ``fetch`` episodes: a collection that never did what
its goals asked, but picked up other things on the way, teaches the form of picking up for the thing
of any goal. Real environment, real sandbox; the walk below is test scaffolding, not a part."""

from __future__ import annotations

import random

import pytest

from atlas.alma.author.smoke import stub_llm
from atlas.alma.evaluate.runner import DesignRunner
from atlas.alma.genome import genome_design, parse_genome
from atlas.envs.base import EpisodeRecorder, action_label
from atlas.envs.policies import goal_words
from atlas.envs.views import episode_view, task_view

pytestmark = pytest.mark.filterwarnings(
    "ignore:.*(not fully supported|unsupported game|Unable to retrieve walkthrough)"
)


def genome(any_item: bool):
    return parse_genome(
        {
            "name": "carry",
            "encode": [
                {
                    "part": "goal_actions",
                    "params": {"successes_only": False, "state_key": "location", "any_item": any_item},
                }
            ],
            "retrieve": [{"part": "goal_rules"}],
        }
    )


def errand_elsewhere(env, task, seed: int):
    """Walk at random and take whatever lies about except what the goal names; stop after carrying
    something through two more rooms (a failed episode)."""
    rng = random.Random(seed)
    goal = {w.lower() for w in goal_words(env.format_goal(task))}
    obs = env.reset(task)
    rec = EpisodeRecorder(env, task, obs)
    took, moves_after = [], 0
    for _ in range(env.max_steps):
        labels = {action_label(a.tool, a.args): a for a in env.candidate_actions(obs)}
        takes = [lb for lb in labels if lb.startswith("take ") and lb.split()[1] not in goal]
        if takes and not took:
            label = takes[0]
            took.append(label.split()[1])
        else:
            label = rng.choice(sorted(lb for lb in labels if lb.startswith("go ")))
            moves_after += bool(took)
        result = env.step(labels[label])
        rec.record(labels[label].tool, labels[label].args, result)
        obs = result.observation
        if result.done or moves_after >= 2:
            break
    return rec.finish(policy="errand-elsewhere", turns=len(rec.steps)), took


def test_a_thing_taken_on_another_errand_teaches_taking_the_goals_thing(make_env, pool, embedder):
    env = make_env("textworld-fetch")
    tasks = env.generate_tasks(12, seed=42)
    played, taken = [], []
    for i, task in enumerate(tasks):
        trajectory, took = errand_elsewhere(env, task, i)
        if took and not trajectory.success:
            played.append(episode_view(env, trajectory))
            taken += took
        if len(played) == 2:
            break
    assert len(played) == 2, "the walk found nothing to take in 12 tasks"
    target = tasks[-1]
    item = next(w for w in goal_words(env.format_goal(target)) if w.lower() not in {"find", "take"})
    view = task_view(env, target, env.clone().reset(target))

    def advice(any_item: bool) -> list[str]:
        runner = DesignRunner(genome_design(genome(any_item)), embedder=embedder, llm=stub_llm(), pool=pool)
        try:
            for j, ep in enumerate(played):
                assert runner.update_sync(ep, label=f"C{j}").ok
            text, log = runner.recall_sync(view)
            assert log.ok, log.error
            return (text or "").splitlines()
        finally:
            runner.close()

    lines = advice(True)
    assert [x for x in lines if x.endswith(f": take {item}.")], (taken, item, lines)
    assert advice(False) == [], taken
