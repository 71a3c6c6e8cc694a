"""trajectory_retrieval: advice from the most similar past episode.

update() stores a compact text of each episode (goal, outcome, the actions taken) in the vector
store; recall() finds the most similar past episodes for the new goal and replays what they did,
marking which ones succeeded. Domain-agnostic: it only reads goal, steps, success and score.
"""

MAX_ACTIONS = 25


def _action_text(step):
    action = step.get("action") or {}
    tool = action.get("tool") or "?"
    args = action.get("args") or {}
    inner = ", ".join(str(k) + "=" + str(v) for k, v in sorted(args.items()))
    text = tool + "(" + inner + ")"
    if step.get("error"):
        text += " [failed: " + str(step["error"])[:60] + "]"
    return text


def update(memory, episode, tools):
    goal = episode["task"].get("goal", "")
    actions = [_action_text(s) for s in episode.get("steps", [])][:MAX_ACTIONS]
    outcome = "SUCCESS" if episode.get("success") else "FAILURE"
    text = goal + "\nOutcome: " + outcome + "\nActions: " + "; ".join(actions)
    tools.store_obs(
        text, {"success": bool(episode.get("success")), "score": episode.get("score", 0.0)}, "episodes"
    )
    memory["episodes"] = memory.get("episodes", 0) + 1
    memory["successes"] = memory.get("successes", 0) + (1 if episode.get("success") else 0)


def recall(memory, task, tools):
    if not memory.get("episodes"):
        return ""
    hits = tools.find_similar(task.get("goal", ""), 3, "episodes")
    if not hits:
        return ""
    lines = ["Similar past episodes (most similar first):"]
    for hit in hits:
        tag = "succeeded" if hit["metadata"].get("success") else "failed"
        lines.append("- (" + tag + ", similarity " + str(round(hit["score"], 2)) + ") " + hit["text"])
    best = [h for h in hits if h["metadata"].get("success")]
    if best:
        lines.append("Follow the successful episode's approach, adapting names to this task.")
    else:
        lines.append("Those attempts failed: avoid repeating their actions.")
    return "\n".join(lines)
