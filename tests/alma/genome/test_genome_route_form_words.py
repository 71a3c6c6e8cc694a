"""``route(towards=sighted)`` after collection games that all had one goal, on real TextWorld ``fetch``
episodes: a new goal naming another thing tells the words every earlier goal had ('find', 'take': the
task's form, seen in the room descriptions) from the thing; no route leads to where those were seen. Nor
for the goal the games had: a word no listed action named as a thing ('find', 'take') is no place's mark."""

from __future__ import annotations

import pytest

from atlas.alma.genome import compile_genome, parse_genome
from atlas.envs.policies import WALKS, goal_words
from atlas.envs.views import episode_view, task_view

pytestmark = pytest.mark.filterwarnings(
    "ignore:.*(not fully supported|unsupported game|Unable to retrieve walkthrough)"
)

SIGHTED = parse_genome(
    {
        "name": "route-sighted",
        "encode": [
            {"part": "transitions", "params": {"state_key": "location"}},
            {"part": "sightings", "params": {"state_key": "location", "goal_only": False}},
        ],
        "retrieve": [{"part": "route", "params": {"towards": "sighted", "context": "none"}}],
    }
)


def test_a_route_leads_only_to_where_the_goals_thing_was_seen_not_its_form_words(make_env):
    env = make_env("textworld-fetch")
    by_goal: dict[str, list] = {}
    for task in env.generate_family_tasks(16, 2024, 2024):
        by_goal.setdefault(env.format_goal(task), []).append(task)
    same = max(by_goal, key=lambda g: len(by_goal[g]))
    assert len(by_goal[same]) >= 3 and len(by_goal) >= 2, {g: len(t) for g, t in by_goal.items()}
    namespace: dict = {}
    exec(compile(compile_genome(SIGHTED), "design", "exec"), namespace)
    memory: dict = {}
    for i, task in enumerate(by_goal[same][:3]):
        namespace["update"](memory, episode_view(env, WALKS["random"](i).run(env, task)), None)
    form = {w for w, n in memory["sighting_goals"]["words"].items() if n == 3}
    assert {"find", "take"} <= form and memory["sighting_places"].get("find"), memory["sighting_goals"]
    thing = next(w.lower() for w in goal_words(same) if w.lower() not in ("find", "take"))
    unseen = {**memory, "sighting_places": {w: p for w, p in memory["sighting_places"].items() if w != thing}}
    probe = env.clone()
    first = by_goal[same][0]
    advice = namespace["recall"](unseen, task_view(probe, first, probe.reset(first)), None)
    assert advice.strip() == "", advice  # games that never saw the thing: no route toward 'find' or 'take'
    checked = 0
    for goal, tasks in by_goal.items():
        if goal == same:
            continue
        thing = next(w.lower() for w in goal_words(goal) if w.lower() not in form)
        if memory["sighting_places"].get(thing):
            continue
        probe = env.clone()
        advice = namespace["recall"](memory, task_view(probe, tasks[0], probe.reset(tasks[0])), None)
        assert advice.strip() == "", (goal, advice)
        checked += 1
    assert checked, "every other goal's thing was seen: nothing checked"
