"""spatial_graph: a map of the world learned from observations, plus object sightings.

update() adds every (location, adjacent room) edge seen to the graph store and counts where each
object was seen; recall() plans a route with the graph: to where the goal object was seen most,
then to the goal room. Built for GraphWorld, but it reads observations defensively
(``location`` / ``adjacent_rooms`` / ``objects_here`` when present), so on other environments it
simply has nothing to say instead of crashing.
"""

import re

GOAL = re.compile(r"bring the (\S+?)\.? to (\S+?)\.?$", re.IGNORECASE)


def _observations(episode):
    first = (episode.get("task") or {}).get("observation") or {}
    yield first
    for step in episode.get("steps", []):
        obs = step.get("observation") or {}
        yield obs


def update(memory, episode, tools):
    edges = []
    sightings = memory.setdefault("sightings", {})
    for obs in _observations(episode):
        here = obs.get("location")
        if not isinstance(here, str) or not here:
            continue
        for other in obs.get("adjacent_rooms") or []:
            if isinstance(other, str) and other and other != here:
                edges.append([here, other])
        for obj in obs.get("objects_here") or []:
            counts = sightings.setdefault(str(obj), {})
            counts[here] = counts.get(here, 0) + 1
    if edges:
        tools.graph_update(edges)
    memory["episodes"] = memory.get("episodes", 0) + 1
    print("map update:", len(edges), "edges,", len(sightings), "objects tracked")


def _route(tools, src, dst):
    if src == dst:
        return [src]
    return tools.graph_path(src, dst)


def recall(memory, task, tools):
    obs = task.get("observation") or {}
    start = obs.get("location")
    match = GOAL.search(task.get("goal", "").strip())
    if not match or not isinstance(start, str):
        return ""
    obj, dest = match.group(1), match.group(2)
    lines = []
    exits = tools.graph_neighbors(start)
    if exits:
        lines.append("Known exits from " + start + ": " + ", ".join(exits) + ".")
    seen = memory.get("sightings", {}).get(obj, {})
    source = None
    if obj in (obs.get("objects_here") or []):
        lines.append("The " + obj + " is here: pick it up first.")
        source = start
    elif seen:
        ranked = sorted(seen.items(), key=lambda kv: -kv[1])
        source = ranked[0][0]
        lines.append("The " + obj + " was seen before in: " + ", ".join(r for r, _ in ranked[:3]) + ".")
        path = _route(tools, start, source)
        if path:
            lines.append("Route to " + source + ": " + " -> ".join(path) + ".")
    if source:
        path = _route(tools, source, dest)
        if path:
            lines.append("Then carry it to " + dest + ": " + " -> ".join(path) + ".")
    if not lines:
        return "No map of this area yet: explore systematically and note which rooms connect."
    lines.append("Objects move between tasks: if the " + obj + " is not where it was seen, explore.")
    return "\n".join(lines)
