"""GraphWorld: generator determinism, the family property, tool semantics, scoring."""

from __future__ import annotations

import pytest

from atlas.envs.graphworld import OBJECT_POOL, GraphWorldEnv, GraphWorldParams, build_world
from atlas.envs.graphworld.explorer import shortest_path
from atlas.envs.graphworld.world import room_names
from atlas.errors import ConfigError, EnvError
from atlas.protocols.env import Action, Environment


@pytest.fixture
def env() -> GraphWorldEnv:
    return GraphWorldEnv()


def world_of(env: GraphWorldEnv, task):
    env.reset(task)
    return env._world


def test_implements_protocol_and_defaults(env):
    assert isinstance(env, Environment)
    assert env.name == "graphworld" and env.max_steps == 20
    assert [t.name for t in env.tools()] == ["look", "move_to", "pick_up", "put_down"]
    assert len(OBJECT_POOL) >= 28
    assert room_names(3) == ["room_A", "room_B", "room_C"]
    assert room_names(28)[26:] == ["room_AA", "room_AB"]


def test_generation_is_deterministic(env):
    a = env.generate_tasks(5, seed=11)
    b = GraphWorldEnv().generate_tasks(5, seed=11)
    assert [t.model_dump(exclude={"id"}) for t in a] == [t.model_dump(exclude={"id"}) for t in b]
    assert [t.id for t in a] == [t.id for t in b]
    assert [t.metadata["seed"] for t in a] == [11, 12, 13, 14, 15]
    wa, wb = world_of(env, a[2]), world_of(GraphWorldEnv(), b[2])
    assert wa.adjacency == wb.adjacency and wa.object_rooms == wb.object_rooms and wa.start == wb.start


def test_world_shape(env):
    for task in env.generate_tasks(30, seed=0):
        w = world_of(env, task)
        assert len(w.rooms) == 8 and len(w.object_rooms) == 3
        assert w.destination != w.object_rooms[w.target_object]
        assert task.description == f"Bring the {w.target_object} to {w.destination}."
        # Every room reachable (isolated rooms are attached).
        adj = {r: set(ns) for r, ns in w.adjacency.items()}
        assert all(shortest_path(adj, w.start, r) for r in w.rooms)
        assert all(a in w.adjacency[b] for a in w.rooms for b in w.adjacency[a])  # undirected


def test_family_property(env):
    tasks = env.generate_family_tasks(6, family=3, seed=100)
    worlds = [build_world(env.params, seed=t.metadata["seed"], family=3) for t in tasks]
    assert all(t.metadata["family"] == 3 for t in tasks)
    assert all(w.adjacency == worlds[0].adjacency for w in worlds)  # same topology
    placements = {
        (tuple(sorted(w.object_rooms.items())), w.target_object, w.destination, w.start) for w in worlds
    }
    assert len(placements) == len(worlds)  # different placements / goals
    # Default family mode: generate_tasks shares one family; without it each task differs.
    assert {t.metadata["family"] for t in env.generate_tasks(4, seed=9)} == {9}
    free = GraphWorldEnv(family_mode=False).generate_tasks(4, seed=9)
    assert [t.metadata["family"] for t in free] == [9, 10, 11, 12]
    other = build_world(env.params, seed=100, family=4)
    assert other.adjacency != worlds[0].adjacency


def test_parameters_are_configurable():
    env = GraphWorldEnv(rooms=12, objects=5, connectivity=0.5, max_steps=30)
    task = env.generate_tasks(1, seed=1)[0]
    w = world_of(env, task)
    assert len(w.rooms) == 12 and len(w.object_rooms) == 5 and env.max_steps == 30
    # The task carries its params: a default env replays it identically.
    assert world_of(GraphWorldEnv(), task).rooms == w.rooms
    with pytest.raises(EnvError):
        GraphWorldEnv(doors=3)
    with pytest.raises(ConfigError):
        GraphWorldParams(rooms=1)


def test_observation_shows_only_local_state(env):
    task = env.generate_tasks(1, seed=5)[0]
    obs = env.reset(task)
    w = env._world
    assert set(obs) == {
        "location",
        "adjacent_rooms",
        "objects_here",
        "inventory",
        "message",
        "steps_taken",
        "steps_left",
    }
    assert obs["location"] == w.start
    assert obs["adjacent_rooms"] == w.adjacency[w.start]
    assert obs["objects_here"] == w.objects_in(w.start)
    text = env.summarize_observation(obs)
    assert w.start in text and "Steps left: 20" in text


def test_tool_semantics_and_error_messages():
    env = GraphWorldEnv()
    task = env.generate_tasks(1, seed=2)[0]
    obs = env.reset(task)
    w = env._world
    here = obs["location"]
    far = next(r for r in w.rooms if r != here and r not in w.adjacency[here])

    r = env.step(Action("look"))
    assert r.counted is False and r.error is None and env.steps_taken() == 0

    r = env.step(Action("move_to", {"room": far}))
    assert r.error and "not adjacent" in r.error and ", ".join(w.adjacency[here]) in r.error
    assert r.observation["location"] == here and env.steps_taken() == 1  # invalid moves cost a step

    r = env.step(Action("move_to", {"room": "kitchen"}))
    assert "no room called 'kitchen'" in r.error
    r = env.step(Action("move_to", {"room": here}))
    assert "already in" in r.error

    r = env.step(Action("pick_up", {"object": "unicorn"}))
    assert "There is no unicorn" in r.error and "Objects here:" in r.error
    r = env.step(Action("put_down", {"object": "key"}))
    assert "do not carry" in r.error

    before = env.steps_taken()
    r = env.step(Action("fly", {"to": "moon"}))
    assert "unknown tool 'fly'" in r.error and r.counted is False
    r = env.step(Action("move_to", {}))
    assert "missing required argument" in r.error
    r = env.step(Action("move_to", {"room": 3}))
    assert "must be a string" in r.error
    r = env.step(Action("look", {"x": 1}))
    assert "unexpected argument" in r.error
    assert env.steps_taken() == before  # malformed calls are free

    nxt = w.adjacency[here][0]
    r = env.step(Action("move_to", {"room": nxt}))
    assert r.error is None and r.observation["location"] == nxt


def test_step_before_reset_is_misuse():
    with pytest.raises(EnvError):
        GraphWorldEnv().step(Action("look"))


def _solve(env: GraphWorldEnv, task) -> list[Action]:
    """The optimal plan from the hidden world (tests only)."""
    env.reset(task)
    w = env._world
    adj = {r: set(ns) for r, ns in w.adjacency.items()}
    src = w.object_rooms[w.target_object]
    plan = [Action("move_to", {"room": r}) for r in shortest_path(adj, w.start, src)[1:]]
    plan.append(Action("pick_up", {"object": w.target_object}))
    plan += [Action("move_to", {"room": r}) for r in shortest_path(adj, src, w.destination)[1:]]
    plan.append(Action("put_down", {"object": w.target_object}))
    return plan


def test_success_and_score():
    env = GraphWorldEnv()
    task = env.generate_tasks(1, seed=4)[0]
    plan = _solve(env, task)
    env.reset(task)
    for i, a in enumerate(plan):
        r = env.step(a)
        assert r.error is None
        assert r.done == (i == len(plan) - 1)
    assert env.success() and r.success and "Task complete" in r.observation["message"]
    assert env.score() == pytest.approx(max(0.5, 1 - len(plan) / 40))
    r = env.step(Action("look"))
    assert r.error and "over" in r.error


def test_carrying_into_destination_is_not_enough_and_score_floor():
    env = GraphWorldEnv(max_steps=40)
    task = env.generate_tasks(1, seed=4)[0]
    plan = _solve(env, task)
    env.reset(task)
    for a in plan[:-1]:
        env.step(a)
    assert not env.success() and env.score() == 0.0
    # Waste steps with free-of-effect but counted invalid moves, then finish: floor 0.5.
    for _ in range(30 - len(plan)):
        env.step(Action("pick_up", {"object": "unicorn"}))
    env.step(plan[-1])
    assert env.success() and env.steps_taken() == 30 and env.score() == 0.5


def test_step_limit_fails():
    env = GraphWorldEnv()
    task = env.generate_tasks(1, seed=8)[0]
    env.reset(task)
    for _ in range(20):
        r = env.step(Action("pick_up", {"object": "unicorn"}))
    assert r.done and not r.success and env.score() == 0.0 and "Out of steps" in r.observation["message"]


def test_clone_is_independent(env):
    task = env.generate_tasks(1, seed=1)[0]
    a, b = env.clone(), env.clone()
    a.reset(task)
    b.reset(task)
    nxt = a.observe()["adjacent_rooms"][0]
    a.step(Action("move_to", {"room": nxt}))
    assert b.observe()["location"] != a.observe()["location"] and b.steps_taken() == 0


def test_tools_narrow_arguments_to_current_choices():
    env = GraphWorldEnv()
    assert "enum" not in env.tools()[1].parameters["properties"]["room"]  # no episode yet
    task = env.generate_tasks(1, seed=4)[0]
    obs = env.reset(task)
    by_name = {t.name: t for t in env.tools()}
    assert by_name["move_to"].parameters["properties"]["room"]["enum"] == obs["adjacent_rooms"]
    if obs["objects_here"]:
        assert by_name["pick_up"].parameters["properties"]["object"]["enum"] == obs["objects_here"]
    else:
        assert "enum" not in by_name["pick_up"].parameters["properties"]["object"]
    assert "enum" not in by_name["put_down"].parameters["properties"]["object"]  # carrying nothing
    free = GraphWorldEnv(constrain_args=False)
    free.reset(task)
    assert all("enum" not in str(t.parameters) for t in free.tools())
