"""The extraction pipeline of one trajectory (stages 1-4, before consolidation): each stage runs in
order and any failure in it becomes ``StageFailed``, so the bank records the trajectory as not
processed instead of losing it; and the record the store keeps of a trajectory.

No stage is skipped when its reply stays unusable: a model that cannot attribute or segment writes
tips that mislead. Measured with tips stored without the failed stage: with the 0.5B on TextWorld
fetch the bank went from no advice to 0 of 24 solved, −0.446 [−0.628, −0.268] vs no memory
(docs/results/history/eval-guideline-bank-skip-stages-fetch.tar.xz)."""

from __future__ import annotations

import logging
from typing import Any

from atlas.core.types import Guideline, Trajectory, utc_now
from atlas.errors import LLMError
from atlas.memory.guidelines.attribution import Attribution, Attributor
from atlas.memory.guidelines.generalize import Generalizer, RuleGeneralizer
from atlas.memory.guidelines.intelligence import TrajectoryAnalyzer, TrajectoryIntelligence
from atlas.memory.guidelines.segmentation import Segmenter, SegmentSpec
from atlas.memory.guidelines.tips import TipGenerator

log = logging.getLogger(__name__)


class StageFailed(Exception):
    def __init__(self, stage: str, exc: BaseException) -> None:
        super().__init__(f"{stage} stage failed: {exc}")
        self.stage = stage


async def stage(name: str, coro: Any) -> Any:
    """Run one pipeline stage; any failure in it (a bad model reply, a timeout, a backend that
    raised something else) becomes ``StageFailed`` so the trajectory is recorded, never lost."""
    try:
        return await coro
    except LLMError as exc:
        raise StageFailed(name, exc) from exc
    except Exception as exc:  # not an LLMError: keep the trajectory, say what it was, log the trace
        log.error("%s stage raised %s", name, type(exc).__name__, exc_info=exc)
        raise StageFailed(name, RuntimeError(f"{type(exc).__name__}: {exc}")) from exc


async def extract(
    traj: Trajectory,
    *,
    analyzer: TrajectoryAnalyzer,
    attributor: Attributor,
    segmenter: Segmenter,
    generalizer: Generalizer,
    tip_generator: TipGenerator,
    rules: RuleGeneralizer,
) -> tuple[TrajectoryIntelligence, Attribution, list[tuple[str, list[Guideline]]]]:
    """Stages 1-4 of one trajectory, in order: intelligence → attribution → segmentation →
    generalization of the subtask descriptions → tips per segment, their text generalized. Returns
    the intelligence, the attribution and ``(subtask, tips)`` per segment."""
    intel = await stage("intelligence", analyzer.analyze(traj))
    attribution = await stage("attribution", attributor.attribute(traj, intel))
    segments: list[SegmentSpec] = await stage("segmentation", segmenter.segment(traj, intel))
    descs = await stage("generalization", generalizer.generalize([s.description for s in segments]))
    task_text = rules.generalize_description(traj.task.description)
    groups = []
    for seg, desc in zip(segments, descs, strict=True):
        tips = await stage("tips", tip_generator.generate(traj, intel, attribution, seg))
        g = rules.generalize_text
        clean = [
            t.model_copy(
                update={
                    "content": g(t.content),
                    "trigger": g(t.trigger),
                    "purpose": g(t.purpose),
                    "application_context": g(t.application_context),
                    "implementation_steps": [g(s) for s in t.implementation_steps],
                    "negative_example": g(t.negative_example) if t.negative_example else None,
                    "subtask": desc,
                    "metadata": {**t.metadata, "task": task_text},
                }
            )
            for t in tips
        ]
        groups.append((desc, clean))
    return intel, attribution, groups


def trajectory_record(
    traj: Trajectory,
    status: str,
    attempts: int,
    intel: TrajectoryIntelligence | None,
    attribution: Attribution | None,
    guideline_ids: list[str],
    reason: str | None,
) -> dict[str, Any]:
    """What the store keeps of a trajectory: its status, the stages' results and the trajectory."""
    return {
        "id": traj.id,
        "status": status,
        "reason": reason,
        "attempts": attempts,
        "outcome": intel.outcome if intel else None,
        "success": traj.success,
        "task": traj.task.description,
        "guideline_ids": guideline_ids,
        "intelligence": intel.to_dict() if intel else None,
        "attribution": attribution.to_dict() if attribution else None,
        "trajectory": traj.model_dump(mode="json"),
        "saved_at": utc_now().isoformat(),
    }


__all__ = ["StageFailed", "extract", "stage", "trajectory_record"]
