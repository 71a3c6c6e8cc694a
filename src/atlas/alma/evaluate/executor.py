"""The executor seam: where a design's episodes run.

An ``Executor`` evaluates one design on a search's tasks and returns the ``Evaluation`` the search
records; the search never knows where the episodes ran. ``LocalExecutor`` (the default) plays them in
this process with the ``Harness`` (collection in order, deployment concurrently in threads);
``atlas.alma.cluster.RayExecutor`` plays them as Ray tasks on a cluster. Only the driver writes the
run folder, whichever executor ran the episodes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from atlas.alma.evaluate.harness import EpisodeRecord, Evaluation, Harness

if TYPE_CHECKING:
    from atlas.alma.design import Design
    from atlas.alma.state.staging import Verdict
    from atlas.core.types import Task

EXECUTORS = ("local", "ray")


class Executor(Protocol):
    """Evaluates designs: collection (in order, memory grows) then deployment (memory frozen)."""

    name: str
    on_episode: Callable[[EpisodeRecord], None] | None  # called on the driver after every episode

    async def evaluate(
        self,
        design: Design,
        collection_tasks: list[Task],
        deployment_tasks: list[Task],
        *,
        stage_tasks: int = 0,
        go_on: Callable[[list[EpisodeRecord]], Verdict] | None = None,
    ) -> Evaluation: ...

    def describe(self) -> dict[str, Any]:
        """What the run folder records about the executor: its name, where it ran, its retries."""
        ...

    def close(self) -> None: ...


class LocalExecutor:
    """The default: the harness plays every episode in this process (``--concurrency`` threads)."""

    name = "local"

    def __init__(self, harness: Harness) -> None:
        self.harness = harness

    @property
    def on_episode(self) -> Callable[[EpisodeRecord], None] | None:
        return self.harness.on_episode

    @on_episode.setter
    def on_episode(self, fn: Callable[[EpisodeRecord], None] | None) -> None:
        self.harness.on_episode = fn

    async def evaluate(
        self,
        design: Design,
        collection_tasks: list[Task],
        deployment_tasks: list[Task],
        *,
        stage_tasks: int = 0,
        go_on: Callable[[list[EpisodeRecord]], Verdict] | None = None,
    ) -> Evaluation:
        return await self.harness.evaluate(
            design, collection_tasks, deployment_tasks, stage_tasks=stage_tasks, go_on=go_on
        )

    def describe(self) -> dict[str, Any]:
        return {"executor": "local", "concurrency": self.harness.concurrency, "retries": 0}

    def close(self) -> None:
        return None


__all__ = ["EXECUTORS", "Executor", "LocalExecutor"]
