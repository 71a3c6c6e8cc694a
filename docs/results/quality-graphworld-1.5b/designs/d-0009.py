"""memory_bank_v2: a memory bank that stores detailed information about each task to make informed decisions.

update() stores the full observation and environment for each task in the memory. recall() plans a route
with the graph: to the goal room. Built for GraphWorld, but it reads observations defensively
(``location`` / ``adjacent_rooms`` / ``objects_here`` when present), so on other environments it
simply has nothing to say instead of crashing.
"""

import json

INSTRUCTION = (
    "Extract 1 to 3 short, detailed insights from this episode. If it succeeded, say which "
    "strategy worked; if it failed, say what went wrong and how to avoid it. Reply as JSON: "
    '{"insights": [{"title": "...", "content": "..."}]}'
)
MAX_STEPS = 30


def _episode_text(episode):
    lines = ["Goal: " + episode["task"].get("goal", ""),
             "Outcome: " + ("success" if episode.get("success") else "failure")]
    for step in episode.get("steps", [])[:MAX_STEPS]:
        action = step.get("action") or {}
        line = "- " + str(action.get("tool")) + " " + json.dumps(action.get("args") or {}, sort_keys=True)
        if step.get("error"):
            line += " -> error: " + str(step["error"])[:80]
        lines.append(line)
    return "\n".join(lines)


def update(memory, episode, tools):
    try:
        reply = tools.analyze(_episode_text(episode), INSTRUCTION, "json")
    except Exception as exc:
        print("analyze failed:", exc)
        reply = {}
    items = reply.get("insights", []) if isinstance(reply, dict) else []
    stored = 0
    for item in items[:3]:
        if not isinstance(item, dict):
            continue
        title = str(item.get("title", "")).strip()
        content = str(item.get("content", "")).strip()
        if not content:
            continue
        tools.store_obs(json.dumps(episode), {"title": title, "content": content}, "insights")
        stored += 1
    memory["items"] = memory.get("items", 0) + stored
    memory["episodes"] = memory.get("episodes", 0) + 1
    print("stored", stored, "insights")


def recall(memory, task, tools):
    if not memory.get("items"):
        return ""
    good = tools.find_similar(task.get("goal", ""), 5, "insights")
    if not good:
        return ""
    strategies = [h["text"] for h in good if h["metadata"].get("title") == "Strategy"]
    pitfalls = [h["text"] for h in good if h["metadata"].get("title") != "Strategy"]
    lines = []
    if strategies:
        lines.append("Strategies that worked before:")
        lines += ["- " + s for s in strategies]
    if pitfalls:
        lines.append("Pitfalls seen before:")
        lines += ["- " + p for p in pitfalls]
    return "\n".join(lines)
