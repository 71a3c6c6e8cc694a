"""cheatsheet: a Dynamic-Cheatsheet-style curated cheatsheet kept in memory.

The memory holds one short cheatsheet of reusable, general advice. After each episode update()
asks the model (``summarize``) to revise it with what the episode taught — keeping what still
holds, adding new lessons, dropping what the episode contradicted — under a length budget.
recall() returns the cheatsheet (the same for every task: it is meant to be general).
"""

MAX_CHARS = 1500
MAX_STEPS = 25

INSTRUCTION = (
    "You maintain a cheatsheet of short, general, reusable tips for an agent. Revise the current "
    "cheatsheet using the new episode: keep tips that still hold, add any new lesson, remove tips the "
    "episode contradicts. Reply with the revised cheatsheet only, as a bulleted list of at most 10 "
    "lines."
)


def _episode_text(episode):
    outcome = "succeeded" if episode.get("success") else "failed"
    lines = [
        "Goal: "
        + episode["task"].get("goal", "")
        + " ("
        + outcome
        + " in "
        + str(episode.get("steps_taken", 0))
        + " steps)"
    ]
    for step in episode.get("steps", [])[:MAX_STEPS]:
        action = step.get("action") or {}
        line = "- " + str(action.get("tool")) + " " + str(action.get("args") or {})
        if step.get("error"):
            line += " -> error: " + str(step["error"])[:80]
        lines.append(line)
    return "\n".join(lines)


def update(memory, episode, tools):
    current = memory.get("cheatsheet", "")
    text = "Current cheatsheet:\n" + (current or "(empty)") + "\n\nNew episode:\n" + _episode_text(episode)
    try:
        revised = tools.summarize(text, INSTRUCTION).strip()
    except Exception as exc:
        print("summarize failed, cheatsheet unchanged:", exc)
        return
    if revised:
        memory["cheatsheet"] = revised[:MAX_CHARS]
        memory["revisions"] = memory.get("revisions", 0) + 1
    print("cheatsheet now", len(memory.get("cheatsheet", "")), "chars")


def recall(memory, task, tools):
    sheet = memory.get("cheatsheet", "")
    if not sheet:
        return ""
    return "Cheatsheet from earlier tasks:\n" + sheet
