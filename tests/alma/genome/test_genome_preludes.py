"""What was done before an action that raised the score (``parts/preludes.py``), learned from games of the
``kiln`` plug-in in ``tests/envs/`` (a firing takes only after the clay's preparation for that stage, hidden
per family), played through the real environment and read through the compiled genome's real update and
recall, the real advice matcher and the LLM-free advice follower."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[2] / "envs"))

import kiln_env
import pytest

from atlas.alma.author.advice_probe import follow_advice
from atlas.alma.genome import compile_genome, parse_genome
from atlas.core.types import Task
from atlas.envs.base import EpisodeRecorder
from atlas.envs.policies import WALKS
from atlas.envs.registry import get_env
from atlas.envs.views import episode_view, task_view
from atlas.protocols.env import Action

BUILT_IN = ["graphworld", "alfworld", "textworld", "textworld-fetch"]
PLUG_INS = ["crafting", "workbench", "depot", "console", "belt", "kiln"]
PRELUDES = parse_genome(
    {"name": "preludes", "encode": [{"part": "preludes"}], "retrieve": [{"part": "preludes"}]}
)
FAMILY = 4


def _with_tries(trigger: bool):
    """``preludes`` with ``untried`` (its ``trigger`` on or off) for what no game tried yet."""
    return parse_genome(
        {
            "name": "preludes-untried",
            "encode": [{"part": "effects"}, {"part": "preludes"}],
            "retrieve": [{"part": "preludes"}, {"part": "untried", "params": {"trigger": trigger}}],
        }
    )


def _design(genome=PRELUDES) -> dict:
    namespace: dict = {}
    exec(compile(compile_genome(genome), "design", "exec"), namespace)
    return namespace


def _task(clay: str, i: int = 0) -> Task:
    return Task(
        id=f"kiln-test-{i}",
        description=f"Fire the {clay} pot to stoneware.",
        domain="kiln",
        metadata={"family": FAMILY, "clay": clay},
    )


def _played(env, task: Task, commands: list[str]) -> dict:
    """The episode view of ``commands`` played through the real environment."""
    recorder = EpisodeRecorder(env, task, env.reset(task))
    for command in commands:
        result = env.step(Action("act", {"command": command}))
        recorder.record("act", {"command": command}, result)
        if result.done:
            break
    return episode_view(env, recorder.finish())


def _advice(env, design, memory, task) -> str:
    probe = env.clone()
    return design["recall"](memory, task_view(probe, task, probe.reset(task)), None)


def _steps(advice: str) -> list[str]:
    return advice.removeprefix("Steps in order: ").rstrip(".").split(", ") if advice else []


def _clay(name: str) -> tuple[tuple[str, ...], str, list[str]]:
    """The clay's needs, the preparation that cracks it and one that does neither."""
    wants, spoiler = kiln_env.needs(FAMILY)[name]
    idle = [p.format(name) for p in kiln_env.PREPS if p.format(name) not in (*wants, spoiler)]
    return wants, spoiler, idle


def test_the_prelude_is_what_came_before_every_rise_and_not_before_the_tries_that_failed():
    """A firing that changed nothing after an idle preparation, one that took after the stage's need, and
    one that took after both: the plan's first stage is the need alone, then the firing."""
    env, design, memory = get_env("kiln"), _design(), {}
    wants, _, idle = _clay("red clay")
    fire = kiln_env.FIRE
    for i, commands in enumerate([[idle[0], fire, wants[0], fire], [wants[0], idle[0], fire]]):
        design["update"](memory, _played(env, _task("red clay", i), commands), None)
    assert _steps(_advice(env, design, memory, _task("red clay", 9)))[:2] == [wants[0], fire]


def test_each_stage_keeps_what_came_before_its_rises_across_games():
    """Three games rose at the first stage, two at the second, one at the third, each with an idle
    preparation before a firing that changed nothing. The plan walks the stages in order, each need then
    the firing (repeated once per stage: a game saw it rise twice), and solves a new task."""
    env, design, memory = get_env("kiln"), _design(), {}
    wants, _, idle = _clay("grey clay")
    fire = kiln_env.FIRE
    games = [
        [idle[0], fire, wants[0], fire, fire],
        [wants[0], fire, idle[0], fire, wants[1], fire],
        [wants[0], fire, wants[1], fire, idle[0], fire, wants[2], fire],
    ]
    for i, commands in enumerate(games):
        design["update"](memory, _played(env, _task("grey clay", i), commands), None)
    task = _task("grey clay", 10)
    advice = _advice(env, design, memory, task)
    assert _steps(advice) == [wants[0], fire, wants[1], fire, wants[2], fire]
    assert follow_advice(env.clone(), task, advice).success


def test_no_plan_for_a_thing_no_game_acted_on():
    """A clay no game fired gets no other clay's plan."""
    env, design, memory = get_env("kiln"), _design(), {}
    wants, _, _ = _clay("red clay")
    design["update"](memory, _played(env, _task("red clay"), [wants[0], kiln_env.FIRE]), None)
    assert _advice(env, design, memory, _task("red clay", 5)).startswith("Steps in order: ")
    assert _advice(env, design, memory, _task("white clay", 5)) == ""


def test_random_games_teach_the_first_stage_of_each_clay_they_fired():
    """From random games of a family: for each clay whose first firing took in some game, the plan's first
    stage holds the clay's first need, and following it takes the pot past the first stage."""
    env, design, memory = get_env("kiln"), _design(), {}
    for i, task in enumerate(env.generate_family_tasks(40, FAMILY, 0)):
        design["update"](memory, episode_view(env, WALKS["random"](i).run(env.clone(), task)), None)
    planned = 0
    for clay in kiln_env.CLAYS:
        task = _task(clay, 20)
        steps = _steps(_advice(env, design, memory, task))
        if not steps:
            continue
        planned += 1
        wants, spoiler, _ = _clay(clay)
        first = steps[: steps.index(kiln_env.FIRE) + 1]
        assert wants[0] in first and spoiler not in steps, (clay, steps)
        assert follow_advice(env.clone(), task, _advice(env, design, memory, task)).score >= 1 / 3
    assert planned >= 2


def _first_stage_after_trying(trigger: bool) -> tuple[list[str], list[str], tuple[str, ...]]:
    """The advice after a game with no rise (an idle preparation, a firing, the cracking one), then the
    first stage of the plan learned from one game that followed that advice."""
    env, design = get_env("kiln"), _design(_with_tries(trigger))
    memory: dict = {}
    wants, spoiler, idle = _clay("white clay")
    game = [idle[0], kiln_env.FIRE, idle[0], kiln_env.FIRE, spoiler]
    design["update"](memory, _played(env, _task("white clay", 0), game), None)
    task = _task("white clay", 1)
    advice = _advice(env, design, memory, task).splitlines()[0]
    followed = follow_advice(env.clone(), task, advice)
    design["update"](memory, _played(env, task, followed.actions), None)
    steps = _steps(_advice(env, design, memory, _task("white clay", 2)).partition("\n")[0])
    first = steps[: steps.index(kiln_env.FIRE) + 1] if kiln_env.FIRE in steps else []
    return advice, followed.actions, first, wants


def test_tries_each_followed_by_the_trigger_name_the_one_that_made_the_rise():
    """Where no game raised the score, ``untried`` with ``trigger`` lists the untried preparations, each
    then the firing (the action that emptied the list of what was done): the game that follows it fires
    after each try, rises on the firing after the first need, and ``preludes`` then plans that need
    alone. Without ``trigger`` the list holds the preparations alone (the firing was tried), and a game
    that follows it never raises the score: nothing to learn a stage from."""
    advice, played, first, wants = _first_stage_after_trying(trigger=True)
    assert advice.startswith(f"Not tried yet, each then {kiln_env.FIRE}: ")
    assert played[1::2] == [kiln_env.FIRE] * (len(played) // 2) and wants[0] in played[::2], played
    assert first == [wants[0], kiln_env.FIRE]
    advice, played, first, _ = _first_stage_after_trying(trigger=False)
    assert advice.startswith("Not tried yet: ") and kiln_env.FIRE not in played and first == [], played


def test_the_trigger_is_the_action_that_emptied_the_list_of_what_was_done():
    """The trigger is the action after which the observation's list of the actions done so far was empty;
    an action that answered differently each time but emptied nothing (a move answers with each place it
    reaches) is none, and the list is plain tries."""
    design = _design(_with_tries(trigger=True))
    listed = ["rest", "chant", "water the fern", "shade the fern", "mist the fern"]
    task = {"goal": "Grow the fern.", "actions": listed}

    def first_line(rest_empties: bool) -> str:
        memory: dict = {}
        done: list[str] = []
        steps = []
        for action, reply in [
            ("chant", "You chant."),
            ("rest", "The fern wilts."),
            ("rest", "It looks pale."),
        ]:
            done = [] if action == "rest" and rest_empties else [*done, action]
            steps.append(
                {"action": {"text": action}, "observation_text": reply, "observation": {"done": done}}
            )
        design["update"](memory, {"task": {**task, "observation": {"done": []}}, "steps": steps}, None)
        return design["recall"](memory, task, None).partition("\n")[0]

    assert first_line(rest_empties=True) == (
        "Not tried yet, each then rest: water the fern, shade the fern, mist the fern."
    )
    assert first_line(rest_empties=False) == "Not tried yet: water the fern, shade the fern, mist the fern."


def test_a_try_the_trigger_never_followed_is_still_untried():
    """With ``trigger``, an action counts as tried only once the trigger followed it: a game that watered
    and shaded the fern and ended before the next rest showed nothing of either, so both stay on the list
    (chant, which a rest followed, does not). Without ``trigger`` every taken action is tried."""
    listed = ["rest", "chant", "water the fern", "shade the fern", "mist the fern"]
    task = {"goal": "Grow the fern.", "actions": listed}
    game = [("chant", ["chant"]), ("rest", []), ("water the fern", ["water the fern"])]
    game += [("shade the fern", ["water the fern", "shade the fern"])]
    steps = [
        {"action": {"text": action}, "observation_text": f"You {action}.", "observation": {"done": done}}
        for action, done in game
    ]

    def first_line(trigger: bool) -> str:
        design, memory = _design(_with_tries(trigger=trigger)), {}
        design["update"](memory, {"task": {**task, "observation": {"done": []}}, "steps": steps}, None)
        return design["recall"](memory, {**task, "observation": {"done": []}}, None).partition("\n")[0]

    assert first_line(trigger=True) == (
        "Not tried yet, each then rest: water the fern, shade the fern, mist the fern."
    )
    assert first_line(trigger=False) == ""  # all taken are tried: one left is no plan


@pytest.mark.parametrize(
    "env_name", [*BUILT_IN, *PLUG_INS, pytest.param("scienceworld", marks=pytest.mark.scienceworld)]
)
def test_preludes_run_clean_and_plan_only_actions_the_agent_was_shown(env_name, ran_clean, random_games):
    """On every environment: the part runs clean in the sandbox, and each step of its plan is an action
    some game took."""
    env = ran_clean(env_name, PRELUDES, PLUG_INS)
    design = _design()
    memory, taken, view = random_games(env, design)
    for step in _steps(design["recall"](memory, view, None)):
        assert step.lower() in taken, step


def test_malformed_episodes_and_tasks_teach_nothing_and_break_nothing():
    """Episodes without a task, steps, action texts or numeric scores, and tasks without a goal: no error,
    no stage from them, no plan."""
    design, memory = _design(), {}
    for episode in [
        {},
        {"task": None, "steps": None},
        {"task": {"goal": ""}, "steps": [{}]},
        {
            "task": {"goal": "Fire 3 pots."},
            "steps": [{"action": None}, {"action": {"text": "fire"}, "score": "x"}],
        },
    ]:
        design["update"](memory, episode, None)
    assert not memory["preludes"]
    for task in [{}, {"goal": None}, {"goal": "Fire 3 pots."}]:
        assert design["recall"](memory, task, None) == ""


def test_observations_of_any_shape_give_no_trigger_and_break_nothing():
    """``effects`` + ``preludes`` + ``untried`` (trigger on) fed observations that are no mapping (text, a
    list mixing text and numbers, None) or that nest lists inside mappings: no error, the plain list of
    tries, no trigger read from them. The same steps with a mapping whose list of what was done empties give the trigger."""
    design = _design(_with_tries(trigger=True))
    listed = ["rest", "chant", "water the fern", "shade the fern", "mist the fern"]
    task = {"goal": "Grow the fern.", "actions": listed}
    for shape in ["done: chant", ["chant", 3, None], None, {"done": {"list": ["chant"]}}, {"done": "chant"}]:
        memory: dict = {}
        steps = [
            {"action": {"text": a}, "observation_text": reply, "observation": shape}
            for a, reply in (("chant", "You chant."), ("rest", "The fern wilts."))
        ]
        design["update"](memory, {"task": {**task, "observation": shape}, "steps": steps}, None)
        advice = design["recall"](memory, {**task, "observation": shape}, None)
        assert advice.startswith("Not tried yet: water the fern"), (shape, advice)
    memory = {}
    steps = [
        {"action": {"text": "chant"}, "observation_text": "You chant.", "observation": {"done": ["chant"]}},
        {"action": {"text": "rest"}, "observation_text": "The fern wilts.", "observation": {"done": []}},
    ]
    design["update"](memory, {"task": {**task, "observation": {"done": []}}, "steps": steps}, None)
    assert design["recall"](memory, task, None).startswith("Not tried yet, each then rest: ")
