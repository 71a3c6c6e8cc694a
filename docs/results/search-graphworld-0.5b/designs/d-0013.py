"""GraphWorld seed design: a spatial map learned from observations.

update() adds every (room, adjacent room) edge the agent saw to the graph store and remembers which
rooms it entered; recall() turns that into one rule per situation, the form the task agent acts on:
pick the object up where it is; while the map has rooms seen but never entered, from every entered
room the next room toward the nearest of them (so collection episodes map the world); a search plan
that enters every known room from the task's start (the agent follows it while no rule applies);
from every known room the next room toward the goal room while carrying the object, then put it
down there.
Objects are placed anew in every task, so where one was seen before says nothing about where it is.
Allowed imports only; memory stays plain JSON.
"""

import re

GOAL = re.compile(r"bring the (\S+) to (room_\w+)", re.IGNORECASE)

def _observations(episode):
    yield episode["task"]["observation"]
    for step in episode["steps"]:
        obs = step.get("observation") or {}
        if "location" in obs:
            yield obs


def update(memory, episode, tools):
    edges = []
    entered = memory.setdefault("rooms", [])
    seen = memory.setdefault("seen", [])
    adjacent = memory.setdefault("adjacent", {})
    for obs in _observations(episode):
        here = obs["location"]
        if here not in entered:
            entered.append(here)
        for other in obs.get("adjacent_rooms", []):
            edges.append([here, other])
            if other not in seen:
                seen.append(other)
            for a, b in ((here, other), (other, here)):
                if b not in adjacent.setdefault(a, []):
                    adjacent[a].append(b)
    if edges:
        tools.graph_update(edges)
    memory["episodes"] = memory.get("episodes", 0) + 1
    memory["successes"] = memory.get("successes", 0) + (1 if episode["success"] else 0)
    unexplored = [r for r in seen if r not in entered]
    print("learned", len(edges), "edges;", len(entered), "rooms entered,", len(unexplored), "seen but never entered")


def _next_hop(tools, src, targets):
    """The first move on a shortest known route from src to the nearest of targets (None: no route)."""
    best = None
    for dst in targets:
        path = tools.graph_path(src, dst) if src != dst else None
        if path and len(path) > 1 and (best is None or len(path) < len(best)):
            best = path
    return best[1] if best else None


def _search_walk(adjacent, start):
    """Moves that enter every known room from start, always on to the nearest room not yet entered."""
    moves, here, entered = [], start, {start}
    while True:
        prev, queue, goal = {here: None}, [here], None
        for room in queue:  # breadth-first; the queue grows while it is read
            if room not in entered:
                goal = room
                break
            for nxt in adjacent.get(room, []):
                if nxt not in prev:
                    prev[nxt] = room
                    queue.append(nxt)
        if goal is None:
            return moves
        path = [goal]
        while prev[path[-1]] != here:
            path.append(prev[path[-1]])
        moves += path[::-1]
        entered.update(path)
        here = goal


def recall(memory, task, tools):
    match = GOAL.search(task["goal"])
    if not match:
        return ""
    obj, dest = match.group(1), match.group(2)
    entered = memory.get("rooms", [])
    unexplored = [r for r in memory.get("seen", []) if r not in entered]
    lines = ["When the " + obj + " is here: pick_up " + obj + "."]
    if unexplored:
        lines.append("Rooms never entered yet: " + ", ".join(unexplored) + ".")
        for room in entered:
            hop = _next_hop(tools, room, unexplored)
            if hop:
                lines.append("In " + room + " when you carry nothing: move_to " + hop + ".")
    start = task["observation"].get("location", "")
    walk = _search_walk(memory.get("adjacent", {}), start) if start else []
    if len(walk) >= 3:
        lines.append("Search plan: " + ", ".join("move_to " + room for room in walk) + ".")
    for room in entered + unexplored:
        hop = _next_hop(tools, room, [dest])
        if hop:
            lines.append("In " + room + " when you carry the " + obj + ": move_to " + hop + ".")
    lines.append("In " + dest + " when you carry the " + obj + ": put_down " + obj + ".")
    if not entered:
        lines.append("No map yet: explore rooms you have not visited and remember which rooms connect.")
    return "\n".join(lines)
