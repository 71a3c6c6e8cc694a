"""GraphWorld's ExplorerPolicy heuristic: learn the map from observations only.

Explores breadth-first (nearest unvisited room by the known map), picks the goal object up
when seen, and walks the shortest known path to the destination. Uses nothing hidden, so it
is also a fair reference for what a memory design could advise.
"""

from __future__ import annotations

import random
import re
from collections import deque
from typing import Any

from atlas.core.types import Task
from atlas.protocols.env import Action, Environment

GOAL_RE = re.compile(r"bring the (?P<object>\S+) to (?P<room>room_\w+)", re.IGNORECASE)


def parse_goal(goal: str) -> tuple[str, str] | None:
    """``("key", "room_E")`` from "Bring the key to room_E." (None if it does not match)."""
    m = GOAL_RE.search(goal)
    return (m["object"], m["room"]) if m else None


def shortest_path(adj: dict[str, set[str]], src: str, dst: str) -> list[str] | None:
    """BFS over the known map; neighbours in sorted order so the result is deterministic."""
    prev: dict[str, str | None] = {src: None}
    q = deque([src])
    while q:
        x = q.popleft()
        if x == dst:
            path = [x]
            while prev[path[-1]] is not None:
                path.append(prev[path[-1]])  # type: ignore[arg-type]
            return path[::-1]
        for y in sorted(adj.get(x, ())):
            if y not in prev:
                prev[y] = x
                q.append(y)
    return None


class GraphExplorer:
    def __init__(self, goal: str, rng: random.Random) -> None:
        parsed = parse_goal(goal)
        self.target, self.destination = parsed if parsed else ("", "")
        self.rng = rng
        self.adj: dict[str, set[str]] = {}
        self.visited: set[str] = set()
        self.seen_at: dict[str, str] = {}

    def _learn(self, o: dict[str, Any]) -> None:
        here = o["location"]
        self.visited.add(here)
        for r in o["adjacent_rooms"]:
            self.adj.setdefault(here, set()).add(r)
            self.adj.setdefault(r, set()).add(here)
        for x in o["objects_here"]:
            self.seen_at[x] = here
        for x, r in list(self.seen_at.items()):
            if r == here and x not in o["objects_here"]:
                del self.seen_at[x]

    def _towards(self, here: str, dst: str) -> Action | None:
        path = shortest_path(self.adj, here, dst)
        if path and len(path) > 1:
            return Action("move_to", {"room": path[1]})
        return None

    def _explore(self, here: str) -> Action | None:
        frontier = [r for r in self.adj if r not in self.visited]
        best: list[tuple[int, list[str]]] = []
        for r in frontier:
            p = shortest_path(self.adj, here, r)
            if p:
                best.append((len(p), p))
        if not best:
            return None
        shortest = min(n for n, _ in best)
        path = self.rng.choice([p for n, p in best if n == shortest])
        return Action("move_to", {"room": path[1]})

    def next_action(self, o: dict[str, Any]) -> Action | None:
        self._learn(o)
        here = o["location"]
        if self.target in o["inventory"]:
            if here == self.destination:
                return Action("put_down", {"object": self.target})
            return self._towards(here, self.destination) or self._explore(here)
        if self.target in o["objects_here"]:
            return Action("pick_up", {"object": self.target})
        if self.target in self.seen_at:
            step = self._towards(here, self.seen_at[self.target])
            if step:
                return step
        return self._explore(here)


def make_planner(env: Environment, task: Task, rng: random.Random) -> GraphExplorer:
    """GraphWorld's explorer for one episode (registered in ``atlas.envs.registry``)."""
    return GraphExplorer(env.format_goal(task), rng)


__all__ = ["GraphExplorer", "make_planner", "parse_goal", "shortest_path"]
