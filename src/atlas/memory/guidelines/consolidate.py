"""Stage 5b, consolidation: cluster generalized subtask descriptions by cosine similarity and
decide, for each new tip, ADD / UPDATE / DELETE / NONE against the tips already in its cluster.

``RuleDecider`` (no LLM): a new tip whose content is a near-duplicate (cosine ≥
``duplicate_threshold``) of a same-category tip UPDATEs it (support +1, provenance merged; a tip from
a successful trajectory replaces the text of one learned only from failures); otherwise ADD; a
cluster over ``max_tips_per_cluster`` DELETEs its weakest tip (or the new one is NONE when it is the
weakest). ``LLMDecider`` asks the model for the same four decisions. Every decision is logged."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

import numpy as np

from atlas.core.types import Guideline, new_id, utc_now
from atlas.memory.guidelines.prompts import stage_messages
from atlas.memory.guidelines.schemas import DecisionBatch, bounded

if TYPE_CHECKING:
    from atlas.infra.llm.client import LLMClient

Action = Literal["ADD", "UPDATE", "DELETE", "NONE"]
_PRIORITY = {"low": 0, "medium": 1, "high": 2}


def cluster(vectors: np.ndarray, threshold: float) -> list[list[int]]:
    """Greedy leader clustering on unit vectors: each row joins the first cluster whose leader it
    matches with cosine ≥ ``threshold``, else starts its own. Order = priority order of rows."""
    clusters: list[list[int]] = []
    leaders: list[int] = []
    for i in range(len(vectors)):
        if leaders:
            sims = vectors[leaders] @ vectors[i]
            j = int(np.argmax(sims))
            if sims[j] >= threshold:
                clusters[j].append(i)
                continue
        leaders.append(i)
        clusters.append([i])
    return clusters


def rank_key(g: Guideline) -> tuple[int, int, int, str]:
    """Higher is stronger: evidence from success first, then support, priority, recency."""
    ev = 0 if g.evidence == "failure" else 1
    return (ev, g.support, _PRIORITY[g.priority], g.updated_at.isoformat())


def merge_into(existing: Guideline, new: Guideline, merged_content: str | None = None) -> Guideline:
    """``existing`` absorbs ``new``: provenance union, support = number of source trajectories,
    evidence recomputed; the text of the stronger one wins (success outranks failure)."""
    sources = list(dict.fromkeys(existing.source_trajectory_ids + new.source_trajectory_ids))
    outcomes = {**existing.metadata.get("source_outcomes", {}), **new.metadata.get("source_outcomes", {})}
    kinds = {outcomes.get(s, existing.evidence) for s in sources}
    evidence = "both" if len(kinds) > 1 or "both" in kinds else (kinds.pop() if kinds else existing.evidence)
    text_from = new if (existing.evidence == "failure" and new.evidence != "failure") else existing
    update: dict[str, Any] = {
        "source_trajectory_ids": sources,
        "support": max(
            len(sources),
            existing.support
            + (0 if set(new.source_trajectory_ids) <= set(existing.source_trajectory_ids) else 1),
        ),
        "evidence": evidence,
        "metadata": {**existing.metadata, "source_outcomes": outcomes},
        "updated_at": utc_now(),
        "priority": max(existing.priority, new.priority, key=_PRIORITY.__getitem__),
    }
    if text_from is new:
        for f in (
            "content",
            "purpose",
            "implementation_steps",
            "trigger",
            "negative_example",
            "application_context",
        ):
            update[f] = getattr(new, f)
    if merged_content:
        update["content"] = merged_content
    return existing.model_copy(update=update)


@dataclass
class DecisionRecord:
    """One logged decision (persisted in the namespace's decision table)."""

    action: Action
    guideline_id: str | None
    reason: str
    decided_by: str
    trajectory_id: str | None = None
    subtask: str | None = None
    content: str | None = None
    target_id: str | None = None
    id: str = field(default_factory=new_id)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class Plan:
    """What consolidating one cluster decided: guidelines to write, ids to delete, the log."""

    writes: dict[str, Guideline] = field(default_factory=dict)
    deletes: list[str] = field(default_factory=list)
    log: list[DecisionRecord] = field(default_factory=list)


@runtime_checkable
class Decider(Protocol):
    name: str

    async def decide(
        self, subtask: str, existing: list[Guideline], new: list[Guideline], content_sims: np.ndarray
    ) -> Plan: ...


class RuleDecider:
    """Deterministic decisions from content similarity and evidence ranking."""

    name = "rules"

    def __init__(self, duplicate_threshold: float = 0.85, max_tips_per_cluster: int = 6) -> None:
        self.duplicate_threshold = duplicate_threshold
        self.max_tips_per_cluster = max_tips_per_cluster

    async def decide(
        self, subtask: str, existing: list[Guideline], new: list[Guideline], content_sims: np.ndarray
    ) -> Plan:
        """``content_sims[i, j]`` = cosine(new[i].content, existing[j].content)."""
        plan = Plan()
        current = {g.id: g for g in existing}
        for i, tip in enumerate(new):
            best_j, best = -1, -1.0
            for j, g in enumerate(existing):
                if g.id in current and g.category == tip.category and content_sims[i, j] > best:
                    best_j, best = j, float(content_sims[i, j])
            if best_j >= 0 and best >= self.duplicate_threshold:
                target = current[existing[best_j].id]
                merged = merge_into(target, tip)
                current[target.id] = merged
                plan.writes[target.id] = merged
                why = f"same advice as {target.id} (cosine {best:.2f})"
                if merged.content != target.content:
                    why += "; text replaced: success outranks failure"
                plan.log.append(
                    DecisionRecord(
                        "UPDATE", target.id, why, self.name, target_id=target.id, content=tip.content
                    )
                )
                continue
            if len(current) + 1 > self.max_tips_per_cluster:
                weakest = min(current.values(), key=rank_key)
                if rank_key(tip)[:3] <= rank_key(weakest)[:3]:  # ties keep the incumbent
                    plan.log.append(
                        DecisionRecord(
                            "NONE",
                            None,
                            "cluster full and the new tip ranks lowest",
                            self.name,
                            content=tip.content,
                        )
                    )
                    continue
                del current[weakest.id]
                plan.writes.pop(weakest.id, None)
                plan.deletes.append(weakest.id)
                plan.log.append(
                    DecisionRecord(
                        "DELETE",
                        weakest.id,
                        "cluster full: weakest tip replaced",
                        self.name,
                        target_id=weakest.id,
                        content=weakest.content,
                    )
                )
            current[tip.id] = tip
            plan.writes[tip.id] = tip
            note = (
                f"closest same-category tip cosine {best:.2f}"
                if best_j >= 0
                else "first tip of its kind here"
            )
            plan.log.append(DecisionRecord("ADD", tip.id, note, self.name, content=tip.content))
        return plan


class LLMDecider:
    """The model decides ADD / UPDATE / DELETE / NONE per new tip (ids validated; re-asked if not)."""

    name = "llm"

    def __init__(self, llm: LLMClient) -> None:
        self.llm = llm

    async def decide(
        self, subtask: str, existing: list[Guideline], new: list[Guideline], content_sims: np.ndarray
    ) -> Plan:
        if not existing:
            return await RuleDecider().decide(subtask, existing, new, content_sims)
        ex_text = "\n".join(
            f"- id={g.id} [{g.category}, evidence={g.evidence}, support={g.support}] {g.content}"
            for g in existing
        )
        new_text = "\n".join(f"{i}. [{g.category}] {g.content}" for i, g in enumerate(new))
        evidence = "successful" if all(g.evidence != "failure" for g in new) else "failed"
        schema = bounded(DecisionBatch, n_new=len(new), existing_ids=frozenset(g.id for g in existing))
        reply = await self.llm.astructured(
            stage_messages("consolidate", subtask=subtask, existing=ex_text, new=new_text, evidence=evidence),
            schema,
        )
        plan = Plan()
        current = {g.id: g for g in existing}
        done: set[int] = set()
        for d in reply.decisions:
            if d.tip in done:
                continue
            done.add(d.tip)
            tip = new[d.tip]
            if d.action == "UPDATE" and d.target_id in current:
                merged = merge_into(current[d.target_id], tip, d.merged_content)
                current[d.target_id] = merged
                plan.writes[d.target_id] = merged
                plan.log.append(
                    DecisionRecord(
                        "UPDATE", d.target_id, d.reason, self.name, target_id=d.target_id, content=tip.content
                    )
                )
            elif d.action == "DELETE" and d.target_id in current:
                old = current.pop(d.target_id)
                plan.writes.pop(old.id, None)
                plan.deletes.append(old.id)
                plan.log.append(
                    DecisionRecord(
                        "DELETE", old.id, d.reason, self.name, target_id=old.id, content=old.content
                    )
                )
                plan.writes[tip.id] = tip
                plan.log.append(
                    DecisionRecord("ADD", tip.id, f"replaces {old.id}", self.name, content=tip.content)
                )
            elif d.action == "NONE":
                plan.log.append(DecisionRecord("NONE", None, d.reason, self.name, content=tip.content))
            else:  # ADD, or an UPDATE/DELETE whose target an earlier decision already removed
                plan.writes[tip.id] = tip
                plan.log.append(DecisionRecord("ADD", tip.id, d.reason, self.name, content=tip.content))
        return plan


__all__ = [
    "Decider",
    "DecisionRecord",
    "LLMDecider",
    "Plan",
    "RuleDecider",
    "cluster",
    "merge_into",
    "rank_key",
]
