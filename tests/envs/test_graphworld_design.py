"""GraphWorld's seed design and context schema (what the meta-agent is shown)."""

from __future__ import annotations

import ast
import json
import re
from collections import deque

from atlas.envs import ExplorerPolicy, episode_view, get_env, task_view
from atlas.envs.graphworld import GraphWorldEnv

ALLOWED = {"math", "re", "json", "collections", "itertools", "functools", "heapq", "statistics", "string",
           "random"}


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
    assert set(schema["task"]["example"]) == {"goal", "observation", "domain"}
    assert set(schema["episode"]["example"]) == {"task", "steps", "success", "score", "steps_taken"}
    assert set(schema["observation"]["keys"]) == set(schema["task"]["example"]["observation"])
    assert [t["name"] for t in schema["agent_tools"]] == ["look", "move_to", "pick_up", "put_down"]
