"""The map's memory of what a move needs first and of where the score rose (``parts/maps.py``): a move that
came into the list only after another action in the same state (a door opened) is advised after that
action, templated by where it leads so it applies to moves never taken; ``route(towards=scored)`` leads
to where the score rose for goals like this one. On recorded episodes, then on the real ScienceWorld."""

from __future__ import annotations

import pytest

from atlas.alma.genome import compile_genome, parse_genome
from atlas.envs.policies import play_policy
from atlas.envs.views import episode_view, task_view
from atlas.protocols.env import Action

GENOME = parse_genome(
    {
        "name": "route-scored",
        "encode": [{"part": "transitions", "params": {"state_key": "location"}}],
        "retrieve": [
            {"part": "route", "params": {"towards": "scored", "context": "none"}},
            {"part": "explore", "params": {"form": "rules"}},
        ],
    }
)


def _design(genome=GENOME) -> dict:
    namespace: dict = {}
    exec(compile(compile_genome(genome), "design", "exec"), namespace)
    return namespace


def _obs(location: str, actions: list[str], score: float = 0.0) -> dict:
    return {"location": location, "actions": actions, "score": score}


def _step(action: str, obs: dict, text: str) -> dict:
    return {
        "action": {"tool": "act", "args": {"command": action}, "text": action},
        "observation": obs,
        "observation_text": text,
        "error": None,
        "score": obs["score"],
        "ended": False,
    }


GOAL = "Find the parrot and focus on it."


def _episode() -> dict:
    """Hall -> (door opened) -> yard, where the score rose; the hall also lists a closed door to the shed."""
    hall_closed = ["open door to yard", "open door to shed", "look around"]
    hall_open = ["go to yard", "open door to shed", "look around"]
    return {
        "task": {"goal": GOAL, "observation": _obs("hall", hall_closed), "observation_text": "A hall."},
        "steps": [
            _step("look around", _obs("hall", hall_closed), "A hall. Doors to the yard and the shed."),
            _step("open door to yard", _obs("hall", hall_open), "The door is now open."),
            _step(
                "go to yard", _obs("yard", ["go to hall", "focus on parrot"], 0.5), "You move to the yard."
            ),
            _step("focus on parrot", _obs("yard", [], 1.0), "You focus on the parrot."),
        ],
        "success": True,
        "score": 1.0,
        "steps_taken": 4,
    }


def _rules(advice: str) -> list[str]:
    return [line.strip() for line in advice.splitlines() if ":" in line]


def test_a_move_is_advised_after_what_made_it_listed_and_toward_where_the_score_rose():
    design = _design()
    memory: dict = {}
    design["update"](memory, _episode(), None)
    m = memory["transitions"]
    assert m["opens"] == {"go to {to}": {"open door to {to}": 1}}, m["opens"]
    assert m["gains"] == {"find parrot focus": {"yard": [1.0, 2]}}, m["gains"]
    task = {"goal": GOAL, "observation": _obs("hall", []), "observation_text": "A hall."}
    rules = _rules(design["recall"](memory, task, None))
    opened, moved = rules.index("In hall: open door to yard."), rules.index("In hall: go to yard.")
    assert opened < moved, rules
    # another goal shares too few words: no scored state, so no route
    other = design["recall"](memory, {**task, "goal": "Boil some water on the stove."}, None)
    assert "go to yard" not in other


def test_an_opener_learned_on_one_door_applies_to_a_move_never_taken():
    """The shed's door was never opened: its move is known only by the learned move template, and the
    action it needs first by the learned opener template."""
    design = _design(
        parse_genome(
            {
                "name": "explore",
                "encode": [{"part": "transitions", "params": {"state_key": "location"}}],
                "retrieve": [{"part": "explore", "params": {"form": "plan"}}],
            }
        )
    )
    memory: dict = {}
    episode = _episode()
    episode["steps"][2]["observation"]["actions"] = ["go to hall", "open door to shed"]  # the yard's door too
    design["update"](memory, episode, None)
    task = {"goal": GOAL, "observation": _obs("hall", []), "observation_text": "A hall."}
    advice = design["recall"](memory, task, None)
    plan = next(line for line in advice.splitlines() if line.startswith("Search plan"))
    steps = [s.strip() for s in plan.removeprefix("Search plan:").rstrip(".").split(",")]
    assert "go to shed" in steps and steps[steps.index("go to shed") - 1] == "open door to shed", steps


def test_a_move_listed_from_the_start_needs_nothing_first():
    design = _design()
    memory: dict = {}
    episode = _episode()
    episode["task"]["observation"]["actions"] = ["go to yard"]
    for step in episode["steps"][:2]:
        step["observation"]["actions"] = ["go to yard", "open door to shed"]
    design["update"](memory, episode, None)
    assert memory["transitions"]["opens"] == {}
    rules = _rules(design["recall"](memory, {"goal": GOAL, "observation": _obs("hall", [])}, None))
    assert "In hall: go to yard." in rules and not any("open door to yard" in r for r in rules), rules


def test_a_move_that_names_no_state_needs_its_opener_only_where_it_was_learned():
    """'go east' came into the hall's list after 'open wooden door'; in the yard it was always listed."""
    design = _design()
    memory: dict = {}
    episode = {
        "task": {
            "goal": GOAL,
            "observation": _obs("hall", ["open wooden door"]),
            "observation_text": "Hall.",
        },
        "steps": [
            _step("open wooden door", _obs("hall", ["go east"]), "You open the door."),
            _step("go east", _obs("yard", ["go east", "go west"]), "-= Yard =-"),
            _step("go east", _obs("field", ["focus on parrot"], 0.5), "-= Field =-"),
        ],
        "success": False,
        "score": 0.5,
        "steps_taken": 3,
    }
    design["update"](memory, episode, None)
    assert memory["transitions"]["opens"] == {"hall\tgo east": {"open wooden door": 1}}
    rules = _rules(design["recall"](memory, {"goal": GOAL, "observation": _obs("hall", [])}, None))
    assert rules.index("In hall: open wooden door.") < rules.index("In hall: go east."), rules
    assert "In yard: go east." in rules and not any(r.startswith("In yard: open") for r in rules), rules


@pytest.mark.scienceworld
def test_on_real_scienceworld_the_route_opens_doors_on_the_way_to_where_the_score_rose(make_env):
    """Gold walks of two train variations of a lifespan task (their score rises outside): a test variation
    is advised, from every room the walks entered, the door to open and the way toward the outside."""
    env = type(make_env("scienceworld"))(
        task_type="lifespan-longest-lived"
    )  # its own simulator, closed below
    try:
        _route_on(env)
    finally:
        env.close()


def _route_on(env) -> None:
    design = _design()
    memory: dict = {}
    for task in env.split_tasks("train", 2, seed=3):
        steps = [line.split(". ", 1)[1] for line in env.oracle_advice(task, "full").splitlines()[1:]]

        def choose(obs, steps=steps):
            return Action("act", {"command": steps.pop(0)}) if steps else None

        design["update"](memory, episode_view(env, play_policy(env, task, choose, "gold", None)), None)
    m = memory["transitions"]
    assert any(states.get("outside", [0])[0] >= 0.5 for states in m["gains"].values()), m["gains"]
    assert m["opens"].get("go to {to}") and max(
        m["opens"]["go to {to}"], key=m["opens"]["go to {to}"].get
    ) == ("open door to {to}")
    test = env.split_tasks("test", 1, seed=0)[0]
    advice = design["recall"](memory, task_view(env, test, env.reset(test)), None)
    rules = _rules(advice)
    for rule in rules:
        if ": go to " in rule:
            room, move = rule.rstrip(".").split(": ", 1)
            opener = f"{room}: open door to {move.removeprefix('go to ')}."  # 'In kitchen: ...'
            assert opener in rules and rules.index(opener) < rules.index(rule), (rule, rules)
    assert any(r.endswith("go to outside.") for r in rules), rules
