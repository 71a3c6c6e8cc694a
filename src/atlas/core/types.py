"""Core data types shared by every part of ATLAS (pydantic v2, JSON round-trip)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator


def new_id() -> str:
    return str(uuid.uuid4())


def utc_now() -> datetime:
    return datetime.now(UTC)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    def to_json(self) -> str:
        return self.model_dump_json()

    @classmethod
    def from_json(cls, text: str | bytes):
        return cls.model_validate_json(text)


class Task(_Model):
    """What an agent is asked to do. ``metadata`` may hold environment data the
    agent and memory must *not* see (seeds); designs get ``atlas.envs.views.task_view``."""

    id: str = Field(default_factory=new_id)
    description: str
    domain: str = "generic"
    initial_observation: str | None = None
    context: dict[str, Any] = Field(default_factory=dict)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("description")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("task description must not be empty")
        return v


class Step(_Model):
    """One agent step: the action taken and what came back."""

    action: str
    observation: str = ""
    thought: str | None = None
    error: str | None = None
    tool: str | None = None
    args: dict[str, Any] | None = None
    data: dict[str, Any] | None = None  # structured observation, when the environment gives one
    score: float | None = None  # the environment's score after the step (partial where it has one)
    ended: bool = False  # the environment ended the episode here, before its step limit (solved or not)
    new_actions: list[str] | None = None  # actions listed after the step that were not listed before it


class Trajectory(_Model):
    id: str = Field(default_factory=new_id)
    task: Task
    steps: list[Step] = Field(default_factory=list)
    success: bool = False
    score: float = 0.0
    metadata: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime = Field(default_factory=utc_now)


class Experience(_Model):
    id: str = Field(default_factory=new_id)
    task: Task
    trajectory_id: str | None = None
    content: str  # the text that was embedded
    steps: list[Step] = Field(default_factory=list)
    success: bool
    score: float = 0.0
    similarity: float | None = None  # filled in by search
    metadata: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime = Field(default_factory=utc_now)


class CodeConcept(_Model):
    id: str = Field(default_factory=new_id)
    name: str
    description: str
    code: str
    signature: str | None = None
    domain: str = "generic"
    usage_guidance: str | None = None
    is_primitive: bool = False
    usage_count: int = 0
    success_count: int = 0
    success_rate: float = 0.0
    source_trajectory_ids: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime = Field(default_factory=utc_now)


class Strategy(_Model):
    id: str = Field(default_factory=new_id)
    situation: str  # when to apply it (embedded)
    approach: str
    rationale: str = ""
    domain: str = "generic"
    success_rate: float = 0.5
    usage_count: int = 0
    alpha: float = 1.0  # Beta posterior parameters, used by BayesianUpdater
    beta: float = 1.0
    source_trajectory_ids: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime = Field(default_factory=utc_now)


GuidelineCategory = Literal["strategy", "recovery", "optimization"]
Evidence = Literal["success", "failure", "both"]


class Guideline(_Model):
    """A procedural tip learned from trajectories (strategy / recovery / optimization)."""

    id: str = Field(default_factory=new_id)
    category: GuidelineCategory
    content: str
    purpose: str = ""  # why it helps (rationale)
    implementation_steps: list[str] = Field(default_factory=list)
    trigger: str = ""
    negative_example: str | None = None
    application_context: str = ""
    task_category: str = "general"
    subtask: str | None = None  # generalized subtask description it was learned for
    priority: Literal["low", "medium", "high"] = "medium"
    support: int = 1
    evidence: Evidence = "success"
    source_trajectory_ids: list[str] = Field(default_factory=list)
    similarity: float | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime = Field(default_factory=utc_now)
    updated_at: datetime = Field(default_factory=utc_now)


class MemoryQueryResult(_Model):
    experiences: list[Experience] = Field(default_factory=list)
    concepts: list[CodeConcept] = Field(default_factory=list)
    strategies: list[Strategy] = Field(default_factory=list)
    guidelines: list[Guideline] = Field(default_factory=list)
    errors: dict[str, str] = Field(default_factory=dict)  # component -> why it returned nothing

    def is_empty(self) -> bool:
        return not (self.experiences or self.concepts or self.strategies or self.guidelines)


__all__ = [
    "CodeConcept",
    "Evidence",
    "Experience",
    "Guideline",
    "GuidelineCategory",
    "MemoryQueryResult",
    "Step",
    "Strategy",
    "Task",
    "Trajectory",
    "new_id",
    "utc_now",
]
