"""GraphWorld's seed design and context schema (what the meta-agent is shown)."""

from __future__ import annotations

import ast
import json
import re
from collections import deque

from atlas.envs import ExplorerPolicy, episode_view, get_env, task_view
from atlas.envs.graphworld import GraphWorldEnv

ALLOWED = {
    "math",
    "re",
    "json",
    "collections",
    "itertools",
    "functools",
    "heapq",
    "statistics",
    "string",
    "random",
}


class GraphTools:
    """The graph half of the design tool API, in-process (the sandbox proxies the real one)."""

    def __init__(self) -> None:
        self.adj: dict[str, set[str]] = {}

    def graph_update(self, edges):
        for a, b in edges:
            self.adj.setdefault(a, set()).add(b)
            self.adj.setdefault(b, set()).add(a)
        return f"{len(edges)} edges"

    def graph_neighbors(self, node):
        return sorted(self.adj.get(node, ()))

    def graph_path(self, src, dst):
        prev, q = {src: None}, deque([src])
        while q:
            x = q.popleft()
            if x == dst:
                path = [x]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return path[::-1]
            for y in sorted(self.adj.get(x, ())):
                if y not in prev:
                    prev[y] = x
                    q.append(y)
        return None


def test_seed_design_follows_the_contract():
    source = GraphWorldEnv().seed_design()
    tree = ast.parse(source)
    funcs = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert {"update", "recall"} <= funcs
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            assert all(a.name.split(".")[0] in ALLOWED for a in node.names)
        if isinstance(node, ast.ImportFrom):
            assert node.module.split(".")[0] in ALLOWED
        if isinstance(node, ast.Name):
            assert node.id not in {"open", "eval", "exec", "compile", "__import__", "globals", "getattr"}
        if isinstance(node, ast.Attribute):
            assert not node.attr.startswith("__")


def test_seed_design_learns_a_map_and_gives_routes():
    env = GraphWorldEnv()
    ns: dict = {}
    exec(compile(env.seed_design(), "design_seed.py", "exec"), ns)
    memory: dict = {}
    tools = GraphTools()
    tasks = env.generate_tasks(6, seed=40)
    for task in tasks[:5]:
        ns["update"](memory, episode_view(env, ExplorerPolicy(0).run(env, task)), tools)
    json.dumps(memory)
    assert memory["episodes"] == 5 and tools.adj
    probe = env.clone()
    view = task_view(probe, tasks[5], probe.reset(tasks[5]))
    advice = ns["recall"](memory, view, tools)
    assert isinstance(advice, str) and advice
    # One rule per situation, the form the task agent matches: every move is to an adjacent room.
    world = probe._require()
    moves = re.findall(r"In (room_\w+) when you carry [^:]+: move_to (room_\w+)\.", advice)
    assert moves and all(b in world.adjacency[a] for a, b in moves)
    assert f"In {world.destination} when you carry the {world.target_object}: put_down" in advice


def test_context_schema_is_json_and_matches_views():
    schema = get_env("graphworld").context_schema()
    json.dumps(schema)
    assert set(schema["task"]["example"]) == {"goal", "observation", "observation_text", "actions", "domain"}
    assert set(schema["episode"]["example"]) == {"task", "steps", "success", "score", "steps_taken"}
    assert set(schema["observation"]["keys"]) == set(schema["task"]["example"]["observation"])
    assert [t["name"] for t in schema["agent_tools"]] == ["look", "move_to", "pick_up", "put_down"]


def test_seed_design_sends_collection_episodes_to_rooms_never_entered():
    env = GraphWorldEnv()
    ns: dict = {}
    exec(compile(env.seed_design(), "design_seed.py", "exec"), ns)
    task = env.generate_tasks(1, seed=7)[0]
    probe = env.clone()
    view = task_view(probe, task, probe.reset(task))
    start = view["observation"]["location"]
    memory: dict = {}
    tools = GraphTools()
    ns["update"](memory, {"task": view, "steps": [], "success": False}, tools)  # saw the start room only
    advice = ns["recall"](memory, view, tools)
    explore = re.findall(r"In (room_\w+) when you carry nothing: move_to (room_\w+)\.", advice)
    assert explore == [(start, explore[0][1])] and explore[0][1] in view["observation"]["adjacent_rooms"]
    world = probe._require()
    for room in world.rooms:  # once every room was entered, no exploring rule is left
        ns["update"](
            memory,
            {
                "task": {"observation": {"location": room, "adjacent_rooms": world.adjacency[room]}},
                "steps": [],
                "success": False,
            },
            tools,
        )
    assert "when you carry nothing" not in ns["recall"](memory, view, tools)


def test_an_agent_that_follows_the_seed_designs_advice_solves_tasks_once_the_map_is_known():
    """The seed design's advice, read by the task agent's matcher (advised action, else the first
    listed one), solves every task of a family whose map it has learned: the search plan finds the
    object, the carry rules bring it to the goal room."""
    from atlas.agent.advice_match import advised_actions
    from atlas.agent.choice import labels as action_labels

    env = GraphWorldEnv(family=5)  # every task on one map
    ns: dict = {}
    exec(compile(env.seed_design(), "design_seed.py", "exec"), ns)
    memory: dict = {}
    tools = GraphTools()
    probe = env.clone()
    probe.reset(env.generate_tasks(1, seed=5)[0])
    world = probe._require()
    for room in world.rooms:
        ns["update"](
            memory,
            {
                "task": {"observation": {"location": room, "adjacent_rooms": world.adjacency[room]}},
                "steps": [],
                "success": False,
            },
            tools,
        )
    solved = 0
    tasks = env.generate_tasks(8, seed=300)
    for task in tasks:
        obs = probe.reset(task)
        advice = ns["recall"](memory, task_view(probe, task, obs), tools)
        assert "Search plan: move_to" in advice
        done: list[str] = []
        result = None
        for _ in range(probe.max_steps):
            actions = probe.candidate_actions(obs)
            labels = action_labels(actions)
            advised = advised_actions(advice, probe.summarize_observation(obs), labels, done)
            pick = next(iter(advised), labels[0])
            done.append(pick)
            result = probe.step(actions[labels.index(pick)])
            obs = result.observation
            if result.done:
                break
        solved += bool(result and result.success)
    assert solved == len(tasks)
