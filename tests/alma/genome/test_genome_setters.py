"""What sets what (``parts/setters.py``): which kind of action sets which field of the observation and to
what, learned from random games of the ``console`` plug-in in ``tests/envs/`` (a hidden wiring of levers
to readings), through the compiled genome's real update and recall and the real advice matcher."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[2] / "envs"))

import console_env

from atlas.agent.advice_match import match_advice
from atlas.alma.genome import compile_genome, parse_genome
from atlas.envs.base import EpisodeRecorder, action_label
from atlas.envs.policies import WALKS
from atlas.envs.registry import get_env
from atlas.envs.views import episode_view, task_view
from atlas.protocols.env import Action

SETTERS = parse_genome(
    {"name": "setters", "encode": [{"part": "setters"}], "retrieve": [{"part": "setters"}]}
)
FAMILY = 3


def _design(genome=SETTERS) -> dict:
    namespace: dict = {}
    exec(compile(compile_genome(genome), "design", "exec"), namespace)
    return namespace


def _learned(games: int = 12):
    env = get_env("console")
    design, memory = _design(), {}
    for i, task in enumerate(env.generate_family_tasks(games, FAMILY, 0)):
        design["update"](memory, episode_view(env, WALKS["random"](i).run(env, task)), None)
    return env, design, memory


def _advice(env, design, memory, task) -> str:
    probe = env.clone()
    return design["recall"](memory, task_view(probe, task, probe.reset(task)), None)


def _named(lines: list[str], field: str) -> list[str]:
    """The actions of the rule written under ``field`` ('In level: pull pine 4.')."""
    line = next((x for x in lines if x.removeprefix("In ").startswith(f"{field}: ")), "")
    return line.removeprefix("In ").removeprefix(f"{field}: ").rstrip(".").split(" or ")


def test_the_kind_of_action_that_sets_a_field_is_learned_with_what_each_action_left():
    _, _, memory = _learned()
    colour_lever, level_lever, colours = console_env.wiring(FAMILY)
    level = memory["setters"]["level"]
    assert max(level, key=lambda k: level[k]["n"]) == f"pull {level_lever} #"
    assert level[f"pull {level_lever} #"]["own"] == level[f"pull {level_lever} #"]["n"] > 0
    colour = memory["setters"]["colour"][f"pull {colour_lever} #"]
    assert colour["values"] and colour["own"] == 0
    for action, value in colour["values"].items():  # each pull left the colour its notch shows
        assert value == colours[int(action.split()[-1]) - 1], (action, value)
    assert "steps_left" not in memory["setters"] and "message" not in memory["setters"]


def test_the_advice_sets_each_field_the_goal_names_to_the_goals_value():
    """The level lever on the goal's level (it left every level at its own notch); the colour lever on the
    notch seen to show the goal's colour, else on every listed notch not seen to show another."""
    env, design, memory = _learned()
    colour_lever, level_lever, colours = console_env.wiring(FAMILY)
    seen = memory["setters"]["colour"][f"pull {colour_lever} #"]["values"]
    for task in env.generate_family_tasks(8, FAMILY, 500):
        lines = _advice(env, design, memory, task).splitlines()
        want = task.metadata
        assert _named(lines, "level") == [f"pull {level_lever} {want['level']}"], lines
        start = env.clone()
        listed = [action_label(a.tool, a.args) for a in start.candidate_actions(start.reset(task))]
        if want["colour"] in seen.values():
            expected = [f"pull {colour_lever} {colours.index(want['colour']) + 1}"]
        else:
            expected = [a for a in listed if a.startswith(f"pull {colour_lever} ") and a not in seen]
        assert (_named(lines, "colour") if expected else []) == expected, (lines, want)
        assert expected or not any("colour:" in line for line in lines), lines


def test_a_setter_rule_applies_only_while_the_observation_shows_its_field():
    """Beside a plan (as the other retrieve parts write one), the dark console follows the plan; once the
    level is shown, the rule that sets it."""
    env, design, memory = _learned()
    _, level_lever, _ = console_env.wiring(FAMILY)
    task = next(t for t in env.generate_family_tasks(9, FAMILY, 900) if t.metadata["level"] != 1)
    advice = _advice(env, design, memory, task) + "\nNot tried yet: press, confirm, pull oak 3."
    play = env.clone()
    dark = play.reset(task)
    labels = [action_label(a.tool, a.args) for a in play.candidate_actions(dark)]
    want = f"pull {level_lever} {task.metadata['level']}"
    assert match_advice(advice, play.summarize_observation(dark), labels).actions == {"press": 1.0}
    lit = play.step(play.candidate_actions(dark)[0]).observation  # press: the power comes on
    labels = [action_label(a.tool, a.args) for a in play.candidate_actions(lit)]
    match = match_advice(advice, play.summarize_observation(lit), labels)
    assert match.lines and all(":" in line and "Not tried" not in line for line in match.lines), match
    advised = {a: v for a, v in match.actions.items() if v > 0}
    assert advised and min(advised.values()) >= 0.5, match
    level = match_advice(advice.replace("colour", "dye"), play.summarize_observation(lit), labels)
    assert max(level.actions, key=level.actions.get) == want and level.actions[want] >= 0.5, level
    assert all(v < 0 for a, v in level.actions.items() if a != want), level


def test_the_settings_seen_to_leave_a_field_elsewhere_are_avoided_while_it_is_shown():
    """Each listed notch seen to leave the colour at another colour than the goal's is avoided (so a colour
    found right is not set wrong again), never the wanted notch, and not on the dark console."""
    env, design, memory = _learned()
    colour_lever, _, _ = console_env.wiring(FAMILY)
    seen = memory["setters"]["colour"][f"pull {colour_lever} #"]["values"]
    checked = 0
    for task in env.generate_family_tasks(8, FAMILY, 500):
        play = env.clone()
        dark = play.reset(task)
        advice = _advice(env, design, memory, task)
        lit = play.step(play.candidate_actions(dark)[0]).observation
        labels = [action_label(a.tool, a.args) for a in play.candidate_actions(lit)]
        wrong = {a for a, v in seen.items() if v != task.metadata["colour"] and a in labels}
        match = match_advice(advice, play.summarize_observation(lit), labels)
        lowered = {a for a, v in match.actions.items() if v < 0 and a.startswith(f"pull {colour_lever} ")}
        assert lowered == wrong, (advice, match)
        dark_labels = [action_label(a.tool, a.args) for a in play.candidate_actions(dark)]
        assert not any(
            v < 0
            for v in match_advice(advice, play.summarize_observation(dark), dark_labels).actions.values()
        )
        checked += bool(wrong)
    assert checked >= 4


def test_a_choice_of_setters_is_no_plan_while_the_field_is_not_shown():
    """The colour rule offering several notches names no action on the dark console: it is a choice for
    when the colour shows, not steps to walk before (a plan of them turned locked levers in the dark). Three
    games leave most colours unseen."""
    env, design, memory = _learned(games=3)
    colour_lever, _, _ = console_env.wiring(FAMILY)
    for task in env.generate_family_tasks(12, FAMILY, 700):
        advice = _advice(env, design, memory, task)
        if len(_named(advice.splitlines(), "colour")) < 3:
            continue
        play = env.clone()
        dark = play.reset(task)
        labels = [action_label(a.tool, a.args) for a in play.candidate_actions(dark)]
        match = match_advice(advice, play.summarize_observation(dark), labels)
        assert not any(a.startswith(f"pull {colour_lever} ") for a in match.actions), (advice, match)
        return
    raise AssertionError("no task's advice offered a choice of three notches")


def test_a_goal_that_names_no_field_gets_no_setter_advice():
    env, design, memory = _learned()
    task = env.generate_family_tasks(1, FAMILY, 900)[0]
    probe = env.clone()
    view = {**task_view(probe, task, probe.reset(task)), "goal": "Confirm the reading."}
    assert design["recall"](memory, view, None).strip() == ""


def test_a_reading_shown_only_while_lit_is_learned_from_one_short_game():
    """Power on (the readings appear), one pull, power off (they go): the pull set the colour. A reading
    that appears and goes has not changed at every step; only one that does, by every kind of action (the
    steps left), is passed over."""
    env = get_env("console")
    task = env.generate_family_tasks(1, FAMILY, 0)[0]
    colour_lever, _, colours = console_env.wiring(FAMILY)
    obs = env.reset(task)
    rec = EpisodeRecorder(env, task, obs)
    for action in (Action("press"), Action("pull", {"lever": colour_lever, "position": 3}), Action("press")):
        rec.record(action.tool, action.args, env.step(action))
    design, memory = _design(), {}
    design["update"](memory, episode_view(env, rec.finish(policy="scripted", turns=3)), None)
    assert memory["setters"]["colour"] == {
        f"pull {colour_lever} #": {"n": 1, "own": 0, "values": {f"pull {colour_lever} 3": colours[2]}}
    }
    assert "steps_left" not in memory["setters"]


def test_the_action_the_goal_names_is_advised_once_every_field_it_names_reads_as_the_goal_says():
    """'…, then confirm.': confirm is advised above every setting once the colour and the level read as the
    goal says, and not while either is off (each field a phrase that must be shown word for word)."""
    env, design, memory = _learned()
    colour_lever, level_lever, colours = console_env.wiring(FAMILY)
    for task in env.generate_family_tasks(8, FAMILY, 500):
        advice = _advice(env, design, memory, task)
        want = task.metadata
        rule = f'"level {want["level"]}" with "colour {want["colour"]}": confirm.'
        assert rule in advice.splitlines(), advice
        play = env.clone()
        obs = play.reset(task)
        for action in (
            Action("press"),
            Action("pull", {"lever": level_lever, "position": int(want["level"])}),
            Action("pull", {"lever": colour_lever, "position": colours.index(want["colour"]) + 1}),
        ):
            labels = [action_label(a.tool, a.args) for a in play.candidate_actions(obs)]
            if action_label(action.tool, action.args) not in labels:  # a lever already at its notch
                continue
            seen = play.summarize_observation(obs)
            assert match_advice(advice, seen, labels).actions.get("confirm", 0.0) <= 0.0, (advice, seen)
            obs = play.step(action).observation
        labels = [action_label(a.tool, a.args) for a in play.candidate_actions(obs)]
        match = match_advice(advice, play.summarize_observation(obs), labels)
        assert max(match.actions, key=match.actions.get) == "confirm", (advice, match)
        assert play.step(Action("confirm")).success


def test_no_finishing_rule_without_an_action_the_goal_names_or_when_switched_off():
    env, design, memory = _learned()
    task = env.generate_family_tasks(1, FAMILY, 500)[0]
    probe = env.clone()
    view = task_view(probe, task, probe.reset(task))
    unnamed = design["recall"](memory, {**view, "goal": view["goal"].replace(", then confirm", "")}, None)
    assert "colour:" in unnamed and "confirm" not in unnamed, unnamed
    off = parse_genome(
        {
            "name": "setters-no-finish",
            "encode": [{"part": "setters"}],
            "retrieve": [{"part": "setters", "params": {"finish": False}}],
        }
    )
    advice = _design(off)["recall"](memory, view, None)
    assert "colour:" in advice and "confirm" not in advice, advice
