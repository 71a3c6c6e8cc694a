"""Operators over genomes (no LLM): every child of random_genome / mutate / crossover is a valid genome
that compiles to a module passing the static check; mutation always changes the design; a seed gives
the same search; only generic parts are ever drawn; observation fields come from observations."""

from __future__ import annotations

import json
import random

import pytest

from atlas.alma.design import check_design
from atlas.alma.genome import Genome, ObsKeys, baseline_genome, compile_genome, parse_genome, part
from atlas.alma.genome.operators import (
    crossover,
    env_observation_keys,
    mutate,
    observation_keys,
    random_genome,
)
from atlas.alma.genome.step import make_children
from atlas.infra.llm import ScriptedLLM

GRAPHWORLD_KEYS = ObsKeys(
    scalar=["location", "message"],
    lists=["adjacent_rooms", "objects_here", "inventory"],
)
ITERATIONS = 300
NON_GENERIC = {"graph_edges", "map_notes"}


def _walk(seed: int, keys: ObsKeys = GRAPHWORLD_KEYS) -> list[tuple[str, Genome, Genome | None]]:
    """ITERATIONS operator applications (mutate, crossover, random in turn) over a small population:
    [(operator, child, parent given to mutate)]."""
    rng = random.Random(seed)
    population = [random_genome(rng, keys), random_genome(rng, keys)]
    out: list[tuple[str, Genome, Genome | None]] = []
    for i in range(ITERATIONS):
        op = ("mutate", "crossover", "random")[i % 3]
        parent = None
        if op == "mutate":
            parent = rng.choice(population)
            child = mutate(parent, rng, keys)
        elif op == "crossover":
            a, b = rng.sample(population, 2)
            child = crossover(a, b, rng, keys)
        else:
            child = random_genome(rng, keys)
        out.append((op, child, parent))
        population.append(child)
        population = population[-8:]
    return out


@pytest.fixture(scope="module")
def walk():
    return _walk(7)


def test_every_child_validates_compiles_and_passes_the_static_check(walk):
    sources: dict[str, str] = {}
    for op, child, _ in walk:
        assert parse_genome(child.model_dump()) == child, op
        assert parse_genome(child.to_json()).key == child.key
        if child.key not in sources:
            source = compile_genome(child)
            assert check_design(source) == [], (op, child.describe())
            sources[child.key] = source
    assert len(sources) > 50  # the walk explores, it does not circle one point


def test_mutate_always_changes_the_design(walk):
    mutated = [(child, parent) for op, child, parent in walk if op == "mutate"]
    assert len(mutated) == ITERATIONS // 3
    for child, parent in mutated:
        assert parent is not None and child.key != parent.key


def test_operators_are_deterministic_under_a_seed(walk):
    assert [(op, g.key) for op, g, _ in _walk(7)] == [(op, g.key) for op, g, _ in walk]
    assert [g.model_dump() for _, g, _ in _walk(7)] == [g.model_dump() for _, g, _ in walk]
    assert [g.key for _, g, _ in _walk(8)] != [g.key for _, g, _ in walk]


def test_only_generic_parts_without_a_model_are_drawn(walk):
    for op, child, _ in walk:
        for role, uses in (
            ("encode", child.encode),
            ("retrieve", child.retrieve),
            ("render", [child.render]),
        ):
            for use in uses:
                spec = part(role, use.part)
                assert spec is not None and spec.generic, (op, role, use.part)
                assert not spec.uses_llm, (op, role, use.part)
        assert not child.uses_llm()
        assert 1 <= len(child.retrieve) <= 4
    drawn = {u.part for _, g, _ in walk for u in g.retrieve}
    assert drawn == {
        "route", "explore", "goal_rules", "where_seen", "replay", "similar_episodes", "advances", "recipe",
        "untried", "roles", "setters", "settings", "preludes", "kinds", "rises", "reveals",
    }  # fmt: skip


def test_random_genomes_never_hold_non_generic_parts_even_with_a_model():
    rng = random.Random(3)
    for _ in range(200):
        g = random_genome(rng, GRAPHWORLD_KEYS, allow_llm=True)
        names = {u.part for u in g.encode} | {u.part for u in g.retrieve}
        assert not names & NON_GENERIC, names


def test_encode_parts_follow_the_retrieve_parts(walk):
    for _, child, _ in walk:
        needed = {r for u in child.retrieve for r in part("retrieve", u.part).reads(u.params)}
        assert {u.part for u in child.encode} == needed


def test_observation_fields_come_from_the_keys_given(walk):
    for _, child, _ in walk:
        for role, uses in (("encode", child.encode), ("retrieve", child.retrieve)):
            for use in uses:
                spec = part(role, use.part)
                for p in spec.params:
                    if p.kind == "state_key" and p.name in use.params:
                        assert use.params[p.name] in ["", *GRAPHWORLD_KEYS.scalar], use
                    if p.kind == "list_key" and p.name in use.params:
                        assert use.params[p.name] in ["", *GRAPHWORLD_KEYS.lists], use


def test_operators_keep_to_the_keys_of_another_environment():
    keys = ObsKeys(scalar=["text", "steps_taken"], lists=["admissible_commands"])
    for _, child, _ in _walk(11, keys)[:60]:
        for use in child.encode:
            for name in ("state_key", "neighbors_key"):
                assert use.params.get(name, "text") in ("", "text", "steps_taken", "admissible_commands")


def test_mutating_and_crossing_baseline_genomes():
    rng = random.Random(5)
    spatial, trajectory = baseline_genome("spatial_graph"), baseline_genome("trajectory_retrieval")
    for _ in range(30):
        child = mutate(spatial, rng, GRAPHWORLD_KEYS)
        assert child.key != spatial.key and check_design(compile_genome(child)) == []
        cross = crossover(trajectory, spatial, rng, GRAPHWORLD_KEYS)
        assert cross.key not in (trajectory.key, spatial.key)
        assert check_design(compile_genome(cross)) == []


def test_observation_keys_by_shape():
    keys = observation_keys(
        [
            {
                "location": "a",
                "exits": ["b"],
                "steps": 3,
                "_hidden": "x",
                "done": False,
                "hp": 1.5,
                "inv": {},
            },
            {"location": "b", "exits": [], "items": ["k"], "steps": 4, "turn": "2"},
            None,
        ]
    )
    assert keys.scalar == ["location"]  # a count ("steps", "turn") changes every action and names no state
    assert keys.lists == ["exits", "items"]


def test_env_observation_keys_of_graphworld():
    from atlas.envs.registry import get_env

    keys = env_observation_keys(get_env("graphworld"))
    assert keys.scalar[0] == "location" and keys.lists[0] == "adjacent_rooms"
    assert set(keys.scalar) <= set(GRAPHWORLD_KEYS.scalar) and set(keys.lists) == set(GRAPHWORLD_KEYS.lists)


WALK_IN_A_SUBPROCESS = """
import random, sys
from atlas.alma.genome import ObsKeys
from atlas.alma.genome.operators import crossover, mutate, random_genome
keys = ObsKeys(scalar=["location", "message"], lists=["adjacent_rooms", "objects_here"])
rng = random.Random(13)
pop = [random_genome(rng, keys), random_genome(rng, keys)]
for i in range(60):
    op = i % 3
    g = mutate(rng.choice(pop), rng, keys) if op == 0 else crossover(*rng.sample(pop, 2), rng, keys) if op == 1 else random_genome(rng, keys)
    pop = (pop + [g])[-8:]
    print(g.key)
"""


def test_operators_do_not_depend_on_hash_randomization():
    """The same seed gives the same genomes in processes with different string hashing (no set order)."""
    import os
    import subprocess
    import sys

    def keys(hashseed: str) -> list[str]:
        env = {**os.environ, "PYTHONHASHSEED": hashseed}
        done = subprocess.run(
            [sys.executable, "-c", WALK_IN_A_SUBPROCESS], env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout.split()

    first = keys("1")
    assert len(first) == 60
    assert keys("2") == first == keys("12345")


def _items(g: Genome) -> set[str]:
    """A genome as a set of its choices: each part with its parameters, the store policy, the render."""
    uses = [*g.encode, *g.retrieve]
    return {json.dumps([u.part, u.params], sort_keys=True) for u in uses} | {
        g.store.model_dump_json(),
        g.render.model_dump_json(),
    }


def _apart(a: Genome, b: Genome) -> int:
    return len(_items(a) ^ _items(b))


async def test_mutation_children_come_from_the_first_parent_and_an_edit_from_the_models_genome():
    """make_children: ``mutate`` varies the first parent (the one the archive sampled best), never the
    second; after a usable ``llm_edit`` reply the generation's other children vary the model's genome."""
    first, second = baseline_genome("trajectory_retrieval"), baseline_genome("spatial_graph")
    parents = [(first, 0.1, ""), (second, 0.0, "")]
    children, notes = await make_children(
        "mutate", parents, GRAPHWORLD_KEYS, random.Random(3), count=6, seen=set(), name="m"
    )
    assert len(children) == 6 and not notes
    assert all(_apart(c, first) < _apart(c, second) for c in children)
    edit = {
        "encode": [
            {"part": "transitions", "params": {"state_key": "location", "neighbors_key": "adjacent_rooms"}}
        ],
        "retrieve": [{"part": "explore", "params": {"form": "rules"}}],
        "render": {"part": "lines", "params": {}},
    }
    reply = parse_genome({"name": "x", **edit})
    children, notes = await make_children(
        "llm_edit",
        parents,
        GRAPHWORLD_KEYS,
        random.Random(3),
        count=4,
        seen=set(),
        meta_llm=ScriptedLLM([json.dumps(edit)]),
        name="e",
    )
    assert not notes and _apart(children[0], reply) == 0
    assert all(_apart(c, reply) < min(_apart(c, first), _apart(c, second)) for c in children[1:])


def _changes(a: Genome, b: Genome) -> int:
    """How many leaf values differ between two genomes (parts, parameters, store, render)."""

    def leaves(x, path=""):
        if isinstance(x, dict):
            return {k: v for key, val in x.items() for k, v in leaves(val, f"{path}/{key}").items()}
        if isinstance(x, list):
            return {k: v for i, val in enumerate(x) for k, v in leaves(val, f"{path}/{i}").items()}
        return {path: x}

    la, lb = (leaves(g.model_dump(exclude={"name"})) for g in (a, b))
    return sum(la.get(k) != lb.get(k) for k in set(la) | set(lb))


def test_a_climbing_child_sometimes_makes_two_changes_at_once():
    """Some gains need two changes together (fetch: `any_item` and `min_support=1`); the climb's children
    get another change at probability EXTRA_CHANGE, so a plateau one change wide can be crossed."""
    import atlas.alma.genome.step as step

    parent = baseline_genome("trajectory_retrieval")
    rng = random.Random(5)
    one = [_changes(parent, mutate(parent, rng, GRAPHWORLD_KEYS)) for _ in range(60)]
    rng = random.Random(5)
    climbed = [_changes(parent, step.climb_child(parent, rng, GRAPHWORLD_KEYS, name="c")) for _ in range(60)]
    assert step.EXTRA_CHANGE == 0.5
    assert max(climbed) > max(one) and sum(climbed) > sum(one)


def test_climb_parents_are_the_best_steered_and_ties_go_to_the_newest():
    from atlas.alma.genome.step import PARENTS_PER_ROUND, Candidate, climb_parents

    rng = random.Random(2)
    genomes = [random_genome(rng, GRAPHWORLD_KEYS) for _ in range(7)]
    steered = [0.3, 0.5, 0.5, 0.1, 0.5, 0.9, 0.5]
    screened = [Candidate(genome=g, steered=s) for g, s in zip(genomes, steered, strict=True)]
    screened[6].error = "crashed"
    picked = climb_parents(screened)
    assert len(picked) == PARENTS_PER_ROUND
    assert [screened.index(c) for c in picked] == [5, 4, 2, 1]  # 0.9, then the 0.5s newest first; no error


def test_a_part_a_mutation_adds_starts_at_its_defaults_reading_the_genomes_fields(monkeypatch):
    """With ``NEW_PART_DEFAULTS`` at 1, every part an "add" brings in (and every encode part it needs) has
    its catalog defaults, and its observation fields are those the genome already reads; at 0 some are
    drawn otherwise."""
    from atlas.alma.genome import operators

    keys = ObsKeys(
        scalar=["location", "message"], lists=["adjacent_rooms", "inventory"], weights={"location": 0.3}
    )
    start = parse_genome(
        {
            "name": "map",
            "encode": [
                {"part": "transitions", "params": {"state_key": "message", "neighbors_key": "inventory"}}
            ],
            "retrieve": [{"part": "explore", "params": {"form": "rules", "max_steps": 10}}],
        }
    )

    def added(share: float) -> list[tuple[str, str, dict]]:
        monkeypatch.setattr(operators, "NEW_PART_DEFAULTS", share)
        monkeypatch.setattr(operators, "MOVES", ("add",))
        out = []
        for seed in range(40):
            child = mutate(start, random.Random(seed), keys)
            old = {("encode", u.part) for u in start.encode} | {("retrieve", u.part) for u in start.retrieve}
            out += [
                (role, u.part, u.params)
                for role, uses in (("encode", child.encode), ("retrieve", child.retrieve))
                for u in uses
                if (role, u.part) not in old
            ]
        return out

    at_defaults = added(1.0)
    assert {name for _, name, _ in at_defaults} >= {"route", "goal_rules", "goal_actions"}
    for role, name, params in at_defaults:
        for p in part(role, name).params:
            if p.kind == "text":
                continue
            if p.kind == "state_key":
                assert params[p.name] == "message", (
                    name,
                    params,
                )  # what transitions reads, not the likeliest
            elif p.kind == "list_key":
                assert params[p.name] == "inventory", (name, params)
            else:
                assert params[p.name] == p.default, (name, p.name, params)
    drawn = added(0.0)
    assert any(
        params.get(p.name) != p.default
        for role, name, params in drawn
        for p in part(role, name).params
        if p.kind not in ("text", "state_key", "list_key")
    )


FETCH_KEYS = ObsKeys(
    scalar=["location", "text"],
    lists=["admissible_commands", "inventory"],
    weights={"location": 0.6, "text": 0.1, "admissible_commands": 0.2},
)


def _sighted_with_where_seen() -> Genome:
    return parse_genome(
        {
            "name": "sighted-plus",
            "encode": [
                {"part": "goal_actions", "params": {"state_key": "location"}},
                {"part": "transitions", "params": {"state_key": "location"}},
                {"part": "sightings", "params": {"state_key": "location"}},
            ],
            "retrieve": [
                {"part": "goal_rules"},
                {"part": "explore"},
                {"part": "where_seen"},
                {"part": "route", "params": {"towards": "sighted", "context": "none"}},
            ],
        }
    )


def test_a_parameter_can_make_a_part_read_another_encode_part():
    """``route(towards=sighted)`` reads what ``sightings`` learned: a child that drops ``where_seen``
    keeps ``sightings`` for it (before, the sighted route was lost with it), and turning a route towards
    sighted brings ``sightings`` in, reading the field the genome reads."""
    route = part("retrieve", "route")
    assert route.reads({}) == ("transitions",)
    assert route.reads({"towards": "sighted"}) == ("transitions", "sightings")

    start = _sighted_with_where_seen()
    removed = []
    for seed in range(200):
        child = mutate(start, random.Random(seed), FETCH_KEYS)
        names = [u.part for u in child.retrieve]
        if "where_seen" not in names and "route" in names:
            removed.append(child)
    assert removed, "no child dropped where_seen and kept the route"
    for child in removed:
        route_use = next(u for u in child.retrieve if u.part == "route")
        has_sightings = "sightings" in {u.part for u in child.encode}
        assert has_sightings == (route_use.params.get("towards") == "sighted"), child.model_dump()
    assert any(
        next(u for u in c.retrieve if u.part == "route").params["towards"] == "sighted" for c in removed
    )

    named = parse_genome(
        {
            "name": "named",
            "encode": [{"part": "transitions", "params": {"state_key": "location"}}],
            "retrieve": [{"part": "route", "params": {"towards": "named"}}],
        }
    )
    turned = [
        c
        for seed in range(300)
        if (c := mutate(named, random.Random(seed), FETCH_KEYS))
        and any(u.part == "route" and u.params.get("towards") == "sighted" for u in c.retrieve)
    ]
    assert turned, "no mutation turned the route towards sighted"
    for child in turned:
        sightings = next(u for u in child.encode if u.part == "sightings")
        assert sightings.params["state_key"] in [*FETCH_KEYS.scalar, ""]
    assert any(
        next(u for u in c.encode if u.part == "sightings").params["state_key"] == "location" for c in turned
    )
