"""GraphWorld's context schema: what a memory design receives, shown to the meta-agent.

The examples are produced by actually playing a task with the ExplorerPolicy and passing the
result through the same ``task_view`` / ``episode_view`` the harness uses, so they cannot drift.
"""

from __future__ import annotations

from typing import Any

from atlas.envs.views import episode_view, task_view
from atlas.protocols.env import Environment

OBSERVATION_KEYS = {
    "location": "str — the room the agent is in, e.g. 'room_C'",
    "adjacent_rooms": "list[str] — rooms reachable in one move from here (sorted)",
    "objects_here": "list[str] — objects lying in this room",
    "inventory": "list[str] — objects the agent carries",
    "message": "str — result of the last action (errors explain what was wrong)",
    "steps_taken": "int — steps used so far (look is free)",
    "steps_left": "int — steps remaining before the episode fails",
}


def context_schema(env: Environment) -> dict[str, Any]:
    from atlas.envs.policies import ExplorerPolicy

    probe = env.clone()
    task = probe.generate_tasks(1, seed=7)[0]
    first = probe.clone().reset(task)
    traj = ExplorerPolicy(seed=0).run(probe, task)
    episode = episode_view(probe, traj)
    if len(episode["steps"]) > 4:  # keep the example short: first 3 steps and the last one
        episode["steps"] = [*episode["steps"][:3], episode["steps"][-1]]
    return {
        "environment": "graphworld",
        "summary": (
            "Rooms room_A, room_B, ... joined by undirected doors; the agent must carry one object to a "
            "goal room within the step limit. Tasks of a family share the room topology; object "
            "placements, goal and start change per task. Score: max(0.5, 1 - steps/40) on success, 0 on "
            "failure."
        ),
        "agent_tools": [
            {"name": t.name, "description": t.description, "parameters": t.parameters}
            for t in env.clone().tools()
        ],
        "observation": {"keys": OBSERVATION_KEYS},
        "task": {
            "keys": {
                "goal": "str — always 'Bring the OBJECT to ROOM.'",
                "observation": "dict — the first observation (keys as in 'observation')",
                "observation_text": "str — the first observation as the agent reads it (no command list)",
                "actions": "list[str] — the actions the agent is shown at the start, as its list writes them",
                "domain": "str — 'graphworld'",
            },
            "example": task_view(probe, task, first),
        },
        "episode": {
            "keys": {
                "task": "dict — the task view above",
                "steps": "list[dict] — {'action': {'tool': str, 'args': dict, 'text': str}, 'observation': dict, "
                "'observation_text': str, 'error': str | None, 'score': float | None, 'ended': bool, 'new_actions': list[str]}; tool '' = the agent's reply was not a valid action; text = the action as "
                "the agent's action list writes it (e.g. 'move_to room_B'): advice naming actions this way is "
                "acted on"
                "; score = the environment's score right after the step; ended = the environment ended the episode there, before its step limit (solved, or failed for good); new_actions = the actions listed after the step that no earlier list of the episode held",
                "success": "bool",
                "score": "float in [0, 1]",
                "steps_taken": "int — steps that counted against the limit",
            },
            "example": episode,
        },
        "hidden": "Designs never see object locations the agent did not observe, seeds or task ids.",
    }


__all__ = ["OBSERVATION_KEYS", "context_schema"]
