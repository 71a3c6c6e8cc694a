"""Kinds of action on the goal's things (``parts/kinds.py``): a rule for what no game showed yet, read
from the lists and texts the agent was shown. Real episodes of every built-in environment and plug-in,
the real matcher, and the seed on which a GraphWorld memory learned from games that never picked
anything up."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[2] / "envs"))

import crafting_env  # noqa: F401  (registers "crafting")
import depot_env  # noqa: F401  (registers "depot")
import workbench_env  # noqa: F401  (registers "workbench")

from atlas.agent.advice_match import match_advice
from atlas.alma.genome import compile_genome, genome_design, parse_genome
from atlas.alma.genome.parts.common import frame_of
from atlas.envs.base import action_label
from atlas.envs.policies import WALKS
from atlas.envs.registry import get_env
from atlas.envs.views import episode_view, task_view

pytestmark = pytest.mark.filterwarnings(
    "ignore:.*(not fully supported|unsupported game|Unable to retrieve walkthrough)"
)

KINDS = parse_genome(
    {
        "name": "effects-kinds",
        "encode": [{"part": "effects"}],
        "retrieve": [{"part": "kinds", "params": {"max_rules": 16}}],
    }
)
BUILT_IN = ["graphworld", "alfworld", "textworld", "textworld-fetch"]
PLUG_INS = ["crafting", "workbench", "depot"]


def _design() -> dict:
    namespace: dict = {}
    exec(compile(compile_genome(KINDS), "design", "exec"), namespace)
    return namespace


def _view(env, task) -> dict:
    probe = env.clone()
    try:
        return task_view(probe, task, probe.reset(task))
    finally:
        getattr(probe, "close", lambda: None)()  # a simulator-backed environment gives its process back


def _rules(advice: str) -> list[tuple[str, str]]:
    """(condition, action) per rule line, lower-case."""
    return [tuple(line.lower().rstrip(".").split(": ", 1)) for line in advice.splitlines() if ": " in line]


@pytest.mark.parametrize(
    "env_name", [*BUILT_IN, *PLUG_INS, pytest.param("scienceworld", marks=pytest.mark.scienceworld)]
)
def test_kinds_run_clean_and_fill_listed_kinds_with_the_goals_words_only(env_name, make_env, smoke):
    env = get_env(env_name) if env_name in PLUG_INS else make_env(env_name)
    report = smoke(genome_design(KINDS), env)
    assert report.ran_clean, report.to_feedback()
    failed = [p for c in report.calls for p in c.prints if " failed:" in p]
    assert not failed, failed
    tasks = env.generate_tasks(5, seed=3)
    design, memory = _design(), {}
    play = env.clone()
    try:
        for i, t in enumerate(tasks[:4]):
            design["update"](memory, episode_view(play, WALKS["random"](i).run(play, t)), None)
    finally:
        getattr(play, "close", lambda: None)()
    view = _view(env, tasks[4])
    goal = {w.lower() for w in view["goal"].replace(".", " ").split()}
    kinds = {
        label.split()[0].lower()
        for label in [*view["actions"], *memory["effect_listed"].values()]
        if label.split()
    }
    for cond, action in _rules(design["recall"](memory, view, None)):
        said = action.lower().split()
        assert said[0] in kinds, action  # a kind the agent was shown
        assert set(said) & goal and set(cond.lower().split()) & goal, (cond, action)  # on a goal's thing


def _seen_only_moving() -> tuple[object, dict, dict]:
    """GraphWorld memory from games that only moved (as on a seed whose collection never picked anything
    up), and a task whose goal's object lies where the agent starts."""
    env = get_env("graphworld")
    design, memory = _design(), {}
    tasks = env.generate_tasks(40, seed=9173)
    walked = 0
    for i, task in enumerate(tasks):
        walk = WALKS["random"](i).run(env, task)
        if any(s.tool and s.tool != "move_to" for s in walk.steps):
            continue
        design["update"](memory, episode_view(env, walk), None)
        walked += 1
        if walked == 3:
            break
    assert walked == 3
    assert not any(k.startswith("pick_up") for k in memory["effects"]), "a game picked something up"
    for task in tasks:
        view = _view(env, task)
        thing = view["goal"].split()[2]  # 'Bring the <object> to <room>.'
        if f"pick_up {thing}" in view["actions"]:
            return design, memory, view
    raise AssertionError("no task starts beside its object")


def test_a_kind_no_game_took_is_offered_on_the_goals_thing_and_the_matcher_takes_it():
    design, memory, view = _seen_only_moving()
    thing = view["goal"].split()[2]
    advice = design["recall"](memory, view, None)
    assert (f"objects {thing}", f"pick_up {thing}") in _rules(advice), advice
    matched = match_advice(advice, view["observation_text"], view["actions"])
    assert max(matched.actions, key=matched.actions.get) == f"pick_up {thing}", matched.actions


def test_a_goal_word_framed_as_another_kinds_things_does_not_fill_this_kind():
    design, memory, view = _seen_only_moving()
    room = view["goal"].rstrip(".").split()[-1]  # seen among the adjacent rooms, never among the objects
    rules = _rules(design["recall"](memory, view, None))
    assert (f"objects {room}", f"pick_up {room}") not in rules
    assert not any(action == f"pick_up {room}" for _, action in rules), rules


def _gems(goal: str, shelf: list[str], actions: list[str]) -> dict:
    """A recorded episode on a shelf of gems: polishing does nothing yet, smashing ends the task unsolved."""
    text = "Shelf holds: " + ", ".join(shelf) + "."
    steps = []
    for action in actions:
        smash = action.startswith("smash")
        said = f"{text} The {action.split()[1]} {'breaks' if smash else 'is dull still'}."
        steps.append(
            {
                "action": {"tool": action.split()[0], "args": {}, "text": action},
                "observation": {"shelf": shelf},
                "observation_text": said,
                "error": None,
                "score": 0.0,
                "ended": smash,
            }
        )
        if smash:
            break
    task = {
        "goal": goal,
        "actions": [f"{verb} {g}" for verb in ("polish", "smash") for g in shelf],
        "observation": {"shelf": shelf},
        "observation_text": text,
    }
    return {"task": task, "steps": steps, "success": False, "score": 0.0, "steps_taken": len(steps)}


def test_a_kind_whose_actions_ended_every_task_is_not_offered():
    design, memory = _design(), {}
    for goal, shelf, actions in [
        ("Polish the red gem.", ["red", "blue"], ["polish blue", "smash red"]),
        ("Polish the blue gem.", ["blue", "gold"], ["polish gold", "smash gold"]),
        ("Polish the gold gem.", ["gold", "red"], ["smash red"]),
    ]:
        design["update"](memory, _gems(goal, shelf, actions), None)
    shelf = ["green", "red"]
    view = {
        "goal": "Polish the green gem.",
        "observation": {"shelf": shelf},
        "observation_text": "Shelf holds: green, red.",
        "actions": [f"{verb} {g}" for verb in ("polish", "smash") for g in shelf],
    }
    rules = _rules(design["recall"](memory, view, None))
    assert ("shelf green", "polish green") in rules, rules
    assert not any(action.startswith("smash") for _, action in rules), rules


def test_frame_of_a_word_that_begins_its_sentence_is_empty():
    assert frame_of("Lantern. Objects here: lantern, map.", "objects", {"lantern", "map"}) == ""
    assert frame_of("Objects here: lantern, map.", "lantern", {"lantern", "map"}) == "objects here"


def test_labels_are_kinds_only_through_things_the_text_frames():
    """A listed action that names nothing the text frames is no kind; the kind's example is a listed label."""
    env = get_env("graphworld")
    task = env.generate_tasks(1, seed=4)[0]
    view = _view(env, task)
    labels = [action_label(a.tool, a.args) for a in env.candidate_actions(env.clone().reset(task))]
    assert set(labels) == set(view["actions"])
    design = _design()
    assert design["action_kinds"](["wait", "look around"], {}) == {}
    kinds = design["action_kinds"](
        ["pick_up lamp", "move_to hall"], {"lamp": {"objects": 1}, "hall": {"adjacent": 2}}
    )
    assert kinds == {"pick_up {}": "objects", "move_to {}": "adjacent"}


def test_a_goal_word_earlier_games_sought_and_no_text_framed_fills_no_kind():
    """ScienceWorld asks every variation the same ('find the animal with the longest life span'): the goal
    never varies, so none of its words is the task's form, and none was ever shown as a thing. Such words
    fill no kind ('polish finest'); a word no earlier goal had still does: it may name a thing not seen yet."""
    design, memory = _design(), {}
    for shelf, actions in [(["red", "blue"], ["polish blue"]), (["blue", "gold"], ["polish gold"])]:
        design["update"](memory, _gems("Polish the finest gem.", shelf, actions), None)
    shelf = ["green", "red"]
    view = {
        "observation": {"shelf": shelf},
        "observation_text": "Shelf holds: green, red.",
        "actions": [f"{verb} {g}" for verb in ("polish", "smash") for g in shelf],
    }
    same = _rules(design["recall"](memory, {**view, "goal": "Polish the finest gem."}, None))
    assert not any({"finest", "gem"} & set(action.split()) for _, action in same), same
    new = _rules(design["recall"](memory, {**view, "goal": "Polish the rarest gem."}, None))
    assert ("shelf rarest", "polish rarest") in new, new
