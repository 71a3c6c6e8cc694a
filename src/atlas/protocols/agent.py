"""The task-player seam: what the harness needs from the agent that plays an episode."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from atlas.core.types import Task, Trajectory
from atlas.protocols.env import Environment


@runtime_checkable
class TaskPlayer(Protocol):
    """Plays one task on an environment instance, with a memory's advice text; ``atlas.agent.TaskAgent``
    is one (an LLM choosing actions), a scripted policy in a test another."""

    async def run(self, env: Environment, task: Task, advice: str = "") -> Trajectory: ...
