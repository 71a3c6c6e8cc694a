"""Built-in policies: deterministic, recorded like the agent, reasonable on GraphWorld."""

from __future__ import annotations

import statistics

import pytest

from atlas.envs import ExplorerPolicy, RandomPolicy
from atlas.envs.graphworld import GraphWorldEnv
from atlas.errors import EnvError


def test_policies_are_deterministic_and_record_steps():
    env = GraphWorldEnv()
    task = env.generate_tasks(1, seed=21)[0]
    for policy in (RandomPolicy(3), ExplorerPolicy(3)):
        a, b = policy.run(env.clone(), task), policy.run(env.clone(), task)
        assert [s.action for s in a.steps] == [s.action for s in b.steps]
        assert a.score == b.score and a.metadata["steps_taken"] == b.metadata["steps_taken"]
        assert a.metadata["initial_observation"]["location"]
        for s in a.steps:
            assert s.tool in {"move_to", "pick_up", "put_down"} and s.data is not None
            assert s.action.startswith(f"{s.tool}(")


def test_explorer_beats_random():
    env = GraphWorldEnv()
    tasks = env.generate_tasks(20, seed=0)
    explorer = [ExplorerPolicy(0).run(env, t) for t in tasks]
    random_ = [RandomPolicy(0).run(env, t) for t in tasks]
    assert sum(t.success for t in explorer) >= 16
    assert statistics.mean(t.score for t in explorer) > statistics.mean(t.score for t in random_)
    assert all(t.metadata["steps_taken"] <= env.max_steps for t in explorer + random_)


def test_an_environment_without_an_explorer_is_played_at_random():
    class Odd(GraphWorldEnv):
        name = "odd"

    task = GraphWorldEnv().generate_tasks(1, seed=0)[0]
    explored = ExplorerPolicy(0).run(Odd(), task)
    assert explored.metadata["policy"] == "random" and explored.steps


def test_an_environment_with_neither_explorer_nor_candidates_is_a_clear_error():
    class Bare(GraphWorldEnv):
        name = "bare"
        candidate_actions = None  # type: ignore[assignment]

    with pytest.raises(EnvError, match="neither an explorer"):
        ExplorerPolicy(0).run(Bare(), GraphWorldEnv().generate_tasks(1, seed=0)[0])


def test_goal_word_policy_acts_on_what_the_goal_names():
    from atlas.envs.base import action_label
    from atlas.envs.policies import GoalWordPolicy

    env = GraphWorldEnv()
    tasks = env.generate_tasks(20, seed=0)
    a, b = GoalWordPolicy(4).run(env.clone(), tasks[0]), GoalWordPolicy(4).run(env.clone(), tasks[0])
    assert [s.action for s in a.steps] == [s.action for s in b.steps] and a.metadata["policy"] == "goal-word"
    greedy = [GoalWordPolicy(0, greed=1.0).run(env, t) for t in tasks]
    random_ = [RandomPolicy(0).run(env, t) for t in tasks]

    def named(trajectories):  # steps whose action names a word of the goal
        return sum(
            1
            for t in trajectories
            for s in t.steps
            if set(action_label(s.tool, s.args).lower().split())
            & set(t.task.description.lower().strip(".").split())
        )

    assert named(greedy) > 2 * named(random_)
    assert sum(t.success for t in greedy) > sum(t.success for t in random_)
