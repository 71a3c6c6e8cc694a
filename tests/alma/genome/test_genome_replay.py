"""Screening learns from the task agent's own collection episodes: their recorded actions, played
again on the environment, give the same episode a design received, invalid replies skipped."""

from __future__ import annotations

from atlas.alma.genome.step import replayed_episodes
from atlas.envs import ExplorerPolicy, get_env
from atlas.envs.base import action_label


def test_recorded_actions_replay_into_the_episode_a_design_gets():
    env = get_env("graphworld", rooms=6)
    tasks = env.generate_tasks(2, seed=3)
    records = []
    expected = []
    for task in tasks:
        play = env.clone()
        trajectory = ExplorerPolicy(0).run(play, task)
        labels = [action_label(s.tool, s.args) for s in trajectory.steps if s.tool]
        expected.append((labels, trajectory.success))
        actions = [{"text": "dance wildly"}] + [{"text": t} for t in labels]  # one reply that was no action
        records.append({"phase": "collection", "task_id": task.id, "actions": actions})
    records.append({"phase": "deployment", "task_id": "other", "actions": []})
    replayed = replayed_episodes(env, tasks, records)
    assert replayed is not None and len(replayed) == 2
    for (first, episode, outcome), (labels, success) in zip(replayed, expected, strict=True):
        assert first["goal"] == episode["task"]["goal"]
        assert [s["action"]["text"] for s in episode["steps"]] == [
            t for t in labels if not t.startswith("look")
        ]
        assert episode["success"] is success and outcome["success"] is success
        assert all(s["observation"].get("location") for s in episode["steps"])


def test_without_a_record_for_every_task_the_explorer_stands_in():
    env = get_env("graphworld", rooms=6)
    tasks = env.generate_tasks(2, seed=3)
    assert (
        replayed_episodes(env, tasks, [{"phase": "collection", "task_id": tasks[0].id, "actions": []}])
        is None
    )
