"""ScienceWorld's context schema: what a memory design receives, shown to the meta-agent. The
examples come from a real episode played by the explorer through the same ``task_view`` /
``episode_view`` the harness uses, so they cannot drift."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from atlas.envs.views import episode_view, task_view

if TYPE_CHECKING:
    from atlas.envs.scienceworld.env import ScienceWorldEnv

OBSERVATION_KEYS = {
    "text": "str — what the last command printed ('look around' describes the room, its objects and doors)",
    "inventory": "str — 'In your inventory, you see: ...'",
    "location": "str — the room the agent is in (the agent reads 'You are in the X.' when the text does not name it)",
    "score": "float in [0, 1] — ScienceWorld's score / 100; it rises as parts of the task are done",
    "actions": "list[str] — the commands offered this turn (at most 30)",
    "steps_taken": "int — commands used so far",
    "steps_left": "int — commands left before the episode ends",
}


def context_schema(env: ScienceWorldEnv) -> dict[str, Any]:
    from atlas.envs.policies import ExplorerPolicy

    probe = env.clone()
    try:
        task = probe.split_tasks("train", 1, seed=7)[0]
        first = probe.reset(task)
        traj = ExplorerPolicy(seed=0, max_turns=6).run(probe, task)
        episode = episode_view(probe, traj)
        example = task_view(probe, task, first)
    finally:
        probe.close()
    if len(episode["steps"]) > 4:
        episode["steps"] = [*episode["steps"][:3], episode["steps"][-1]]
    types = ", ".join(env.task_types)
    return {
        "environment": "scienceworld",
        "summary": (
            f"ScienceWorld ({types}): elementary-science procedures in a simulated house (kitchen, "
            "workshop, greenhouse, outside ...) whose rooms are joined by doors. The goal text names the "
            "task; 'focus on X' declares what the task is about (focusing on the wrong thing fails it). "
            "Tasks of a type share the procedure; objects, rooms and the answer box change per variation. "
            "Score = ScienceWorld's partial score / 100, rising with each sub-goal; success = completed."
        ),
        "agent_tools": [
            {"name": t.name, "description": t.description, "parameters": t.parameters} for t in env.tools()
        ],
        "observation": {"keys": OBSERVATION_KEYS},
        "task": {
            "keys": {
                "goal": "str — ScienceWorld's task description of this variation",
                "observation": "dict — the first observation (keys as in 'observation')",
                "observation_text": "str — the first observation as the agent reads it",
                "actions": "list[str] — the actions the agent is shown at the start, as its list writes them",
                "domain": "str — 'scienceworld'",
            },
            "example": example,
        },
        "episode": {
            "keys": {
                "task": "dict — the task view above",
                "steps": "list[dict] — {'action': {'tool', 'args', 'text'}, 'observation': dict, "
                "'observation_text': str, 'error': str | None, 'score': float | None, 'ended': bool, 'new_actions': list[str]}; observation['score'] after every step"
                "; score = the environment's score right after the step; ended = the environment ended the episode there, before its step limit (solved, or failed for good); new_actions = the actions listed after the step that no earlier list of the episode held",
                "success": "bool",
                "score": "float in [0, 1]",
                "steps_taken": "int",
            },
            "example": episode,
        },
        "hidden": "Designs never see gold paths, variation numbers, task ids or unvisited rooms.",
    }


__all__ = ["OBSERVATION_KEYS", "context_schema"]
