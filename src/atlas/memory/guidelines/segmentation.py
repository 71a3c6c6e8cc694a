"""Stage 4, granularity: split a trajectory into subtasks (default) or keep it whole (ablation).

Subtask-level tips transfer better ("authenticate with a shopping service" applies to any task
that needs it); task-level extraction is kept to measure that."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from atlas.core.types import Trajectory
from atlas.memory.guidelines.intelligence import TrajectoryIntelligence, describe
from atlas.memory.guidelines.prompts import stage_messages
from atlas.memory.guidelines.schemas import Segmentation, bounded

if TYPE_CHECKING:
    from atlas.infra.llm.client import LLMClient


@dataclass
class SegmentSpec:
    """One subtask: a generalized description and the inclusive step range it covers."""

    description: str
    start: int
    end: int


@runtime_checkable
class Segmenter(Protocol):
    async def segment(self, trajectory: Trajectory, intel: TrajectoryIntelligence) -> list[SegmentSpec]: ...


class TaskLevelSegmenter:
    """The whole trajectory is one segment described by its task (no LLM call)."""

    async def segment(self, trajectory: Trajectory, intel: TrajectoryIntelligence) -> list[SegmentSpec]:
        return [SegmentSpec(trajectory.task.description, 0, max(0, len(trajectory.steps) - 1))]


class LLMSegmenter:
    """One LLM call; ranges must be in bounds, ordered and non-overlapping (else re-asked).
    A trajectory with fewer than ``min_steps`` steps is one segment without a call."""

    def __init__(self, llm: LLMClient, max_segments: int = 8, min_steps: int = 2) -> None:
        self.llm = llm
        self.max_segments = max_segments
        self.min_steps = min_steps

    async def segment(self, trajectory: Trajectory, intel: TrajectoryIntelligence) -> list[SegmentSpec]:
        n = len(trajectory.steps)
        if n < self.min_steps:
            return await TaskLevelSegmenter().segment(trajectory, intel)
        schema = bounded(Segmentation, n_steps=n, max_segments=self.max_segments)
        msgs = stage_messages(
            "segmentation", trajectory=describe(trajectory, intel), max_segments=self.max_segments, last=n - 1
        )
        reply = await self.llm.astructured(msgs, schema)
        return [SegmentSpec(s.description.strip(), s.start, s.end) for s in reply.segments]


__all__ = ["LLMSegmenter", "SegmentSpec", "Segmenter", "TaskLevelSegmenter"]
