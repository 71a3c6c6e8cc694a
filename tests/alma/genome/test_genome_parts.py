"""Every generic part that needs no model, in one genome, on real episodes of every built-in
environment: the observation fields come from the environment's own observations
(``env_observation_keys``), never from the test; the compiled module runs clean in the real sandbox,
every part works (a part that raises is only printed by the compiled module, so the prints are
checked too) and on GraphWorld the advice is made of actions the environment lists."""

from __future__ import annotations

import re

import pytest

from atlas.alma.design import check_design
from atlas.alma.genome import compile_genome, genome_design, parse_genome
from atlas.alma.genome.catalog import parts
from atlas.alma.genome.operators import env_observation_keys
from atlas.envs.base import action_label

ENCODE = [
    "transitions",
    "goal_actions",
    "sightings",
    "sequences",
    "episode_log",
    "effects",
    "roles",
    "setters",
    "settings",
    "preludes",
    "rises",
    "reveals",
]
RETRIEVE = [
    "route", "explore", "goal_rules", "where_seen", "replay", "similar_episodes", "advances", "recipe",
    "untried", "roles", "setters", "settings", "preludes", "kinds", "rises", "reveals",
]  # fmt: skip
ENVS = ["graphworld", "alfworld", "textworld", "textworld-fetch"]

# Jericho warns that generated TextWorld games lack its per-game hints; irrelevant here.
pytestmark = pytest.mark.filterwarnings(
    "ignore:.*(not fully supported|unsupported game|Unable to retrieve walkthrough)"
)


def test_the_genome_below_uses_every_generic_part_without_a_model():
    no_llm = {p.name for p in parts("encode", generic_only=True) if not p.uses_llm}
    assert no_llm == set(ENCODE)
    reads_no_llm = {
        p.name for p in parts("retrieve", generic_only=True) if all(r in no_llm for r in p.requires)
    }
    assert reads_no_llm == set(RETRIEVE)


def all_parts_genome(state_key: str, list_key: str):
    keyed = {"state_key": state_key}
    return parse_genome(
        {
            "name": "all-generic-parts",
            "encode": [
                {"part": "transitions", "params": {**keyed, "neighbors_key": list_key}},
                {"part": "goal_actions", "params": keyed},
                {"part": "sightings"},
                {"part": "sequences"},
                {"part": "episode_log"},
                {"part": "effects"},
                {"part": "roles"},
                {"part": "setters"},
                {"part": "settings"},
                {"part": "preludes"},
                {"part": "rises"},
                {"part": "reveals"},
            ],
            "retrieve": [{"part": name} for name in RETRIEVE],
        }
    )


@pytest.mark.parametrize("env_name", ENVS)
def test_every_generic_part_runs_on_real_episodes(env_name, make_env, smoke):
    env = make_env(env_name)
    keys = env_observation_keys(env)
    assert keys.scalar and keys.lists, keys
    genome = all_parts_genome(keys.scalar[0], keys.lists[0])
    source = compile_genome(genome)
    assert check_design(source) == []
    for role, names in (("encode", ENCODE), ("retrieve", RETRIEVE)):
        for name in names:
            assert f"def {role}_{name}(" in source
    report = smoke(genome_design(genome), env)
    assert report.valid and report.ran_clean, report.to_feedback()
    failed = [(c.episode, c.phase, p) for c in report.calls for p in c.prints if " failed:" in p]
    assert not failed, failed
    updates = [c for c in report.calls if c.phase == "update"]
    assert len(updates) == 3
    for c in updates:
        assert c.prints, f"{c.episode}: update printed nothing"
        shown = " | ".join(c.prints)
        assert (
            "transitions:" in shown
            and "sightings:" in shown
            and "effects:" in shown
            and "setters:" in shown
            and "settings:" in shown
            and "preludes:" in shown
            and "rises:" in shown
            and "reveals:" in shown
        ), shown
    assert report.advice_ok, report.to_feedback()
    if env_name == "graphworld":
        assert keys.scalar[0] == "location" and keys.lists[0] == "adjacent_rooms"
        _check_graphworld_advice(env, report.advice[-1])


def _check_graphworld_advice(env, advice: str) -> None:
    """Route rules name a move the environment lists in the rule's room; the search plan is a walk the
    environment allows from the last deployment task's start."""
    from atlas.envs.graphworld.world import GraphWorldParams, build_world

    tasks = env.generate_tasks(6, 0)  # the smoke run's: 3 collection tasks, then 3 deployment tasks
    last = tasks[-1]
    world = build_world(
        GraphWorldParams.from_dict(last.metadata["params"]),
        seed=int(last.metadata["seed"]),
        family=int(last.metadata["family"]),
    )

    def listed(room: str) -> set[str]:
        obs = {"adjacent_rooms": list(world.adjacency[room]), "objects_here": [], "inventory": []}
        return {action_label(a.tool, a.args) for a in env.candidate_actions(obs)}

    lines = advice.splitlines()
    rules = [
        m
        for m in (re.match(r"^In (room_\w+)(?: with [\w ]+)?: (move_to room_\w+)\.$", x) for x in lines)
        if m
    ]
    assert rules, advice
    for rule in rules:
        assert rule.group(2) in listed(rule.group(1)), (rule.group(0), sorted(listed(rule.group(1))))
    goal = re.fullmatch(r"Bring the (\w+) to (room_\w+)\.", last.description)
    assert goal, last.description
    item, dest = goal.groups()
    # goal_rules: framed as the agent reads it ("You carry: lamp" -> "carry lamp")
    assert f"In {dest} with carry {item}: put_down {item}." in lines, advice
    assert any(f" with carry {item}: move_to " in x for x in lines), advice  # route, once it is held
    assert any(x.endswith(f": pick_up {item}.") for x in lines), advice
    for heading in ("Where these were found before: ", "What worked before: ", "Similar past episodes"):
        assert any(x.startswith(heading) for x in lines), (
            heading,
            advice,
        )  # where_seen, replay, similar_episodes
    plans = [x for x in lines if x.startswith("Search plan: ")]
    assert len(plans) == 1, advice
    steps = plans[0].removeprefix("Search plan: ").removesuffix(".").split(", ")
    assert len(steps) >= 2
    here = env.clone().reset(last)["location"]
    for step in steps:
        assert step in listed(here), (step, here, plans[0])
        here = step.removeprefix("move_to ")
