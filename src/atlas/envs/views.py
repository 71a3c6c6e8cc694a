"""The information boundary: what a memory design may see of a task and of an episode.

A design receives ``task_view`` before a task and ``episode_view`` after it. Both are built
only from what the agent itself was shown (goal text, observations, its own actions and their
errors, the outcome) — never ``Task.metadata`` (seeds, parameters), task ids, or hidden world
state such as where unseen objects lie. Both return plain JSON-safe dicts.
"""

from __future__ import annotations

import json
from typing import Any

from atlas.core.types import Step, Task, Trajectory
from atlas.envs.base import action_label, listed_actions, without_commands
from atlas.protocols.env import Environment


def _public(observation: dict[str, Any] | None) -> dict[str, Any]:
    """A JSON-safe deep copy of an observation without private (``_``-prefixed) keys."""
    if not observation:
        return {}
    clean = {k: v for k, v in observation.items() if not str(k).startswith("_")}
    return json.loads(json.dumps(clean, default=str))


def task_view(
    env: Environment,
    task: Task,
    first_observation: dict[str, Any],
    text: str | None = None,
    actions: list[str] | None = None,
) -> dict[str, Any]:
    """``{"goal": str, "observation": dict, "observation_text": str, "actions": list[str], "domain": str}``:
    only what the agent sees at the start; ``observation_text`` is the observation as the agent reads it
    (without the command list), ``text`` when given, else the environment's summary of
    ``first_observation``; ``actions`` the actions it is shown, as its list writes them (``actions`` when
    given, else read from ``env`` now, right after its reset; [] where the environment lists none)."""
    seen = text if text is not None else env.summarize_observation(first_observation)
    listed = actions if actions is not None else listed_actions(env, first_observation)
    return {
        "goal": env.format_goal(task),
        "observation": _public(first_observation),
        "observation_text": without_commands(seen),
        "actions": [str(a) for a in listed],
        "domain": task.domain,
    }


def _first_observation(env: Environment, trajectory: Trajectory) -> dict[str, Any]:
    first = trajectory.metadata.get("initial_observation")
    if isinstance(first, dict):
        return first
    # Not recorded (a trajectory built elsewhere): replay the deterministic reset on a fresh clone.
    return env.clone().reset(trajectory.task)


def step_action(step: Step) -> dict[str, Any]:
    """``{"tool", "args", "text"}`` of a step; ``text`` is the action as the agent's action list writes
    it (``move_to room_B``), so a design can put it in advice the agent acts on ("" for a reply that
    was not an action)."""
    args = json.loads(json.dumps(step.args or {}, default=str))
    text = action_label(step.tool, args) if step.tool else ""
    return {"tool": step.tool or "", "args": args, "text": text}


def episode_view(env: Environment, trajectory: Trajectory) -> dict[str, Any]:
    """The design's ``episode``: task view, the steps (action, observation, observation_text, error,
    score), outcome. A step's ``score`` is the environment's score right after it (in [0, 1]; partial
    where the environment scores progress, else 0 until the task is solved; None where the action never
    reached the environment or the trajectory was recorded without it): the change from the step before
    is what the action did for the task. ``ended``: the environment ended the episode with this step,
    before its step limit (the task solved, or failed for good — a wrong answer, a fatal move).
    ``new_actions``: the actions listed after the step that no earlier list of the episode held, as its
    list writes them ('chop tomato 2' once a tomato is held; capped, [] where the environment lists none).

    Steps that never reached the environment (unparseable replies) keep ``tool == ""`` and their
    error, so a design can learn from them; their observation is ``{}``.
    """
    steps = []
    for s in trajectory.steps:
        steps.append(
            {
                "action": step_action(s),
                "observation": _public(s.data)
                if s.data is not None
                else ({"text": s.observation} if s.observation and s.tool else {}),
                "observation_text": without_commands(s.observation or "") if s.tool else "",
                "error": s.error,
                "score": s.score,
                "ended": s.ended,
                "new_actions": list(s.new_actions or []),
            }
        )
    taken = trajectory.metadata.get("steps_taken")
    listed = trajectory.metadata.get("initial_actions")  # not recorded: not read again from a replayed reset
    return {
        "task": task_view(
            env,
            trajectory.task,
            _first_observation(env, trajectory),
            trajectory.metadata.get("initial_text"),
            listed if isinstance(listed, list) else [],
        ),
        "steps": steps,
        "success": bool(trajectory.success),
        "score": float(trajectory.score),
        "steps_taken": int(taken) if taken is not None else len(steps),
    }


__all__ = ["episode_view", "step_action", "task_view"]
