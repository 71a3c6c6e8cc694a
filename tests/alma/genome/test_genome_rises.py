"""The memory of what raised the score (``rises``), on real episodes: each action whose step raised a
plug-in's partial score becomes a rule on the sentence that named its thing, and the agent's matcher takes
that action again where a later text reads alike; where only a finished task scores, only finishing steps."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[2] / "envs"))

import console_env  # (registers "console")
import crafting_env  # noqa: F401  (registers "crafting")
import depot_env  # noqa: F401  (registers "depot")
import workbench_env  # noqa: F401  (registers "workbench")

from atlas.agent.advice_match import match_advice
from atlas.alma.genome import compile_genome, parse_genome
from atlas.alma.genome.parts.common import scored_steps, unnumbered
from atlas.envs.base import action_label
from atlas.envs.policies import GoalWordPolicy, RandomPolicy
from atlas.envs.registry import get_env
from atlas.envs.views import episode_view, task_view

RISES = parse_genome({"name": "rises", "encode": [{"part": "rises"}], "retrieve": [{"part": "rises"}]})


def _design() -> dict:
    namespace: dict = {}
    exec(compile(compile_genome(RISES), "design", "exec"), namespace)
    return namespace


def _learn(env_name: str, games: int = 12):
    env = get_env(env_name)
    tasks = env.generate_tasks(games, seed=3)
    design, memory, walks = _design(), {}, []
    for i, task in enumerate(tasks):
        walk = RandomPolicy(i).run(env, task)
        design["update"](memory, episode_view(env, walk), None)
        walks.append(walk)
    return env, design, memory, walks


@pytest.mark.parametrize("env_name", ["crafting", "workbench"])
def test_an_action_that_raised_the_score_is_advised_where_the_text_reads_as_it_did(env_name):
    """Every rule names an action that raised the score in some game, its situation has no numbers, and
    replayed to the step where it rose, the text there meets the rule's situation."""
    env, design, memory, walks = _learn(env_name)
    rose = {
        unnumbered(s["action"])
        for w in walks
        for s in scored_steps(episode_view(env, w))
        if s["gain"] > 0 and not s["error"]
    }
    assert rose, "no random game raised the score: nothing to learn from"
    checked = 0
    for walk in walks:
        view = episode_view(env, walk)
        advice = design["recall"](memory, task_view(env, walk.task, env.clone().reset(walk.task)), None)
        rules = [line for line in advice.splitlines() if ": " in line]
        assert {unnumbered(line.split(": ", 1)[1].rstrip(".")) for line in rules} <= rose, advice
        assert not any(ch.isdigit() for line in rules for ch in line.split(": ", 1)[0]), advice
        replay = env.clone()
        obs = replay.reset(walk.task)
        for step, scored in zip(walk.steps, scored_steps(view), strict=False):
            labels = [action_label(a.tool, a.args) for a in replay.candidate_actions(obs)]
            taken = action_label(step.tool, step.args)
            if scored["gain"] > 0 and taken in labels and f": {taken}." in advice:
                seen, goal = replay.summarize_observation(obs), env.format_goal(walk.task)
                own = [line for line in rules if line.endswith(f": {taken}.")]  # alone: others may fit better
                found = [match_advice(line, seen, labels, goal=goal).actions.get(taken, 0) for line in own]
                assert max(found) > 0, (seen, own)
                checked += 1
            obs = replay.step(step).observation
    assert checked, "no advised rise was replayed"


@pytest.mark.parametrize("env_name", ["graphworld", "depot"])
def test_where_only_a_finished_task_scores_only_the_finishing_steps_are_rules(env_name):
    env = get_env(env_name)
    tasks = env.generate_tasks(13, seed=3)
    design, memory, finishing = _design(), {}, set()
    for i, task in enumerate(tasks[:12]):
        walk = GoalWordPolicy(i, greed=0.8).run(env, task)
        design["update"](memory, episode_view(env, walk), None)
        if walk.success:
            finishing.add(unnumbered(action_label(walk.steps[-1].tool, walk.steps[-1].args)))
    assert finishing, "no game finished its task"
    advised = set()
    for task in tasks:
        advice = design["recall"](memory, task_view(env, task, env.clone().reset(task)), None)
        advised |= {unnumbered(line.split(": ", 1)[1].rstrip(".")) for line in advice.splitlines()}
    assert advised and advised <= finishing, (advised, finishing)


def test_the_sentence_keeps_a_list_s_head_and_the_item_the_action_names():
    said = _design()["said_before"](
        {
            "action": "chop mushroom 8",
            "before": "You take the mushroom. You hold: leek 2 (whole), mushroom 8 (whole). Oven: empty.",
        }
    )
    assert said == "You hold mushroom whole"


def test_a_plural_goal_word_stands_for_the_name_shown():
    """The goal's 'eggs' fills a kind of action with the 'egg 3' the task lists, not with 'eggs'."""
    namespace: dict = {}
    genome = parse_genome({"name": "kinds", "encode": [{"part": "effects"}], "retrieve": [{"part": "kinds"}]})
    exec(compile(compile_genome(genome), "design", "exec"), namespace)
    task = {
        "goal": "Bring the eggs to the hall.",
        "observation": {"here": ["egg 3", "lamp 1"]},
        "observation_text": "Lying here: egg 3, lamp 1.",
        "actions": ["take egg 3", "take lamp 1", "go north"],
    }
    rules = namespace["retrieve_kinds"]({}, task, None, {})
    assert {"kind": "rule", "cond": ["lying egg"], "action": "take egg 3"} in rules, rules
    assert not [r for r in rules if "eggs" in r["action"]], rules
    assert not [r for r in rules if "hall" in r["action"]], rules  # the task lists 'take' on the eggs only
    assert [namespace["stem"](w) for w in ("potatoes", "berries", "boxes", "glass", "fish")] == [
        "potato",
        "berry",
        "box",
        "glass",
        "fish",
    ]


def test_a_record_without_goals_gives_no_rule_and_no_error():
    """A memory edited by hand or cut short: a rise with no goal recorded is about no goal."""
    memory = {
        "rises": {
            "chop mushroom #": {
                "n": 2,
                "ends": 0,
                "said": ["You hold mushroom"],
                "goals": [],
                "eg": "chop mushroom 8",
            }
        }
    }
    assert _design()["retrieve_rises"](memory, {"goal": "Serve the mushroom stew."}, None, {}) == []


def test_a_rise_that_named_two_goal_words_is_advised_only_where_the_goal_names_both():
    """'move mug 1 to shelf 2' rose for a mug on a shelf: it is no rule for a mug in the sink, where taking
    it again would put the mug on the wrong place; a rise naming one goal word still applies to its goals."""
    memory = {
        "rises": {
            "move mug # to shelf #": {
                "n": 1,
                "ends": 0,
                "said": ["You carry mug"],
                "goals": [["mug", "put", "shelf"]],
                "eg": "move mug 1 to shelf 2",
            },
            "take mug # from desk #": {
                "n": 1,
                "ends": 0,
                "said": ["On the desk you see mug"],
                "goals": [["mug", "put", "shelf"]],
                "eg": "take mug 1 from desk 1",
            },
        }
    }
    retrieve = _design()["retrieve_rises"]
    on_shelf = {r["action"] for r in retrieve(memory, {"goal": "put a mug on the shelf"}, None, {})}
    in_sink = {r["action"] for r in retrieve(memory, {"goal": "put a mug in the sink"}, None, {})}
    assert on_shelf == {"move mug 1 to shelf 2", "take mug 1 from desk 1"}, on_shelf
    assert in_sink == {"take mug 1 from desk 1"}, in_sink


@pytest.mark.parametrize("family", [0, 2, 3])
def test_a_setting_is_advised_only_for_the_goal_it_was_right_for(family):
    """On the console plug-in a lever's number is a setting: 'pull oak 4' shows amber, 'pull pine 3' sets
    level 3. Learned from random games of one family, every exact pull advised for a new task of that
    family is the right one for that task's goal (the latest risen pull, re-bound, was right for about
    one in four)."""
    env = console_env.ConsoleEnv()
    design, memory = _design(), {}
    for i, task in enumerate(env.generate_family_tasks(60, family, seed=0)):
        design["update"](memory, episode_view(env, RandomPolicy(i).run(env, task)), None)
    right = advised = 0
    for task in env.generate_family_tasks(24, family, seed=1000):
        obs = env.clone().reset(task)
        advice = design["recall"](memory, task_view(env, task, obs), None)
        colour_lever, level_lever, colours = console_env.wiring(family)
        for line in advice.splitlines():
            said = line.rstrip(".").split(": ", 1)[-1].split()
            if len(said) == 3 and said[0] == "pull":
                lever, position = said[1], int(said[2])
                advised += 1
                right += (lever == level_lever and position == task.metadata["level"]) or (
                    lever == colour_lever and colours[position - 1] == task.metadata["colour"]
                )
    assert advised >= 4, f"too few pulls advised to judge: {advised}"
    assert right == advised, f"{right} of {advised} advised pulls were right"


def test_a_setting_that_rose_for_one_value_is_not_advised_for_another():
    """'pull pine 3' rose under two goals naming 3, 'pull pine 5' (the latest) under one naming 5: a goal
    naming 3 is advised 'pull pine 3', not the latest form; a goal naming 4 nothing; where the task lists
    the kind at one number only, the latest form re-binds as before."""
    three, five = [["3", "amber", "level"], ["3", "cyan", "level"]], [["5", "level", "olive"]]
    settings = {"pull pine 3": {"n": 2, "goals": three}, "pull pine 5": {"n": 1, "goals": five}}
    rec = {
        "n": 3,
        "ends": 0,
        "said": ["Power on"],
        "goals": three + five,
        "eg": "pull pine 5",
        "settings": settings,
    }
    counts = {"level": 3, "3": 2, "5": 1, "amber": 1, "cyan": 1, "olive": 1}
    memory = {"rises": {"pull pine #": rec}, "rise_goals": {"episodes": 3, "words": counts}}
    retrieve = _design()["retrieve_rises"]
    listed = ["press", "pull pine 2", "pull pine 3", "pull pine 4", "pull pine 5"]

    def advised(goal, actions):
        return {r["action"] for r in retrieve(memory, {"goal": goal, "actions": actions}, None, {})}

    assert advised("violet level 3", listed) == {"pull pine 3"}
    assert advised("olive level 5", listed) == {"pull pine 5"}
    assert advised("violet level 4", listed) == set()
    assert advised("amber level 3", ["press", "pull pine 7"]) == {"pull pine 5"}  # not a setting here
