"""Typed configuration of the guideline pipeline (validated at construction).

Why the retrieval threshold is a calibrated floor and not a constant: the ALTK-Evolve ablation
found that a loose threshold pushed task completion *below* the no-memory baseline (a weakly related
tip misleads more than it helps), but a fixed 0.6 on MiniLM also dropped tips of sibling tasks
("bring the lamp to room_D" scored 0.55 against "bring the key to room_C"). ``threshold=None`` uses
the floor of :mod:`atlas.memory.relevance`, chosen per embedder on the transfer benchmark.
"""

from __future__ import annotations

import hashlib
import os
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from atlas.errors import InvalidInputError

RetrievalMode = Literal["cosine", "llm"]
Granularity = Literal["subtask", "task"]

_NAMESPACE_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def check_namespace(namespace: str) -> str:
    """Return ``namespace`` if it is a valid name (letters, digits, ``_``, ``-``; 1–64 chars)."""
    if not isinstance(namespace, str) or not _NAMESPACE_RE.fullmatch(namespace):
        shown = repr(namespace) if len(repr(namespace)) <= 80 else repr(namespace)[:77] + "..."
        raise InvalidInputError(f"namespace: {shown} is not valid (use 1-64 letters, digits, '_' or '-')")
    return namespace


def project_namespace(project_dir: str) -> str:
    """The namespace the coding-agent hooks (``integrations/claude-code/hooks/atlas_hook.py``) use
    for a project: the folder's name and a hash of its full path, so two checkouts named alike
    never share memory."""
    full = os.path.realpath(project_dir)
    name = re.sub(r"[^A-Za-z0-9_-]+", "-", os.path.basename(full)).strip("-")[:40] or "project"
    return f"{name}-{hashlib.sha1(full.encode()).hexdigest()[:8]}"


class OutcomeRules(BaseModel):
    """Rules that turn a trajectory's errors, repeats and length into an outcome class."""

    model_config = ConfigDict(extra="forbid")

    min_errors_for_recovery: int = Field(
        1, ge=1, description="errors in a successful run that make it a recovery"
    )
    repeat_threshold: int = Field(3, ge=2, description="same action this many times → inefficient")
    repeated_failure_threshold: int = Field(
        2, ge=2, description="same failing action this many times → pattern"
    )
    max_clean_steps: int = Field(25, ge=1, description="a success longer than this is inefficient")
    inefficiency_ratio: float = Field(
        1.5, gt=1.0, description="steps > ratio × metadata['optimal_steps'] → inefficient"
    )


class GuidelineConfig(BaseModel):
    """Everything the pipeline lets you choose. Defaults follow the seed (subtask granularity,
    clustering at 0.85) and the conservative retrieval described in the module docstring."""

    model_config = ConfigDict(extra="forbid")

    granularity: Granularity = "subtask"
    min_tips_per_segment: int = Field(2, ge=1)
    max_tips_per_segment: int = Field(4, ge=1)
    max_segments: int = Field(8, ge=1)
    outcome: OutcomeRules = Field(default_factory=OutcomeRules)
    llm_thought_classifier: bool = False
    llm_generalizer: bool = True  # only used when the bank has an LLM; rules otherwise
    cluster_threshold: float = Field(0.85, ge=0.0, le=1.0, description="cosine of subtask descriptions")
    duplicate_threshold: float = Field(0.85, ge=0.0, le=1.0, description="cosine of tip contents → UPDATE")
    max_tips_per_cluster: int = Field(6, ge=1)
    llm_consolidation: bool = True  # LLM decides ADD/UPDATE/DELETE/NONE when the bank has an LLM
    retrieval_mode: RetrievalMode = "cosine"
    threshold: float | None = Field(
        None, ge=-1.0, le=1.0, description="minimum cosine (None: the embedder's calibrated floor)"
    )
    default_k: int = Field(5, ge=1)
    llm_candidates: int = Field(15, ge=1, description="cosine pool shown to the LLM selector")
    llm_candidate_threshold: float | None = Field(
        None, ge=-1.0, le=1.0, description="floor of the LLM's candidate pool (None: same as threshold)"
    )
    llm_sure: float | None = Field(
        None,
        ge=-1.0,
        le=2.0,
        description="relevance at or above which the LLM selector keeps a tip without asking "
        "(None: the embedder's calibrated value; above 1: ask about every candidate)",
    )
    llm_fallback_to_cosine: bool = True  # a garbage selector reply falls back to cosine (flagged)
    failure_weight: float = Field(0.9, gt=0.0, le=1.0, description="rank multiplier of failure-only tips")
    failure_decay_days: float = Field(30.0, gt=0.0, description="age after which failure-only tips demote")
    generalize_queries: bool = True  # strip entities from the query too, so ids do not dilute it

    @model_validator(mode="after")
    def _check(self) -> GuidelineConfig:
        if self.min_tips_per_segment > self.max_tips_per_segment:
            raise ValueError("min_tips_per_segment must be <= max_tips_per_segment")
        return self


__all__ = ["Granularity", "GuidelineConfig", "OutcomeRules", "RetrievalMode", "check_namespace"]
