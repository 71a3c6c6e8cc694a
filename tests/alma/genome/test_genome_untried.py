"""What was not tried yet (``parts/untried.py``): the actions listed at earlier tasks' start or brought
into the list by a step, never taken under this goal, as a plan the agent reads after every other one. Real
episodes of the built-in environments and the plug-ins in ``tests/envs/``, the real matcher, the real
task agent with a scripted model."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[2] / "envs"))

import crafting_env  # noqa: F401  (registers "crafting")
import depot_env  # noqa: F401  (registers "depot")
import workbench_env  # noqa: F401  (registers "workbench")

from atlas.agent import TaskAgent
from atlas.agent.advice_match import match_advice
from atlas.alma.author.advice_probe import advised_walk
from atlas.alma.genome import compile_genome, genome_design, parse_genome
from atlas.alma.genome.parts.common import unnumbered
from atlas.envs.base import action_label
from atlas.envs.policies import WALKS
from atlas.envs.registry import get_env
from atlas.envs.views import episode_view, task_view
from atlas.infra.llm import ScriptedLLM

pytestmark = pytest.mark.filterwarnings(
    "ignore:.*(not fully supported|unsupported game|Unable to retrieve walkthrough)"
)

UNTRIED = parse_genome(
    {
        "name": "effects-untried",
        "encode": [{"part": "effects"}],
        "retrieve": [{"part": "advances"}, {"part": "recipe"}, {"part": "untried"}],
    }
)
WITHOUT = parse_genome(
    {
        "name": "effects",
        "encode": [{"part": "effects"}],
        "retrieve": [{"part": "advances"}, {"part": "recipe"}],
    }
)
TITLE = "Not tried yet: "


def _design(genome=UNTRIED) -> dict:
    namespace: dict = {}
    exec(compile(compile_genome(genome), "design", "exec"), namespace)
    return namespace


def _recall(env, design, memory, task) -> str:
    probe = env.clone()
    return design["recall"](memory, task_view(probe, task, probe.reset(task)), None)


def _untried_steps(advice: str) -> list[str]:
    line = next((x for x in advice.splitlines() if x.startswith(TITLE)), "")
    return [s.strip() for s in line.removeprefix(TITLE).rstrip(".").split(", ")] if line else []


@pytest.mark.parametrize(
    "env_name",
    ["graphworld", "alfworld", "textworld-fetch", "crafting", "workbench", "depot"],
)
def test_untried_runs_clean_and_names_only_listed_actions_never_taken_under_the_goal(
    env_name, make_env, smoke
):
    env = get_env(env_name) if env_name in ("crafting", "workbench", "depot") else make_env(env_name)
    report = smoke(genome_design(UNTRIED), env)
    assert report.ran_clean, report.to_feedback()
    tasks = env.generate_tasks(6, seed=5)
    walks = [WALKS["random"](i).run(env, t) for i, t in enumerate(tasks[:5])]
    design, memory = _design(), {}
    for walk in walks:
        design["update"](memory, episode_view(env, walk), None)
    assert memory["effect_listed"], "nothing listed was kept"
    task = tasks[5]
    goal = env.format_goal(task)
    taken = {  # actions (numbers as '#') taken in an episode of this very goal
        unnumbered(action_label(s.tool, s.args))
        for w in walks
        if env.format_goal(w.task) == goal
        for s in w.steps
        if s.tool
    }
    steps = _untried_steps(_recall(env, design, memory, task))
    listed = set(memory["effect_listed"].values())
    now = {action_label(a.tool, a.args) for a in env.candidate_actions(env.clone().reset(task))}
    for step in steps:  # listed before, or by this task
        assert step in listed or step in now, step
        assert unnumbered(step.split(" (")[0]) not in taken, step
    probe = env.clone()
    view = {**task_view(probe, task, probe.reset(task)), "goal": "Reach the unnamed place."}
    fresh = _untried_steps(design["recall"](memory, view, None))  # a goal no game pursued: all listed
    order = [*view["actions"], *memory["effect_listed"].values()]  # this task's own first
    assert {unnumbered(s) for s in fresh} == set(list(dict.fromkeys(map(unnumbered, order)))[:12])
    assert 24 >= len(fresh) >= min(12, len(listed)) >= 3, (fresh, listed)


def test_a_task_about_another_thing_tries_its_own_things_first():
    """Games on the fern listed and tried the fern's actions; a task on the moss lists the moss's own
    untried actions first (those naming the fern name no thing of this goal, and this task does not list
    them), then what earlier tasks listed."""
    design, memory = _design(), {}
    fern = ["water the fern", "prune the fern", "mist the fern", "rest"]
    steps = [
        {"action": {"text": a}, "observation_text": "Done.", "observation": {"note": a}} for a in fern[:2]
    ]
    design["update"](memory, {"task": {"goal": "Grow the fern.", "actions": fern}, "steps": steps}, None)
    moss = ["water the moss", "prune the moss", "mist the moss", "rest"]
    planned = _untried_steps(design["recall"](memory, {"goal": "Grow the moss.", "actions": moss}, None))
    assert planned[:3] == moss[:3], planned


def test_the_untried_plan_comes_after_every_other_plan_and_is_walked_in_order():
    """The matcher takes a listed step of the learned plan first; where none is listed, the first listed
    action not yet tried; once that is done, the next."""
    env = get_env("crafting")
    task = env.generate_family_tasks(1, 0, 7)[0]
    labels = [action_label(a.tool, a.args) for a in env.candidate_actions(env.clone().reset(task))]
    assert len(labels) >= 4
    untried = f"{TITLE}{labels[3]}, {labels[1]}, {labels[2]}."
    seen = env.clone()
    text = seen.summarize_observation(seen.reset(task))
    learned = f"Steps in order: {labels[0]}."
    assert match_advice(f"{learned}\n{untried}", text, labels).actions == {labels[0]: 1.0}
    assert match_advice(f"{learned}\n{untried}", text, labels, done=[labels[0]]).actions == {labels[3]: 1.0}
    assert match_advice(untried, text, labels, done=[labels[3]]).actions == {labels[1]: 1.0}


def test_the_task_agent_is_steered_to_what_it_has_not_tried():
    """Memory from one goal's games; a task of another goal: the agent's choice is biased towards a step of
    the advice's plans (the learned plan's, else the first listed action not tried under this goal)."""
    env = get_env("crafting")
    by_goal: dict[str, list] = {}
    for task in env.generate_family_tasks(30, 0, 100):
        by_goal.setdefault(env.format_goal(task), []).append(task)
    first, other = sorted(by_goal, key=lambda g: -len(by_goal[g]))[:2]
    design, memory = _design(), {}
    for i, t in enumerate(by_goal[first][:4]):
        design["update"](memory, episode_view(env, WALKS["random"](i).run(env, t)), None)
    task = by_goal[other][0]
    advice = _recall(env, design, memory, task)
    steps = _untried_steps(advice)
    assert len(steps) >= 3, advice
    planned = [
        s
        for line in advice.splitlines()
        if line.startswith("Steps in order: ")
        for s in line[16:].rstrip(".").split(", ")
    ]
    llm = ScriptedLLM(["(no reply)"])
    asyncio.run(TaskAgent(llm, max_turns=1).run(env.clone(), task, advice=advice))
    bias = llm.history[0].kwargs["choice_bias"]
    favoured = max(bias, key=bias.get)
    assert bias[favoured] > 0 and favoured in steps + planned, (favoured, advice)


def test_memory_learned_before_tried_goals_were_kept_reads_as_tried():
    env = get_env("crafting")
    tasks = env.generate_family_tasks(4, 0, 100)
    design, memory = _design(), {}
    for i, t in enumerate(tasks[:3]):
        design["update"](memory, episode_view(env, WALKS["random"](i).run(env, t)), None)
    for rec in memory["effects"].values():
        rec.pop("tried_goals", None)
        rec.pop("tried_at", None)
    steps = _untried_steps(_recall(env, design, memory, tasks[3]))
    tried = {rec["eg"] for rec in memory["effects"].values()}
    assert not set(steps) & tried


def test_collection_guided_by_what_was_not_tried_takes_more_distinct_actions():
    """Advised walks (the probe's model of the task agent collecting) with the design's own advice as its
    memory grows: with ``untried``, three collection games on the crafting plug-in take more distinct
    actions than with the learned rules and plans alone, summed over five walk seeds."""
    env = get_env("crafting")
    tasks = env.generate_family_tasks(3, 1, 100)

    def distinct(genome, seed) -> int:
        design, memory, taken = _design(genome), {}, set()
        for task in tasks:
            advice = _recall(env, design, memory, task)
            walk = advised_walk(env.clone(), task, advice, seed=seed)
            taken |= {unnumbered(action_label(s.tool, s.args)) for s in walk.steps if s.tool}
            design["update"](memory, episode_view(env, walk), None)
        return len(taken)

    with_untried = sum(distinct(UNTRIED, s) for s in range(5))
    without = sum(distinct(WITHOUT, s) for s in range(5))
    assert with_untried > without, (with_untried, without)


def _step(action: str, text: str, score: float, ended: bool = False) -> dict:
    return {
        "action": {"tool": "act", "args": {"command": action}, "text": action},
        "observation": {"text": text},
        "observation_text": text,
        "error": None,
        "score": score,
        "ended": ended,
    }


def _episode(task: dict, room: str, listed: list[str], steps: list[dict], score: float) -> dict:
    return {
        "task": {**task, "observation_text": room, "actions": listed, "domain": "d"},
        "steps": steps,
        "success": False,
        "score": score,
        "steps_taken": len(steps),
    }


_KITCHEN = "This room is called the kitchen. You see a drain, a bed, a lamp and a door to the hallway."
_KITCHEN_LISTED = [
    "focus on drain",
    "focus on bed",
    "focus on lamp",
    "open door to hallway",
    "look around",
    "wait",
]
_FOCUS_ENDED = _step("focus on drain", "You focus on the drain.", 0.0, ended=True)


def _kitchen_untried_after(steps: list[dict]) -> list[str]:
    """The untried steps for a kitchen task after one episode per step (each of that one step)."""
    task = {"goal": "Find the animal that lives longest.", "observation": {"text": _KITCHEN}}
    design, memory = _design(), {}
    for step in steps:
        design["update"](memory, _episode(task, _KITCHEN, _KITCHEN_LISTED, [step], 0.0), None)
    return _untried_steps(design["recall"](memory, {**task, "observation_text": _KITCHEN}, None))


def test_what_ends_a_task_unsolved_is_not_explored():
    """A task whose listing offers focusing on things: once focusing on the drain ended one unsolved, no
    'focus on' action is suggested as untried; the other listed actions still are."""
    assert _kitchen_untried_after([_FOCUS_ENDED]) == ["open door to hallway", "look around", "wait"]


def test_a_command_the_environment_refused_does_not_clear_a_kind_that_ends_tasks():
    """ScienceWorld lists 'focus on' a cup in a closed cupboard and answers it 'No known action matches
    that input.' (an error, nothing done). That refusal is no sign focusing is harmless: once focusing on
    the drain ended a task unsolved, no 'focus on' action is suggested as untried. A focus that was
    taken and did nothing still clears the kind."""
    reply = "No known action matches that input."
    refused = {**_step("focus on cup in cupboard", reply, 0.0), "error": "not a command understood here"}
    assert _kitchen_untried_after([refused, _FOCUS_ENDED]) == ["open door to hallway", "look around", "wait"]
    taken = {**refused, "error": None, "observation": {"text": "Nothing happens."}}
    assert "focus on bed" in _kitchen_untried_after(
        [{**taken, "observation_text": "Nothing happens."}, _FOCUS_ENDED]
    )


def test_a_kind_no_game_took_is_offered_last():
    """Real ScienceWorld texts (a lifespan task, seed 9173): the collection games opened, picked up and
    looked in things but never focused, and a wrong focus ends the task. In another room, the untried plan
    offers the kinds games took first and those none took last (the focuses, then a wait, past the six
    steps kept); with ``unseen_last`` off, in the order they were listed (a focus first)."""
    goal = "Your task is to find the animal with the longest life span. Focus on the animal."
    bedroom = "This room is called the bedroom. In it, you see: a bed, a closet (closed), a pillow."
    listed = ["look around", "open door to hallway", "focus on bed", "pick up pillow", "open closet"]
    listed += ["look in bed", "wait"]
    played = [
        _step("open closet", "The closet is now open.", 0.0),
        _step("pick up pillow", "You move the pillow to the inventory.", 0.0),
        _step("look in bed", "Inside the bed is: a pillow.", 0.0),
    ]
    task = {"goal": goal, "observation": {"text": bedroom}}
    design, memory = _design(), {}
    design["update"](memory, _episode(task, bedroom, listed, played, 0.0), None)
    bathroom = "This room is called the bathroom. In it, you see: a bathtub, a glass cup, a door."
    view = {
        "goal": goal,
        "observation": {"text": bathroom},
        "observation_text": bathroom,
        "actions": ["focus on bathtub", "open door to kitchen", "focus on glass cup", "pick up glass cup"],
    }
    genome = parse_genome(
        {
            "name": "untried-six",
            "encode": [{"part": "effects"}],
            "retrieve": [{"part": "untried", "params": {"max_steps": 6}}],
        }
    )
    steps = _untried_steps(_design(genome)["recall"](memory, view, None))
    assert steps == [
        "open door to kitchen",
        "pick up glass cup",
        "look around",
        "open door to hallway",
        "focus on bathtub",
        "focus on glass cup",
    ], steps
    genome.retrieve[0].params["unseen_last"] = False
    listed_order = _untried_steps(_design(genome)["recall"](memory, view, None))
    assert listed_order[:3] == ["focus on bathtub", "open door to kitchen", "focus on glass cup"]


def test_what_a_step_listed_before_is_expected_again_for_this_tasks_things():
    """Real ScienceWorld texts (a lifespan task, seed 9173): opening the door to the hallway listed 'go to
    hallway'. In the greenhouse, whose goal names the outside, the plan offers opening the door to outside
    and then going there (re-bound: no game went outside), and the matcher walks both in turn; without
    ``later``, only the door."""
    goal = "Your task is to find the animal with the longest life span. The animals are in the 'outside' location."
    bedroom = (
        "This room is called the bedroom. In it, you see: a bed, a closet. A door to the hallway (closed)."
    )
    listed = ["look around", "open door to hallway", "open closet", "pick up pillow", "look in bed"]
    opened = {
        **_step("open door to hallway", "The door is now open.", 0.0),
        "new_actions": ["go to hallway"],
    }
    played = [opened, _step("open closet", "The closet is now open.", 0.0)]
    task = {"goal": goal, "observation": {"text": bedroom}}
    greenhouse = (
        "This room is called the greenhouse. You see a bee hive, a jug. A door to the outside (closed)."
    )
    here = ["open door to outside", "open bee hive", "pick up jug", "look around", "close door to outside"]
    view = {
        "goal": goal,
        "observation": {"text": greenhouse},
        "observation_text": greenhouse,
        "actions": here,
    }

    def plan(later: bool) -> list[str]:
        genome = parse_genome(
            {
                "name": "untried-later",
                "encode": [{"part": "effects"}],
                "retrieve": [{"part": "untried", "params": {"later": later, "ways": True}}],
            }
        )
        design, memory = _design(genome), {}
        design["update"](memory, _episode(task, bedroom, listed, played, 0.0), None)
        return _untried_steps(design["recall"](memory, view, None))

    steps = plan(later=True)
    assert steps[:2] == ["open door to outside", "go to outside"], steps
    assert "go to hallway" not in steps[:2]
    advice = TITLE + ", ".join(steps) + "."
    assert match_advice(advice, greenhouse, here).actions == {"open door to outside": 1.0}
    out = ["go to outside", "open bee hive", "pick up jug", "close door to outside"]
    opened_now = match_advice(advice, greenhouse, out, done=["open door to outside"])
    assert opened_now.actions == {"go to outside": 1.0}
    assert "go to outside" not in plan(later=False)


def test_a_re_bound_step_keeps_the_numbers_it_was_listed_with():
    """'open locker 3' listed 'take key 2 from locker 3'; a task of another goal whose start lists 'open
    locker 5' is offered 'take key 2 from locker 5' right after it: the instance the step named,
    re-bound, the rest as it was listed (not the memory's '#' for numbers)."""
    hall = "A hall with locker 3 and locker 4."
    listed = ["open locker 3", "open locker 4", "wait", "look"]
    opened = {**_step("open locker 3", "You open locker 3. In it: key 2.", 0.0)}
    opened["new_actions"] = ["take key 2 from locker 3"]
    task = {"goal": "Find the key.", "observation": {"text": hall}}
    genome = parse_genome(
        {
            "name": "untried-later",
            "encode": [{"part": "effects"}],
            "retrieve": [{"part": "untried", "params": {"later": True}}],
        }
    )
    design, memory = _design(genome), {}
    design["update"](memory, _episode(task, hall, listed, [opened], 0.0), None)
    other = "A hall with locker 5 and locker 6."
    view = {"goal": "Find the coin.", "observation": {"text": other}, "observation_text": other}
    view["actions"] = ["open locker 5", "open locker 6", "wait", "look"]
    steps = _untried_steps(design["recall"](memory, view, None))
    assert "take key 2 from locker 5" in steps, steps
    assert steps[steps.index("take key 2 from locker 5") - 1] == "open locker 5"
    assert not [s for s in steps if "#" in s], steps


def test_what_was_tried_only_before_a_later_stage_is_offered_again():
    """Stages must come in order: the blue switch refused before the red one raised the score, so it is
    offered again (it may be the next stage's); the red one raised the score (the learned plans name it),
    and the green one was tried at the furthest stage, so neither is; never-tried ones come first."""
    room = "A panel with a red switch, a blue switch, a green switch, a white switch and a black switch."
    listed = [f"flip {c} switch" for c in ("red", "blue", "green", "white", "black")]
    steps = [
        _step("flip blue switch", "The blue switch does not move.", 0.0),
        _step("flip red switch", "The red switch clicks. A lamp lights.", 0.25),
        _step("flip green switch", "The green switch does not move.", 0.25),
    ]
    task = {"goal": "Light every lamp on the panel.", "observation": {"text": room}}
    episode = _episode(task, room, listed, steps, 0.25)
    design, memory = _design(), {}
    design["update"](memory, episode, None)
    recalled = _untried_steps(design["recall"](memory, {**task, "observation_text": room}, None))
    assert recalled == ["flip white switch", "flip black switch", "flip blue switch"]


def test_an_action_that_ended_a_task_is_not_offered_under_another_goal():
    """A switch that overloaded the panel, ending its task unsolved, is not offered as untried to the next
    task, whose goal differs (it is avoided), though other switches of its kind did something there."""
    room = "A panel with a red, a blue, a green, a white, a black and a yellow switch."
    listed = [f"flip {c} switch" for c in ("red", "blue", "green", "white", "black", "yellow")]
    first = {"goal": "Tune the receiver to the ferry station.", "observation": {"text": room}}
    steps = [
        _step("flip red switch", "The valves warm up.", 0.1),
        _step("flip green switch", "The dial lamp lights.", 0.1),  # did nothing: not every flip ends a task
        _step("flip blue switch", "A red lamp lights: overload! The panel resets.", 0.0, ended=True),
    ]
    design, memory = _design(), {}
    design["update"](memory, _episode(first, room, listed, steps, 0.0), None)
    task = {"goal": "Tune the receiver to the harbour station.", "observation": {"text": room}}
    recalled = _untried_steps(design["recall"](memory, {**task, "observation_text": room}, None))
    assert "flip blue switch" not in recalled and "flip white switch" in recalled, recalled


def test_an_action_listed_only_after_a_step_is_offered_where_it_is_listed():
    """Chopping is listed only once a vegetable is held: a game that took the carrot and never chopped it
    leaves 'chop carrot' untried, and the matcher takes it once the next task lists it."""
    room = "Pantry: carrot 4, onion 2, leek 7."
    listed = ["take carrot 4", "take onion 2", "take leek 7", "look"]
    took = {
        **_step("take carrot 4", "You take the carrot. You hold: carrot 4 (whole).", 0.2),
        "new_actions": ["chop carrot 4", "wash carrot 4", "put carrot 4 in pot"],
    }
    task = {"goal": "Serve glazed carrots.", "observation": {"pantry": "carrot 4, onion 2, leek 7"}}
    later = parse_genome(
        {
            "name": "untried-later",
            "encode": [{"part": "effects"}],
            "retrieve": [{"part": "untried", "params": {"later": True, "ways": True}}],
        }
    )
    design, memory = _design(later), {}
    design["update"](memory, _episode(task, room, listed, [took, _step("look", room, 0.2)], 0.2), None)
    assert set(memory["effect_later"].values()) == {"chop carrot 4", "wash carrot 4", "put carrot 4 in pot"}
    nxt = {"goal": "Serve glazed carrots.", "observation": {"pantry": "carrot 9, leek 1"}}
    view = {**nxt, "observation_text": "Pantry: carrot 9, leek 1."}
    steps = _untried_steps(design["recall"](memory, view, None))
    plain = {**later.retrieve[0].params, "ways": False}
    bare = parse_genome(
        {"name": "bare", "encode": [{"part": "effects"}], "retrieve": [{"part": "untried", "params": plain}]}
    )
    assert _untried_steps(_design(bare)["recall"](memory, view, None))[:2] == [
        "chop carrot 4",
        "wash carrot 4",
    ]
    ways = ["take carrot 4 then chop carrot 4", "take carrot 4 then wash carrot 4"]
    assert steps[:3] == [*ways, "take carrot 4 then put carrot 4 in pot"], steps
    held = "You hold: carrot 9 (whole)."
    labels = ["wash carrot 9", "chop carrot 9", "put carrot 9 in pot", "take leek 1"]
    assert match_advice(f"{TITLE}{', '.join(steps)}.", held, labels).actions == {"chop carrot 9": 1.0}
    pantry = ["take carrot 9", "look"]  # before the carrot is held, no try listed: the way to one
    assert match_advice(f"{TITLE}{', '.join(steps)}.", view["observation_text"], pantry).actions == {
        "take carrot 9": 1.0
    }
    assert not {"chop carrot 4", "wash carrot 4"} & set(
        _untried_steps(_design()["recall"](memory, view, None))
    )


def test_the_goals_things_come_first():
    """Of the actions never tried, those on what the goal names come first (a word of every goal is its
    form, not a thing), a kind a game took ('go') before one no game took ('take'); without
    ``goal_first``, in the order they were listed."""
    listed = ["take lamp", "take rope", "take box", "go to cellar", "go to attic", "go to hall"]
    view = {"observation": {"location": "hall", "items": ["lamp", "rope", "box"]}}
    first = {"goal": "Bring the box to the cellar.", **view}
    walked = [_step("go to hall", "You are in the hall.", 0.0)]
    design, memory = _design(), {}
    design["update"](memory, _episode(first, "You are in the hall.", listed, walked, 0.0), None)
    task = {"goal": "Bring the rope to the attic.", **view, "observation_text": "You are in the hall."}
    steps = _untried_steps(design["recall"](memory, task, None))
    assert steps[:3] == ["go to attic", "take rope", "go to cellar"], steps
    blind = parse_genome(
        {
            "name": "untried-in-order",
            "encode": [{"part": "effects"}],
            "retrieve": [{"part": "untried", "params": {"goal_first": False, "unseen_last": False}}],
        }
    )
    assert _untried_steps(_design(blind)["recall"](memory, task, None))[:2] == ["take lamp", "take rope"]


def test_what_a_step_listed_is_read_only_where_it_is_text():
    room = "Pantry: carrot 4, onion 2, leek 7."
    listed = ["take carrot 4", "take onion 2", "take leek 7"]
    took = {
        **_step("take carrot 4", "You hold: carrot 4.", 0.2),
        "new_actions": [None, 3, {"x": 1}, "chop carrot 4"],
    }
    task = {"goal": "Serve glazed carrots.", "observation": {"pantry": "carrot 4, onion 2, leek 7"}}
    design, memory = _design(), {}
    design["update"](memory, _episode(task, room, listed, [took], 0.2), None)
    assert list(memory["effect_later"].values()) == ["chop carrot 4"]


def test_each_kind_is_offered_as_every_instance_this_task_lists():
    """What was learned of 'go to shelf 3' is offered as each shelf the task lists, in its order, a round of
    numbered kinds at a time: the second shelf after one of every kind; what has no number keeps its place."""
    room = "You see a shelf 3, a desk 1."
    listed = ["go to shelf 3", "go to desk 1", "look"]
    task = {"goal": "Find the key.", "observation": {"location": "hall"}}
    design, memory = _design(), {}
    design["update"](memory, _episode(task, room, listed, [_step("wait", room, 0.0)], 0.0), None)
    view = {
        "goal": "Find the mug.",
        "observation": {"location": "hall"},
        "observation_text": "You see a shelf 1, a shelf 2, a desk 4.",
        "actions": ["go to shelf 1", "go to desk 4", "go to shelf 2", "look"],
    }
    assert _untried_steps(design["recall"](memory, view, None)) == [
        "go to shelf 1",
        "go to desk 4",
        "go to shelf 2",
        "look",
    ]


def test_a_game_that_follows_the_plan_tries_every_kind_before_a_second_setting():
    """Controls set to numbered positions, six of each kind: the plan offers one of every kind first, so a
    game of 16 steps that follows it learns what each control does, not only what the first one does. An
    action without a number keeps its place: the switch listed last is offered last, not after one round."""
    panel = {"power": "on", "glow": "red", "pressure": "2"}
    listed = [f"turn valve {n}" for n in range(1, 7)] + [f"set dial {n}" for n in range(1, 7)]
    listed += [f"plug jack {n}" for n in range(1, 6)] + ["switch off", "seal"]
    task = {"goal": "Tune a blue glow at pressure 4, then seal it.", "observation": panel}
    design, memory = _design(), {}
    refused = _step("seal", "The glow is off target.", 0.0)
    design["update"](memory, _episode(task, "A bench.", listed, [refused], 0.0), None)
    steps = _untried_steps(
        design["recall"](memory, {**task, "observation_text": "A bench.", "actions": listed}, None)
    )
    assert {unnumbered(s) for s in steps[:3]} == {"turn valve #", "set dial #", "plug jack #"}
    assert steps[-1] == "switch off"
    assert sorted(steps) == sorted(listed[:-1])


def test_a_sweep_looks_again_where_games_of_the_goal_looked():
    """With ``sweep``, the places listed at a start that games of this goal went to follow the untried ones
    (fewest tries first): where the thing lies elsewhere in each task, every place is looked at once."""
    room = "You see a shelf 1, a desk 1, a bin 1, a sofa 1."
    listed = ["go to shelf 1", "go to desk 1", "go to bin 1", "go to sofa 1"]
    task = {"goal": "Put a mug in the bin.", "observation": {"location": "hall"}}
    walked = [_step("go to shelf 1", "You see nothing.", 0.0), _step("go to desk 1", "You see nothing.", 0.0)]
    sweep = parse_genome(
        {
            "name": "untried-sweep",
            "encode": [{"part": "effects"}],
            "retrieve": [{"part": "untried", "params": {"sweep": True}}],
        }
    )
    plain, swept = _design(), _design(sweep)
    memory_a, memory_b = {}, {}
    for design, memory in ((plain, memory_a), (swept, memory_b)):
        design["update"](memory, _episode(task, room, listed, walked, 0.0), None)
    view = {**task, "observation_text": room, "actions": listed}
    assert _untried_steps(swept["recall"](memory_b, view, None)) == [
        "go to bin 1",
        "go to sofa 1",
        "go to shelf 1",
        "go to desk 1",
    ]
    assert _untried_steps(plain["recall"](memory_a, view, None)) == []  # two steps are no plan
