"""Stage 3, tip generation: strategy tips from clean successes, recovery tips (with a negative
example) from recoveries and failures, optimization tips from inefficient successes.

One LLM call per segment; every field of ``Guideline`` is filled from the reply, the attribution
and the trajectory (provenance: ``source_trajectory_ids``, ``evidence``, ``metadata``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

from pydantic import ValidationError

from atlas.core.types import Evidence, Guideline, Trajectory
from atlas.errors import LLMResponseError
from atlas.infra.llm.jsonreply import parse_json_reply
from atlas.memory.guidelines.attribution import Attribution
from atlas.memory.guidelines.intelligence import TrajectoryIntelligence, describe
from atlas.memory.guidelines.prompts import render_steps, stage_messages
from atlas.memory.guidelines.schemas import TipBatch, bounded
from atlas.memory.guidelines.segmentation import SegmentSpec

if TYPE_CHECKING:
    from atlas.infra.llm.client import LLMClient

# Which tip categories each outcome class may produce (the first is the main one).
CATEGORIES: dict[str, tuple[str, ...]] = {
    "clean_success": ("strategy",),
    "recovery": ("recovery", "strategy"),
    "inefficient_success": ("optimization", "strategy"),
    "failure": ("recovery",),
}


def evidence_of(trajectory: Trajectory) -> Evidence:
    return "success" if trajectory.success else "failure"


@runtime_checkable
class TipGenerator(Protocol):
    async def generate(
        self,
        trajectory: Trajectory,
        intel: TrajectoryIntelligence,
        attribution: Attribution,
        segment: SegmentSpec,
    ) -> list[Guideline]: ...


class LLMTipGenerator:
    """Asks for ``min_tips``..``max_tips`` tips (the seed's 2–4) about one segment, within the allowed
    categories; a reply outside the bounds fails validation and is re-asked. A last reply whose only
    fault is too few tips is kept (a segment may hold one lesson)."""

    def __init__(self, llm: LLMClient, min_tips: int = 2, max_tips: int = 4) -> None:
        self.llm = llm
        self.min_tips = min_tips
        self.max_tips = max_tips

    async def generate(
        self,
        trajectory: Trajectory,
        intel: TrajectoryIntelligence,
        attribution: Attribution,
        segment: SegmentSpec,
    ) -> list[Guideline]:
        cats = CATEGORIES[intel.outcome]
        whole = segment.start == 0 and segment.end >= intel.n_steps - 1
        focus = (
            f"the whole task ({segment.description})"
            if whole
            else f"subtask '{segment.description}', steps {segment.start}-{segment.end}:\n"
            + render_steps(trajectory, intel.thoughts, start=segment.start, end=segment.end)
        )
        att = attribution.summary()
        msgs = stage_messages(
            "tips",
            trajectory=describe(trajectory, intel),
            attribution=f"Attribution:\n{att}\n\n" if att else "",
            focus=focus,
            min_tips=self.min_tips,
            max_tips=self.max_tips,
            categories=", ".join(cats),
        )
        schema = bounded(TipBatch, min_tips=self.min_tips, max_tips=self.max_tips, categories=cats)
        reply: TipBatch | None
        try:
            reply = await self.llm.astructured(msgs, schema)
        except LLMResponseError as exc:
            reply = self._fewer_tips(exc.raw, cats)
            if reply is None:
                raise
        fallback_negative = attribution.negative_example()
        out = []
        for d in reply.tips:
            negative = d.negative_example or None
            if negative is None and d.category in ("recovery", "optimization"):
                negative = fallback_negative
            out.append(
                Guideline(
                    category=d.category,
                    content=d.content.strip(),
                    purpose=d.purpose.strip()
                    or f"learned from a {intel.outcome.replace('_', ' ')} trajectory",
                    implementation_steps=[s.strip() for s in d.implementation_steps if s.strip()],
                    trigger=d.trigger.strip() or segment.description,
                    negative_example=negative,
                    application_context=d.application_context.strip() or segment.description,
                    task_category=(d.task_category or "general").strip() or "general",
                    subtask=segment.description,
                    priority=d.priority,
                    evidence=evidence_of(trajectory),
                    source_trajectory_ids=[trajectory.id],
                    metadata={
                        "outcome": intel.outcome,
                        "domain": trajectory.task.domain,
                        "segment": [segment.start, segment.end],
                        "source_outcomes": {trajectory.id: evidence_of(trajectory)},
                    },
                )
            )
        return out

    def _fewer_tips(self, raw: str | None, cats: tuple[str, ...]) -> TipBatch | None:
        """The model's last reply when its only fault is holding fewer tips than asked (a segment
        with one lesson): kept rather than losing the trajectory. None when it is wrong otherwise."""
        if self.min_tips <= 1 or not raw:
            return None
        relaxed = bounded(TipBatch, min_tips=1, max_tips=self.max_tips, categories=cats)
        try:
            return relaxed.model_validate(parse_json_reply(raw))
        except (LLMResponseError, ValidationError):
            return None


__all__ = ["CATEGORIES", "LLMTipGenerator", "TipGenerator", "evidence_of"]
