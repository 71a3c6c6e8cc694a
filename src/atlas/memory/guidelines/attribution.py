"""Stage 2, decision attribution: why a trajectory failed, recovered, or wasted steps.

One LLM call per non-clean trajectory; the reply is validated (step indices must be in range) and
re-asked by ``LLMClient.astructured`` when invalid. Clean successes need no attribution."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from pydantic import BaseModel

from atlas.core.types import Trajectory
from atlas.memory.guidelines.intelligence import TrajectoryIntelligence, describe
from atlas.memory.guidelines.prompts import ATTRIBUTION_INSTRUCTIONS, stage_messages
from atlas.memory.guidelines.schemas import (
    FailureAttribution,
    InefficiencyAttribution,
    RecoveryAttribution,
    bounded,
)

if TYPE_CHECKING:
    from atlas.infra.llm.client import LLMClient

_SCHEMAS: dict[str, type[BaseModel]] = {
    "failure": FailureAttribution,
    "recovery": RecoveryAttribution,
    "inefficient_success": InefficiencyAttribution,
}


@dataclass
class Attribution:
    """The analysis of one trajectory: ``kind`` is its outcome class, ``detail`` the validated reply."""

    kind: str
    detail: BaseModel | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "detail": self.detail.model_dump() if self.detail else None}

    def summary(self) -> str:
        """A short text form used in tip prompts and as a fallback negative example."""
        d = self.detail
        if isinstance(d, FailureAttribution):
            parts = [
                f"immediate cause (step {d.immediate_cause.step}): {d.immediate_cause.description}",
                f"proximate cause (step {d.proximate_cause.step}): {d.proximate_cause.description}",
                f"root cause (step {d.root_cause.step}): {d.root_cause.description}",
            ] + [f"contributing (step {c.step}): {c.description}" for c in d.contributing_factors]
        elif isinstance(d, RecoveryAttribution):
            parts = [
                f"what enabled the failure (step {d.failure_enabler.step}): {d.failure_enabler.description}",
                f"how it was recognised (step {d.recognition.step}): {d.recognition.description}",
                f"corrective action (step {d.corrective_action.step}): {d.corrective_action.description}",
                f"why it worked: {d.why_it_worked}",
            ]
        elif isinstance(d, InefficiencyAttribution):
            parts = [
                f"suboptimal (steps {d.steps}): {d.suboptimal}",
                f"efficient alternative: {d.efficient_alternative}",
            ]
        else:
            return ""
        return "\n".join(parts)

    def negative_example(self) -> str | None:
        """What not to do, according to the attribution (used when a tip lacks one)."""
        d = self.detail
        if isinstance(d, FailureAttribution):
            return d.root_cause.description
        if isinstance(d, RecoveryAttribution):
            return d.failure_enabler.description
        if isinstance(d, InefficiencyAttribution):
            return d.suboptimal
        return None


@runtime_checkable
class Attributor(Protocol):
    async def attribute(self, trajectory: Trajectory, intel: TrajectoryIntelligence) -> Attribution: ...


class LLMAttributor:
    """Asks the LLM for the causal analysis matching the outcome class."""

    def __init__(self, llm: LLMClient) -> None:
        self.llm = llm

    async def attribute(self, trajectory: Trajectory, intel: TrajectoryIntelligence) -> Attribution:
        schema = _SCHEMAS.get(intel.outcome)
        if schema is None or not trajectory.steps:
            return Attribution(kind=intel.outcome)
        msgs = stage_messages(
            "attribution",
            trajectory=describe(trajectory, intel),
            instruction=ATTRIBUTION_INSTRUCTIONS[intel.outcome],
            last=intel.n_steps - 1,
        )
        detail = await self.llm.astructured(msgs, bounded(schema, n_steps=intel.n_steps))
        return Attribution(kind=intel.outcome, detail=detail)


class NoAttributor:
    """Skips attribution (ablation / no-LLM runs)."""

    async def attribute(self, trajectory: Trajectory, intel: TrajectoryIntelligence) -> Attribution:
        return Attribution(kind=intel.outcome)


__all__ = ["Attribution", "Attributor", "LLMAttributor", "NoAttributor"]
