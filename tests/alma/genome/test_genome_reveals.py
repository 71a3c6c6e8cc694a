"""The memory of what showed new things (``reveals``), on real episodes: an action taken where the agent
stood that put things in view no text had shown becomes a rule on how its thing was before, and the agent's
matcher takes it, re-bound to this task's instance, where the text says the same; a move, a take, or a
step that failed is never such a rule."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[2] / "envs"))

import crafting_env  # noqa: F401  (registers "crafting")
import depot_env  # noqa: F401  (registers "depot")
import workbench_env  # noqa: F401  (registers "workbench")

from atlas.agent.advice_match import match_advice
from atlas.alma.genome import compile_genome, parse_genome
from atlas.envs.base import action_label
from atlas.envs.policies import ExplorerPolicy, RandomPolicy, play_policy
from atlas.envs.registry import get_env
from atlas.envs.views import episode_view, task_view

REVEALS = parse_genome(
    {"name": "reveals", "encode": [{"part": "reveals"}], "retrieve": [{"part": "reveals"}]}
)


def _design() -> dict:
    namespace: dict = {}
    exec(compile(compile_genome(REVEALS), "design", "exec"), namespace)
    return namespace


def _play(env, task, actions: list[str]):
    """Play ``actions`` (labels the environment lists) on ``task``, recorded as the task agent's are."""
    todo = list(actions)

    def choose(obs):
        if not todo:
            return None
        listed = {action_label(a.tool, a.args): a for a in env.candidate_actions(obs)}
        assert todo[0] in listed, (todo[0], sorted(listed))
        return listed[todo.pop(0)]

    return play_policy(env, task, choose, "scripted", None)


def _closed_place(env, task) -> tuple[str, str]:
    """A place of ``task``'s household that is closed at the start, and the listed move to it."""
    obs = env.reset(task)
    for action in env.candidate_actions(obs):
        label = action_label(action.tool, action.args)
        if not label.startswith("go to "):
            continue
        probe = env.clone()
        probe.reset(task)
        after = probe.step(action)
        place = label.removeprefix("go to ")
        if f"open {place}" in {
            action_label(a.tool, a.args) for a in probe.candidate_actions(after.observation)
        }:
            return place, label
    pytest.skip("no closed place in this household")


def _household_with_closed_place(env):
    for task in env.generate_family_tasks(20, 0, 100):
        try:
            return task, _closed_place(env, task)
        except pytest.skip.Exception:
            continue
    pytest.skip("no household with a closed place")


def test_opening_a_closed_place_is_learned_and_advised_at_another_closed_place():
    env = get_env("alfworld")
    task, (place, go) = _household_with_closed_place(env)
    walk = _play(env.clone(), task, [go, f"open {place}"])
    design, memory = _design(), {}
    design["update"](memory, episode_view(env, walk), None)
    kind = place.split()[0]
    rec = memory["reveals"][f"open {kind} #"]
    assert rec["shown"] == 1 and rec["n"] == 1, rec
    assert f"go to {kind} #" not in memory["reveals"], "a move is not a reveal"
    advice = design["recall"](memory, task_view(env, task, env.clone().reset(task)), None)
    assert f": open {place}." in advice and "closed" in advice.lower(), advice
    assert not any(ch.isdigit() for ch in advice.split(":")[0]), advice
    # another task of another household: at a closed place of the kind, the matcher opens it
    for other in env.generate_family_tasks(40, 1, 100):
        try:
            there, go_there = _closed_place(env, other)
        except pytest.skip.Exception:
            continue
        if there.split()[0] != kind:
            continue
        play = env.clone()
        obs = play.reset(other)
        listed = {action_label(a.tool, a.args): a for a in play.candidate_actions(obs)}
        obs = play.step(listed[go_there]).observation
        labels = [action_label(a.tool, a.args) for a in play.candidate_actions(obs)]
        match = match_advice(
            advice, play.summarize_observation(obs), labels, [go_there], play.format_goal(other)
        )
        assert match.actions.get(f"open {there}", 0) > 0, (advice, match)
        return
    pytest.skip(f"no other household with a closed {kind}")


def test_taking_a_thing_in_view_shows_nothing_new():
    """A take lists new things to do with what is held ('put', 'examine'), but no new thing: no rule."""
    env = get_env("alfworld")
    for task in env.generate_family_tasks(30, 0, 100):
        play = env.clone()
        obs = play.reset(task)
        for action in play.candidate_actions(obs):
            go = action_label(action.tool, action.args)
            after = play.clone()
            after.reset(task)
            seen = after.step(action).observation
            takes = [
                action_label(a.tool, a.args)
                for a in after.candidate_actions(seen)
                if action_label(a.tool, a.args).startswith("take ")
            ]
            if takes:
                walk = _play(env.clone(), task, [go, takes[0]])
                memory: dict = {}
                _design()["update"](memory, episode_view(env, walk), None)
                took = [r for k, r in memory["reveals"].items() if k.startswith("take ")]
                assert took and all(r["shown"] == 0 for r in took), memory["reveals"]
                assert _design()["recall"](memory, task_view(env, task, env.clone().reset(task)), None) == ""
                return
    pytest.skip("no thing lay in view")


@pytest.mark.parametrize("env_name", ["graphworld", "crafting", "workbench", "depot", "alfworld"])
def test_every_rule_names_an_action_that_showed_new_things_in_half_its_tries(env_name):
    env = get_env(env_name)
    design, memory = _design(), {}
    tasks = env.generate_tasks(8, seed=5)
    for i, task in enumerate(tasks):
        walk = (ExplorerPolicy(i) if env_name == "alfworld" else RandomPolicy(i)).run(env.clone(), task)
        design["update"](memory, episode_view(env, walk), None)
    table = memory["reveals"]
    advice = design["recall"](memory, task_view(env, tasks[0], env.clone().reset(tasks[0])), None)
    for line in advice.splitlines():
        situation, _, action = line.partition(": ")
        assert situation and not any(ch.isdigit() for ch in situation), line
        key = next(k for k, r in table.items() if r["eg"] == action.rstrip("."))
        assert table[key]["shown"] * 2 >= table[key]["n"] > 0, (line, table[key])


def test_a_situation_cut_to_eight_words_ends_on_a_word_that_says_something():
    step = {
        "before": "You are at bench 2. The pebble cactus is a seedling in a cold pot by the door.",
        "action": "water the pebble cactus",
    }
    assert _design()["how_it_was"](step) == "The pebble cactus is a seedling"


def test_malformed_episodes_are_read_without_error():
    design, memory = _design(), {}
    for episode in (
        {},
        {"task": None, "steps": None},
        {"task": {"actions": [3, None]}, "steps": [{"action": None}, {"action": {"text": "open box 2"}}]},
        {
            "task": {},
            "steps": [{"action": {"text": "open box 2"}, "new_actions": [5, "take key 1 from box 2"]}],
        },
    ):
        design["update"](memory, episode, None)
    rec = memory["reveals"]["open box #"]
    assert rec["n"] == 2 and rec["shown"] == 1, rec
    assert design["recall"]({"reveals": {"x": {"n": 1}}}, {"goal": "g"}, None) == ""
