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


def improved_update(memory, episode, tools):
    goal = episode["task"].get("goal", "")
    outcome = "SUCCESS" if episode.get("success") else "FAILURE"

    if outcome == "SUCCESS":
        previous_episodes = tools.find_similar(goal, 1, "episodes")
        if previous_episodes:
            prev_goal = previous_episodes[0]["task"].get("goal", "")
            prev_outcome = previous_episodes[0]["success"]

            if prev_outcome == "SUCCESS":
                advice = f"To find the {goal}, search plan: {prev_goal}, {goal}"
            else:
                advice = f"To find the {goal}, search plan: {goal}"
        else:
            advice = f"To find the {goal}, search plan: {goal}"
    else:
        advice = "Try again."

    tools.store_obs(
        advice, {"success": bool(episode.get("success")), "score": episode.get("score", 0.0)}, "episodes"
    )
    memory["episodes"] = memory.get("episodes", 0) + 1
    memory["successes"] = memory.get("successes", 0) + (1 if episode.get("success") else 0)
