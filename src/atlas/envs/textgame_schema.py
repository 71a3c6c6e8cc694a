"""Context schema shared by the text-game environments (ALFWorld, TextWorld): what a memory
design receives, with examples produced by really playing a task through the same views."""

from __future__ import annotations

from typing import Any

from atlas.envs.views import episode_view, task_view
from atlas.protocols.env import Environment

OBSERVATION_KEYS = {
    "text": "str — what the game printed after the last command (the first one includes the goal)",
    "admissible_commands": "list[str] — the commands accepted right now (empty once the episode is over)",
    "steps_taken": "int — commands used so far",
    "steps_left": "int — commands remaining before the episode fails",
}


def text_game_schema(
    env: Environment,
    *,
    summary: str,
    goal_hint: str,
    seed: int = 3,
    max_example_steps: int = 4,
    extra_keys: dict[str, str] | None = None,
) -> dict[str, Any]:
    from atlas.envs.policies import ExplorerPolicy

    probe = env.clone()
    task = probe.generate_tasks(1, seed=seed)[0]
    first = probe.reset(task)
    tview = task_view(probe, task, first)  # a JSON copy: trimming below does not touch the env
    traj = ExplorerPolicy(seed=0).run(probe, task)
    episode = episode_view(probe, traj)
    if len(episode["steps"]) > max_example_steps:
        episode["steps"] = [*episode["steps"][: max_example_steps - 1], episode["steps"][-1]]
    for step in [
        *episode["steps"],
        {"observation": episode["task"]["observation"]},
        {"observation": tview["observation"]},
    ]:
        cmds = step["observation"].get("admissible_commands")
        if cmds and len(cmds) > 8:  # keep the example readable
            step["observation"]["admissible_commands"] = [*cmds[:8], f"... ({len(cmds) - 8} more)"]
    close = getattr(probe, "close", None)
    if close:
        close()
    return {
        "environment": env.name,
        "summary": summary,
        "agent_tools": [
            {"name": t.name, "description": t.description, "parameters": t.parameters}
            for t in env.clone().tools()
        ],
        "observation": {"keys": {**OBSERVATION_KEYS, **(extra_keys or {})}},
        "task": {
            "keys": {
                "goal": f"str — {goal_hint}",
                "observation": "dict — the first observation",
                "observation_text": "str — the first observation as the agent reads it (no command list)",
                "actions": "list[str] — the actions the agent is shown at the start, as its list writes them",
                "domain": f"str — '{env.name}'",
            },
            "example": tview,
        },
        "episode": {
            "keys": {
                "task": "dict — the task view above",
                "steps": "list[dict] — {'action': {'tool': 'act', 'args': {'command': str}, 'text': str}, "
                "'observation': dict, 'observation_text': str, 'error': str | None, 'score': float | None, 'ended': bool, 'new_actions': list[str]}; tool '' = the agent's reply was not a valid action; "
                "text = the command as the agent's action list writes it: advice naming actions this way is acted on"
                "; score = the environment's score right after the step; ended = the environment ended the episode there, before its step limit (solved, or failed for good); new_actions = the actions listed after the step that no earlier list of the episode held",
                "success": "bool",
                "score": "float in [0, 1]",
                "steps_taken": "int",
            },
            "example": episode,
        },
        "hidden": "Designs never see seeds, game files, walkthroughs or anything the player has not read.",
    }


__all__ = ["OBSERVATION_KEYS", "text_game_schema"]
