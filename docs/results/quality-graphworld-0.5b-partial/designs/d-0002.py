"""GraphWorld seed design: a spatial map learned from observations, plus object sightings.

update() adds every (room, adjacent room) edge the agent saw to the graph store and counts where
objects were seen; recall() turns that into a route: the known path to where the goal object was
last seen, then to the goal room, plus the map around the start.
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
    sightings = memory.setdefault("sightings", {})
    rooms = memory.setdefault("rooms", [])
    for obs in _observations(episode):
        here = obs["location"]
        if here not in rooms:
            rooms.append(here)
        for other in obs.get("adjacent_rooms", []):
            edges.append([here, other])
        for obj in obs.get("objects_here", []):
            counts = sightings.setdefault(obj, {})
            counts[here] = counts.get(here, 0) + 1
    if edges:
        tools.graph_update(edges)
    memory["episodes"] = memory.get("episodes", 0) + 1
    memory["successes"] = memory.get("successes", 0) + (1 if episode["success"] else 0)
    print("learned", len(edges), "edges;", len(rooms), "rooms visited so far")


def _route(tools, src, dst):
    if src == dst:
        return [src]
    return tools.graph_path(src, dst)


def recall(memory, task, tools):
    match = GOAL.search(task["goal"])
    start = task["observation"].get("location", "")
    if not match or not start:
        return ""
    obj, dest = match.group(1), match.group(2)
    lines = []
    neighbors = tools.graph_neighbors(start)
    if neighbors:
        lines.append("Known exits from " + start + ": " + ", ".join(neighbors) + ".")
    seen = memory.get("sightings", {}).get(obj, {})
    if obj in task["observation"].get("objects_here", []):
        lines.append("The " + obj + " is right here: pick it up first.")
    elif seen:
        ranked = sorted(seen.items(), key=lambda kv: -kv[1])
        lines.append("The " + obj + " was seen before in: " + ", ".join(r for r, _ in ranked[:3]) + ".")
        path = _route(tools, start, ranked[0][0])
        if path:
            lines.append("Route to " + ranked[0][0] + ": " + " -> ".join(path) + ".")
    path = None
    if seen:
        path = _route(tools, max(seen, key=seen.get), dest)
    if path:
        lines.append("Then carry it to " + dest + ": " + " -> ".join(path) + ".")
    home = _route(tools, start, dest)
    if home:
        lines.append("Known route from " + start + " to " + dest + ": " + " -> ".join(home) + ".")
    if not lines:
        return "No map yet: explore systematically and remember which rooms connect."
    lines.append("Only move between adjacent rooms; put the object down in " + dest + ".")
    return "\n".join(lines)
