"""TextWorld seed design: a map of rooms from '-= Room =-' headers and the 'go' commands between
them, plus the command sequences of past successes. recall() gives the known exits of the start
room and the most similar successful command sequence. Allowed imports only."""

import re

ROOM = re.compile(r"-= (.+?) =-")


def update(memory, episode, tools):
    room = ""
    m = ROOM.search(episode["task"]["observation"].get("text", ""))
    if m:
        room = m.group(1)
    edges = []
    for step in episode["steps"]:
        command = step["action"]["args"].get("command", "")
        m = ROOM.search((step.get("observation") or {}).get("text", ""))
        if m:
            if room and command.startswith("go ") and m.group(1) != room:
                edges.append([room, m.group(1)])
            room = m.group(1)
    if edges:
        tools.graph_update(edges)
    memory["episodes"] = memory.get("episodes", 0) + 1
    if episode["success"]:
        commands = [
            s["action"]["args"].get("command", "") for s in episode["steps"] if s["action"]["tool"] == "act"
        ]
        first = episode["task"]["observation"].get("text", "")[:300]
        tools.store_obs(first + " => " + "; ".join(commands), {"steps": episode["steps_taken"]}, "successes")
    print("edges learned:", len(edges))


def recall(memory, task, tools):
    text = task["observation"].get("text", "")
    lines = []
    m = ROOM.search(text)
    if m:
        exits = tools.graph_neighbors(m.group(1))
        if exits:
            lines.append("From " + m.group(1) + " you can reach: " + ", ".join(exits) + ".")
    similar = tools.find_similar(text[:300] or task["goal"], 1, "successes")
    if similar and similar[0]["score"] > 0.5:
        lines.append("A similar game was won with: " + similar[0]["text"].split(" => ", 1)[-1])
    lines.append("Read the objective carefully; open closed doors and containers; take only what is asked.")
    return "\n".join(lines)
