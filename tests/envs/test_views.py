"""The information boundary: task_view / episode_view show only what the agent saw."""

from __future__ import annotations

import json

import pytest

from atlas.agent.choice import render_action
from atlas.core.types import Step, Task, Trajectory
from atlas.envs import ExplorerPolicy, RandomPolicy, episode_view, task_view
from atlas.envs.base import NEW_ACTIONS_PER_EPISODE, NEW_ACTIONS_PER_STEP, EpisodeRecorder
from atlas.envs.graphworld import GraphWorldEnv
from atlas.protocols.env import Action, StepResult


def _keys(obj) -> set[str]:
    if isinstance(obj, dict):
        return set(obj) | {k for v in obj.values() for k in _keys(v)}
    if isinstance(obj, list):
        return {k for v in obj for k in _keys(v)}
    return set()


def test_task_view_shape():
    env = GraphWorldEnv()
    task = env.generate_tasks(1, seed=3)[0]
    first = env.reset(task)
    view = task_view(env, task, first)
    assert set(view) == {"goal", "observation", "observation_text", "actions", "domain"}
    assert view["goal"] == task.description and view["domain"] == "graphworld"
    assert view["actions"] == [
        render_action(a) for a in env.candidate_actions(first)
    ]  # what the agent is shown
    assert view["actions"] and all(isinstance(a, str) for a in view["actions"])
    assert view["observation_text"] == env.summarize_observation(first)  # what the agent reads
    assert view["observation"] == first and view["observation"] is not first  # a copy
    json.dumps(view)


@pytest.mark.parametrize(
    "policy",
    [RandomPolicy(1, max_turns=4), RandomPolicy(2), ExplorerPolicy(0, max_turns=3), ExplorerPolicy(0)],
)
def test_views_never_reveal_unobserved_objects_or_seeds(policy):
    env = GraphWorldEnv(objects=6)
    for task in env.generate_tasks(15, seed=50):
        traj = policy.run(env, task)
        world = env._world  # hidden state, tests only
        episode = episode_view(env, traj)
        first = episode["task"]["observation"]
        observations = [first] + [s["observation"] for s in episode["steps"]]
        seen = {o for obs in observations for o in obs.get("objects_here", []) + obs.get("inventory", [])}
        for view in (episode, episode["task"]):
            text = json.dumps(view)
            # No seeds, families, params, ids or any hidden-state key.
            assert not _keys(view) & {
                "seed",
                "family",
                "params",
                "metadata",
                "id",
                "destination",
                "object_rooms",
                "target_object",
            }
            assert task.id not in text
            for obj in world.object_rooms:
                if obj in seen:
                    continue
                occurrences = text.count(f'"{obj}') + text.count(f" {obj}")
                allowed = view_goal_mentions(view, obj)
                assert occurrences == allowed, (obj, text)


def view_goal_mentions(view: dict, obj: str) -> int:
    goal = view["goal"] if "goal" in view else view["task"]["goal"]
    return goal.count(f" {obj}")


def _action(step):
    return Action(step.tool, step.args)


def test_episode_view_shape_and_outcome():
    env = GraphWorldEnv()
    task = env.generate_tasks(1, seed=12)[0]
    traj = ExplorerPolicy(0).run(env, task)
    ep = episode_view(env, traj)
    assert set(ep) == {"task", "steps", "success", "score", "steps_taken"}
    # the actions listed at the start, as recorded while the episode was live
    assert (
        ep["task"]["actions"]
        == traj.metadata["initial_actions"]
        == task_view(env.clone(), task, env.clone().reset(task))["actions"]
    )
    assert ep["success"] is True and ep["score"] == traj.score and ep["steps_taken"] == env.steps_taken()
    assert ep["steps"][-1]["score"] == traj.score > ep["steps"][0]["score"] == 0.0  # solved by the last step
    assert len(ep["steps"]) == len(traj.steps)
    shown = set(ep["task"]["actions"])  # every action listed so far in the episode
    probe = env.clone()
    probe.reset(task)
    for s, raw in zip(ep["steps"], traj.steps, strict=True):
        assert set(s) == {
            "action",
            "observation",
            "observation_text",
            "error",
            "score",
            "ended",
            "new_actions",
        }
        listed = [render_action(a) for a in probe.candidate_actions(probe.step(_action(raw)).observation)]
        if not s["ended"]:  # what the step brought into the list, and only that
            assert s["new_actions"] == [a for a in dict.fromkeys(listed) if a not in shown], s
        shown |= set(listed)
        assert s["score"] == raw.score and 0.0 <= s["score"] <= 1.0  # the score right after the step
        assert s["observation_text"] == raw.observation  # the text the agent read after the action
        # text: the action as the agent's action list writes it ("move_to room_B"), for advice
        assert s["action"] == {
            "tool": raw.tool,
            "args": raw.args,
            "text": " ".join([raw.tool, *raw.args.values()]),
        }
        assert s["observation"] == raw.data
    assert [s["ended"] for s in ep["steps"]] == [False] * (len(traj.steps) - 1) + [
        True
    ]  # solved: ended early
    json.dumps(ep)


def test_episode_view_rebuilds_first_observation_and_keeps_invalid_replies():
    env = GraphWorldEnv()
    task = env.generate_tasks(1, seed=12)[0]
    first = env.clone().reset(task)
    traj = Trajectory(
        task=task, steps=[Step(action="I think I will fly", error="reply is not a JSON action")]
    )
    ep = episode_view(env, traj)
    assert ep["task"]["observation"] == first
    assert ep["task"]["actions"] == []  # not recorded: never read again from a replayed reset
    assert ep["steps"] == [
        {
            "action": {"tool": "", "args": {}, "text": ""},
            "observation": {},
            "observation_text": "",
            "error": "reply is not a JSON action",
            "score": None,
            "ended": False,
            "new_actions": [],
        }
    ]
    assert ep["steps_taken"] == 1 and ep["success"] is False


class _Shelves:
    """A store whose every step lists forty new things to take: the record of what a step brought into
    the list stays small."""

    name, max_steps = "shelves", 12

    def reset(self, task):
        self.steps = 0
        return self.observe()

    def observe(self):
        return {"aisle": f"aisle {self.steps}"}

    def candidate_actions(self, observation):
        return [Action("walk", {})] + [Action("take", {"item": f"item {self.steps}-{i}"}) for i in range(40)]

    def step(self, action):
        self.steps += 1
        return StepResult(self.observe())

    def score(self):
        return 0.0

    def success(self):
        return False

    def steps_taken(self):
        return self.steps

    def format_goal(self, task):
        return task.description

    def summarize_observation(self, observation):
        return f"You are in {observation['aisle']}."


def test_what_a_step_brought_into_the_list_is_capped_per_step_and_per_episode():
    env = _Shelves()
    task = Task(id="shelves-0", description="Take the last item.", domain="shelves")
    rec = EpisodeRecorder(env, task, env.reset(task))
    steps = [rec.record("walk", {}, env.step(Action("walk", {}))) for _ in range(12)]
    counts = [len(s.new_actions or []) for s in steps]
    assert counts[0] == NEW_ACTIONS_PER_STEP and sum(counts) == NEW_ACTIONS_PER_EPISODE, counts
    assert all(a.startswith("take item") for s in steps for a in s.new_actions or [])
