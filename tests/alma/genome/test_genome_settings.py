"""Where a panel's setting leads (``parts/settings.py``), learned from random games of the ``belt`` plug-in
in ``tests/envs/`` (a sorting hall whose switches route a belt to bins, a wiring hidden per family), through
the compiled genome's real update and recall, the real advice matcher and the LLM-free advice follower."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[2] / "envs"))

import belt_env
import pytest

from atlas.alma.author.advice_probe import follow_advice
from atlas.alma.genome import compile_genome, parse_genome
from atlas.envs.policies import WALKS
from atlas.envs.registry import get_env
from atlas.envs.views import episode_view, task_view

BUILT_IN = ["graphworld", "alfworld", "textworld", "textworld-fetch"]
PLUG_INS = ["crafting", "workbench", "depot", "console", "belt"]
SETTINGS = parse_genome(
    {"name": "settings", "encode": [{"part": "settings"}], "retrieve": [{"part": "settings"}]}
)


def _design() -> dict:
    namespace: dict = {}
    exec(compile(compile_genome(SETTINGS), "design", "exec"), namespace)
    return namespace


def _learned(family: int, games: int = 24):
    env = get_env("belt")
    design, memory = _design(), {}
    for i, task in enumerate(env.generate_family_tasks(games, family, 0)):
        design["update"](memory, episode_view(env, WALKS["random"](i).run(env, task)), None)
    return env, design, memory


def _advice(env, design, memory, task) -> str:
    probe = env.clone()
    return design["recall"](memory, task_view(probe, task, probe.reset(task)), None)


def _route(family: int, on: set[int]) -> str:
    first, second, _, bins = belt_env.wiring(family)
    return bins[2 * (first in on) + (second in on)]


@pytest.mark.parametrize("family", [2, 4])
def test_each_bin_a_ride_reached_is_tied_to_a_setting_that_leads_there(family):
    _, _, memory = _learned(family)
    table = memory["settings"]
    guard = belt_env.wiring(family)[2]
    reached = 0
    for name, spots in table["led"].items():
        for key, spot in spots.items():
            if spot["go"] and name in belt_env.BINS:
                on = {int(x) for x in table["panels"][key]["switches_on"]}
                assert spot["go"].startswith("ride the belt") and guard in on, (name, key, spot)
                assert _route(family, on) == name, (name, key)
                reached += 1
    assert reached >= 2
    for n in belt_env.SWITCHES:  # one action turns a switch on and off here
        assert (
            table["on"]["switches_on"][str(n)] == table["off"]["switches_on"][str(n)] == f"press switch {n}"
        )
    assert table["take"] and max(table["take"], key=table["take"].get) == "pick up"
    assert max(table["put"], key=table["put"].get) == "put down"


@pytest.mark.parametrize("family", [2, 4, 5])
def test_the_plan_carries_the_thing_to_the_bin_the_goal_names(family):
    """Followed step by step with no model, the advice solves every fresh task of the family; without it
    (or with an empty memory) the follower has nothing to do."""
    env, design, memory = _learned(family)
    for task in env.generate_family_tasks(6, family, 500):
        advice = _advice(env, design, memory, task)
        assert advice.startswith("Steps in order: "), advice
        played = follow_advice(env.clone(), task, advice, unadvised="stop")
        assert played.success, (task.description, advice, played.actions, played.stopped)
        assert not follow_advice(env.clone(), task, "", unadvised="stop").success
        assert _advice(env, design, {}, task) == ""


def test_a_thing_held_rides_by_the_kind_of_action_the_list_shows():
    """The second ride is written as its kind ('ride the belt'): the game held no crate when it rode, and
    the list names the ride with what is held."""
    env, design, memory = _learned(2, games=12)
    task = env.generate_family_tasks(1, 2, 500)[0]
    steps = _advice(env, design, memory, task).removeprefix("Steps in order: ").rstrip(".").split(", ")
    rides = [s for s in steps if s.startswith("ride the belt")]
    assert rides[-1] == "ride the belt" and steps[-1] == "put down", steps


def test_going_needs_what_every_ride_that_reached_a_bin_had_on_and_a_crash_had_off():
    _, design, memory = _learned(4)
    guard = belt_env.wiring(4)[2]
    assert design["_needs"](memory["settings"], "ride the belt empty") == {f"switches_on={guard}"}


def test_where_no_ride_reached_a_bin_the_reading_every_crash_had_is_turned_first():
    """A bin only the switch texts named: its setting, with the switch that turned the reading every crash
    had ('guard shut') away from it, and the ride that ended games as the way to go."""
    _, design, memory = _learned(4)
    table = memory["settings"]
    guard = belt_env.wiring(4)[2]
    assert table["flips"]["guard=shut"] == f"switches_on={guard}"
    table["led"] = {n: {k: {**s, "go": ""} for k, s in spots.items()} for n, spots in table["led"].items()}
    for name in belt_env.BINS:
        want, go = design["_spot_for"](table, name, set())
        if want is not None:
            assert go == "ride the belt empty" and f"switches_on={guard}" in want, (name, want)


@pytest.mark.parametrize(
    "env_name", [*BUILT_IN, *PLUG_INS, pytest.param("scienceworld", marks=pytest.mark.scienceworld)]
)
def test_settings_run_clean_and_plan_only_actions_the_agent_was_shown(env_name, ran_clean, random_games):
    """On every environment, a panel or none: the part runs clean in the sandbox, and each step of its plan
    is an action some list showed, or the words one began with."""
    env = ran_clean(env_name, SETTINGS, PLUG_INS)
    design = _design()
    memory, _, view = random_games(env, design)
    shown = [a.lower() for a in [*view["actions"], *memory["settings"]["listed"]]]
    advice = design["recall"](memory, view, None)
    for step in advice.removeprefix("Steps in order: ").rstrip(".").split(", ") if advice else []:
        assert any(a == step.lower() or a.startswith(step.lower() + " ") for a in shown), (step, advice)


def test_no_plan_where_no_known_setting_leads_to_the_goals_thing():
    """Going to the goal's bin alone carries nothing there: without a way to the crate's bin, no plan."""
    env, design, memory = _learned(2)
    task = env.generate_family_tasks(1, 2, 500)[0]
    assert _advice(env, design, memory, task).startswith("Steps in order: ")
    del memory["settings"]["led"][task.metadata["source"]]
    assert _advice(env, design, memory, task) == ""


def test_the_way_to_a_bin_no_ride_reached_is_the_ride_not_the_walk_back():
    """Where no ride reached the bin, the action that went anywhere most is the way to it, leaving out the
    walks back to the dock (where tasks start), however often they were taken."""
    _, design, memory = _learned(4)
    table = memory["settings"]
    bins = [n for n in table["led"] if n in belt_env.BINS]
    for name in bins:
        table["led"][name] = {k: {**s, "go": ""} for k, s in table["led"][name].items()}
    walks = sum(1 for s in table["led"]["dock"].values() if s["go"] == "walk back")
    assert walks >= 1
    want, go = design["_spot_for"](table, bins[0], set(), {"dock"})
    assert want is not None and go.startswith("ride the belt"), go


def test_a_list_of_every_bin_said_under_one_setting_does_not_tie_them_all_to_it():
    """A sentence naming every bin, rewritten at each step under one setting (a list of where each crate
    lies), is said there more often than the switch texts said any bin: the bin still goes to the setting
    whose texts named it alone."""
    _, design, memory = _learned(4)
    table = memory["settings"]
    table["led"] = {n: {k: {**s, "go": ""} for k, s in spots.items()} for n, spots in table["led"].items()}
    noisy = "switches_on=1"
    assert noisy in table["panels"]
    before = {name: design["_spot_for"](table, name, set())[0] for name in belt_env.BINS}
    for name in belt_env.BINS:
        spot = table["led"][name].setdefault(noisy, {"n": 0, "go": "", "end": 0})
        spot["n"] += 30 * 0.25
    routed = 0
    for name in belt_env.BINS:
        want, _ = design["_spot_for"](table, name, set())
        if before[name] is None or _route(4, {int(i.split("=")[1]) for i in before[name]}) != name:
            continue
        routed += 1
        assert want == before[name], (name, want, before[name])
    assert routed >= 2
