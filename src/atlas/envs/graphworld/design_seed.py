"""GraphWorld seed design: a spatial map learned from observations, plus object sightings.

update() adds every (room, adjacent room) edge the agent saw to the graph store and counts where
objects were seen; recall() turns that into one rule per situation, the form the task agent acts on:
pick the object up where it is, the known route toward where it was seen most, and from every known
room the next room toward the goal room while carrying it, then put it down there.
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


def _moves(path, carrying):
    # One line per situation, in the observation's words: the form the agent acts on.
    return ["In " + path[i] + " when you carry " + carrying + ": move_to " + path[i + 1] + "."
            for i in range(len(path) - 1)]


def recall(memory, task, tools):
    match = GOAL.search(task["goal"])
    start = task["observation"].get("location", "")
    if not match or not start:
        return ""
    obj, dest = match.group(1), match.group(2)
    lines = ["When the " + obj + " is here: pick_up " + obj + "."]
    seen = memory.get("sightings", {}).get(obj, {})
    if seen and obj not in task["observation"].get("objects_here", []):
        likely = max(seen, key=seen.get)
        lines.append("The " + obj + " was seen before in: " + ", ".join(sorted(seen, key=seen.get)[::-1][:3]) + ".")
        lines += _moves(_route(tools, start, likely) or [], "nothing")
    for room in memory.get("rooms", []):
        path = _route(tools, room, dest)
        if path and len(path) > 1:
            lines.append("In " + room + " when you carry the " + obj + ": move_to " + path[1] + ".")
    lines.append("In " + dest + " when you carry the " + obj + ": put_down " + obj + ".")
    if len(lines) == 2:
        lines.append("No map yet: explore rooms you have not visited and remember which rooms connect.")
    return "\n".join(lines)
