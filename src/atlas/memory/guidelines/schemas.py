"""Pydantic models of every LLM reply. Bounds that depend on the trajectory (the number of steps,
how many tips) live in class variables; ``bounded(Model, **bounds)`` makes a subclass with them,
so ``LLMClient.astructured`` re-asks the model with the exact validation error."""

from __future__ import annotations

from typing import Any, ClassVar, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

M = TypeVar("M", bound=type[BaseModel])


def bounded(model: M, **bounds: Any) -> M:
    """A subclass of ``model`` whose class variables hold ``bounds`` (e.g. ``n_steps=12``)."""
    return type(model.__name__, (model,), dict(bounds))  # type: ignore[return-value]


class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore")
    n_steps: ClassVar[int] = 10**9

    @classmethod
    def _check_step(cls, i: int | None) -> int | None:
        if i is not None and not 0 <= i < cls.n_steps:
            raise ValueError(f"step index {i} out of range 0..{cls.n_steps - 1}")
        return i


class CauseRef(BaseModel):
    model_config = ConfigDict(extra="ignore")
    description: str = Field(min_length=1)
    step: int | None = None


class FailureAttribution(_Reply):
    immediate_cause: CauseRef
    proximate_cause: CauseRef
    root_cause: CauseRef
    contributing_factors: list[CauseRef] = Field(default_factory=list)

    @model_validator(mode="after")
    def _steps(self) -> FailureAttribution:
        for ref in [self.immediate_cause, self.proximate_cause, self.root_cause, *self.contributing_factors]:
            self._check_step(ref.step)
        return self


class RecoveryAttribution(_Reply):
    failure_enabler: CauseRef
    recognition: CauseRef
    corrective_action: CauseRef
    why_it_worked: str = Field(min_length=1)

    @model_validator(mode="after")
    def _steps(self) -> RecoveryAttribution:
        for ref in (self.failure_enabler, self.recognition, self.corrective_action):
            self._check_step(ref.step)
        return self


class InefficiencyAttribution(_Reply):
    suboptimal: str = Field(min_length=1)
    steps: list[int] = Field(default_factory=list)
    efficient_alternative: str = Field(min_length=1)
    estimated_steps_saved: int | None = None

    @field_validator("steps")
    @classmethod
    def _steps(cls, v: list[int]) -> list[int]:
        for i in v:
            cls._check_step(i)
        return v


class Segment(BaseModel):
    model_config = ConfigDict(extra="ignore")
    description: str = Field(min_length=3)
    start: int
    end: int


class Segmentation(_Reply):
    max_segments: ClassVar[int] = 8
    segments: list[Segment] = Field(min_length=1)

    @model_validator(mode="after")
    def _ranges(self) -> Segmentation:
        if len(self.segments) > self.max_segments:
            raise ValueError(f"at most {self.max_segments} segments, got {len(self.segments)}")
        prev_end = -1
        for j, seg in enumerate(self.segments):
            self._check_step(seg.start)
            self._check_step(seg.end)
            if seg.start > seg.end:
                raise ValueError(f"segments[{j}]: start {seg.start} > end {seg.end}")
            if seg.start <= prev_end:
                raise ValueError(
                    f"segments[{j}]: overlaps or is out of order (start {seg.start} <= {prev_end})"
                )
            prev_end = seg.end
        return self


# What the tips prompt's reply template holds in each field (``prompts._USER["tips"]``): a small model
# copies them ("When: When to apply it"), and a copied placeholder says nothing.
TIP_PLACEHOLDERS = {
    "content": "the advice",
    "purpose": "why it helps",
    "trigger": "when to apply it",
    "negative_example": "what not to do",
    "application_context": "where it applies",
    "task_category": "short kind of task",
}


def _placeholder(value: Any, placeholder: str) -> bool:
    return isinstance(value, str) and value.strip().strip(".\"'").lower() in (placeholder, "...")


class TipDraft(BaseModel):
    """One tip of a reply. A field that repeats the template's placeholder is blank (the tip's
    segment fills it later); a ``content`` that does is an error the model is asked to correct."""

    model_config = ConfigDict(extra="ignore")
    category: Literal["strategy", "recovery", "optimization"]
    content: str = Field(min_length=5)
    purpose: str = ""
    implementation_steps: list[str] = Field(default_factory=list)
    trigger: str = ""
    negative_example: str | None = None
    application_context: str = ""
    task_category: str = "general"
    priority: Literal["low", "medium", "high"] = "medium"

    @field_validator("priority", mode="before")
    @classmethod
    def _lower(cls, v: Any) -> Any:
        return v.lower() if isinstance(v, str) else v

    @field_validator("category", mode="before")
    @classmethod
    def _lower_cat(cls, v: Any) -> Any:
        return v.lower() if isinstance(v, str) else v

    @model_validator(mode="after")
    def _no_placeholders(self) -> TipDraft:
        if _placeholder(self.content, TIP_PLACEHOLDERS["content"]):
            raise ValueError(
                f"content repeats the template's placeholder {TIP_PLACEHOLDERS['content']!r}: "
                "write the advice itself"
            )
        for name, placeholder in TIP_PLACEHOLDERS.items():
            if name != "content" and _placeholder(getattr(self, name), placeholder):
                setattr(self, name, None if name == "negative_example" else "")
        self.implementation_steps = [s for s in self.implementation_steps if not _placeholder(s, "")]
        return self


class TipBatch(_Reply):
    min_tips: ClassVar[int] = 1
    max_tips: ClassVar[int] = 4
    categories: ClassVar[tuple[str, ...]] = ("strategy", "recovery", "optimization")
    tips: list[TipDraft]

    @model_validator(mode="after")
    def _count(self) -> TipBatch:
        if not self.min_tips <= len(self.tips) <= self.max_tips:
            raise ValueError(f"need {self.min_tips} to {self.max_tips} tips, got {len(self.tips)}")
        for j, t in enumerate(self.tips):
            if t.category not in self.categories:
                raise ValueError(f"tips[{j}].category must be one of {list(self.categories)}")
        return self


class Generalized(_Reply):
    n_items: ClassVar[int] = 0
    descriptions: list[str]

    @model_validator(mode="after")
    def _count(self) -> Generalized:
        if len(self.descriptions) != self.n_items:
            raise ValueError(f"need exactly {self.n_items} descriptions, got {len(self.descriptions)}")
        return self


class Decision(BaseModel):
    model_config = ConfigDict(extra="ignore")
    tip: int
    action: Literal["ADD", "UPDATE", "DELETE", "NONE"]
    target_id: str | None = None
    merged_content: str | None = None
    reason: str = ""

    @field_validator("action", mode="before")
    @classmethod
    def _upper(cls, v: Any) -> Any:
        return v.upper() if isinstance(v, str) else v


class DecisionBatch(_Reply):
    n_new: ClassVar[int] = 0
    existing_ids: ClassVar[frozenset[str]] = frozenset()
    decisions: list[Decision]

    @model_validator(mode="after")
    def _valid(self) -> DecisionBatch:
        seen = set()
        for j, d in enumerate(self.decisions):
            if not 0 <= d.tip < self.n_new:
                raise ValueError(f"decisions[{j}].tip {d.tip} out of range 0..{self.n_new - 1}")
            if d.action in ("UPDATE", "DELETE") and d.target_id not in self.existing_ids:
                raise ValueError(f"decisions[{j}].target_id {d.target_id!r} is not an existing tip id")
            seen.add(d.tip)
        missing = set(range(self.n_new)) - seen
        if missing:
            raise ValueError(f"no decision for new tip(s) {sorted(missing)}")
        return self


class Selection(_Reply):
    candidate_ids: ClassVar[frozenset[str]] = frozenset()
    selected: list[str]
    reason: str = ""

    @field_validator("selected")
    @classmethod
    def _known(cls, v: list[str]) -> list[str]:
        v = [i.strip().removeprefix("id=").strip() for i in v]  # small models echo the listing's "id="
        unknown = [i for i in v if i not in cls.candidate_ids]
        if unknown:
            raise ValueError(f"unknown guideline id(s) {unknown}: choose from the candidates")
        return v


__all__ = [
    "TIP_PLACEHOLDERS",
    "CauseRef",
    "Decision",
    "DecisionBatch",
    "FailureAttribution",
    "Generalized",
    "InefficiencyAttribution",
    "RecoveryAttribution",
    "Segment",
    "Segmentation",
    "Selection",
    "TipBatch",
    "TipDraft",
    "bounded",
]
