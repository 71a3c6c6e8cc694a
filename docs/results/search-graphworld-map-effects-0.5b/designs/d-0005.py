"""reasoning_bank: a ReasoningBank-style bank of insights from successes *and* failures.

update() asks the model (``analyze``, JSON) for 1-3 transferable insights from the episode — what
worked when it succeeded, what went wrong and how to avoid it when it failed — and stores each as
an item {title, content, kind} in the vector store. recall() retrieves the items most relevant to
the new goal and lists them, success strategies first, then pitfalls.
"""

import json

INSTRUCTION = (
    "Extract 1 to 3 short, transferable insights from this episode. If it succeeded, say which "
    "strategy worked; if it failed, say what went wrong and how to avoid it. Reply as JSON: "
    '{"insights": [{"title": "...", "content": "..."}]}'
)
MAX_STEPS = 30


def _episode_text(episode):
    lines = [
        "Goal: " + episode["task"].get("goal", ""),
        "Outcome: " + ("success" if episode.get("success") else "failure"),
    ]
    for step in episode.get("steps", [])[:MAX_STEPS]:
        action = step.get("action") or {}
        line = "- " + str(action.get("tool")) + " " + json.dumps(action.get("args") or {}, sort_keys=True)
        if step.get("error"):
            line += " -> error: " + str(step["error"])[:80]
        lines.append(line)
    return "\n".join(lines)


def update(memory, episode, tools):
    kind = "strategy" if episode.get("success") else "pitfall"
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
        tools.store_obs(title + ": " + content, {"kind": kind}, "insights")
        stored += 1
    memory["items"] = memory.get("items", 0) + stored
    memory["episodes"] = memory.get("episodes", 0) + 1
    print("stored", stored, kind, "insights")


def recall(memory, task, tools):
    if not memory.get("items"):
        return ""
    good = tools.find_similar(task.get("goal", ""), 5, "insights")
    if not good:
        return ""
    strategies = [h["text"] for h in good if h["metadata"].get("kind") == "strategy"]
    pitfalls = [h["text"] for h in good if h["metadata"].get("kind") != "strategy"]
    lines = []
    if strategies:
        lines.append("Strategies that worked before:")
        lines += ["- " + s for s in strategies]
    if pitfalls:
        lines.append("Pitfalls seen before:")
        lines += ["- " + p for p in pitfalls]
    return "\n".join(lines)
