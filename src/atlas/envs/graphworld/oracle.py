"""Oracle advice for GraphWorld: what the headroom measurement gives the agent.

``learnable``: what a perfect memory of earlier episodes of the same family could know — the
map, a next-hop table toward the goal room, an order in which to search the rooms. Never where
the object lies: placements are drawn anew for every task, so no memory could know it.
``full``: the hidden answer (where the object is, the routes there and on to the goal) — an upper
bound that no design can reach. Neither text ever reaches a design, its tools or its logs.
"""

from __future__ import annotations

import itertools
from collections import deque

from atlas.core.types import Task
from atlas.envs.graphworld.world import GraphWorldParams, World, build_world

LEVELS = ("learnable", "full")


def _world(task: Task, params: GraphWorldParams) -> World:
    meta = task.metadata
    p = GraphWorldParams.from_dict(meta["params"]) if "params" in meta else params
    return build_world(p, seed=int(meta["seed"]), family=int(meta["family"]))


def shortest_path(adjacency: dict[str, list[str]], src: str, dst: str) -> list[str]:
    """Rooms from ``src`` to ``dst`` inclusive (breadth-first; ties by adjacency order)."""
    prev: dict[str, str | None] = {src: None}
    queue = deque([src])
    while queue:
        room = queue.popleft()
        if room == dst:
            break
        for nxt in adjacency[room]:
            if nxt not in prev:
                prev[nxt] = room
                queue.append(nxt)
    if dst not in prev:
        return []
    path = [dst]
    while path[-1] != src:
        path.append(prev[path[-1]])  # type: ignore[arg-type]
    return path[::-1]


def next_hops(adjacency: dict[str, list[str]], dst: str) -> dict[str, str]:
    """For every room but ``dst``, the adjacent room one step closer to ``dst``."""
    paths = {room: shortest_path(adjacency, room, dst) for room in adjacency if room != dst}
    return {room: path[1] for room, path in paths.items() if len(path) > 1}


def search_walk(adjacency: dict[str, list[str]], start: str) -> list[str]:
    """A walk from ``start`` that enters every room, greedily going to the nearest unvisited room."""
    walk, seen, here = [start], {start}, start
    while len(seen) < len(adjacency):
        best: list[str] = []
        for room in adjacency:
            if room in seen:
                continue
            path = shortest_path(adjacency, here, room)
            if path and (not best or len(path) < len(best)):
                best = path
        if not best:
            break
        walk.extend(best[1:])
        seen.update(best)
        here = best[-1]
    return walk


def _route_lines(path: list[str], carrying: str) -> list[str]:
    return [f"In {a} when you carry {carrying}: move_to {b}." for a, b in itertools.pairwise(path)]


def oracle_advice(task: Task, level: str, params: GraphWorldParams | None = None) -> str:
    """The advice text for ``task`` at ``level`` ("learnable" or "full"): one line per situation,
    the situation in the observation's words, then the action as the agent's list writes it (the
    form the task agent matches against what it sees, ``atlas.agent.advice_match``)."""
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, got {level!r}")
    w = _world(task, params or GraphWorldParams())
    obj, dest = w.target_object, w.destination
    if level == "full":
        where = w.object_rooms[obj]
        assert where is not None
        lines = [f"The {obj} is in {where}."]
        lines += _route_lines(shortest_path(w.adjacency, w.start, where), "nothing")
        lines.append(f"In {where} when the {obj} is here: pick_up {obj}.")
        lines += _route_lines(shortest_path(w.adjacency, where, dest), f"the {obj}")
        lines.append(f"In {dest} when you carry the {obj}: put_down {obj}.")
        return "\n".join(lines)
    walk = search_walk(w.adjacency, w.start)
    hops = next_hops(w.adjacency, dest)
    lines = [
        f"To find the {obj}, search plan: " + ", ".join(f"move_to {room}" for room in walk[1:]) + ".",
        f"When the {obj} is here: pick_up {obj}.",
        *(f"In {a} when you carry the {obj}: move_to {b}." for a, b in hops.items()),
        f"In {dest} when you carry the {obj}: put_down {obj}.",
        "Map: " + "; ".join(f"{r}: {', '.join(ns)}" for r, ns in w.adjacency.items()) + ".",
    ]
    return "\n".join(lines)


__all__ = ["LEVELS", "next_hops", "oracle_advice", "search_walk", "shortest_path"]
