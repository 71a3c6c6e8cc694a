"""Whole-bank maintenance rules (no LLM, no store, no embedding): what forgetting a trajectory and
re-consolidating the bank decide. ``GuidelineBank`` embeds, takes its lock and commits the ``Plan``."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

import numpy as np

from atlas.core.types import Guideline, utc_now
from atlas.memory.guidelines.config import GuidelineConfig
from atlas.memory.guidelines.consolidate import Action, DecisionRecord, Plan, cluster, merge_into

_DEMOTE = {"high": "medium", "medium": "low"}


def _record(action: Action, g: Guideline, reason: str, by: str, **extra: str) -> DecisionRecord:
    return DecisionRecord(action, g.id, reason, by, target_id=g.id, content=g.content, **extra)


def plan_forget(guidelines: Iterable[Guideline], trajectory_id: str) -> Plan:
    """Forget a trajectory: tips that came only from it are deleted, the others lose it from their
    provenance and one point of support (their evidence recomputed from the sources left)."""
    plan = Plan()
    for g in guidelines:
        if trajectory_id not in g.source_trajectory_ids:
            continue
        rest = [s for s in g.source_trajectory_ids if s != trajectory_id]
        if not rest:
            plan.deletes.append(g.id)
            plan.log.append(
                _record(
                    "DELETE",
                    g,
                    "its only source trajectory was removed",
                    "provenance",
                    trajectory_id=trajectory_id,
                )
            )
            continue
        outcomes = {s: o for s, o in g.metadata.get("source_outcomes", {}).items() if s != trajectory_id}
        kinds = set(outcomes.values()) or {g.evidence}
        evidence = "both" if len(kinds) > 1 else kinds.pop()
        plan.writes[g.id] = g.model_copy(
            update={
                "source_trajectory_ids": rest,
                "support": max(1, g.support - 1),
                "evidence": evidence,
                "metadata": {**g.metadata, "source_outcomes": outcomes},
                "updated_at": utc_now(),
            }
        )
        plan.log.append(
            _record(
                "UPDATE",
                g,
                "demoted: a source trajectory was removed",
                "provenance",
                trajectory_id=trajectory_id,
            )
        )
    return plan


def plan_consolidation(
    items: list[Guideline], svecs: np.ndarray, cvecs: np.ndarray, cfg: GuidelineConfig, now: datetime
) -> Plan:
    """``items`` strongest first, with their subtask (``svecs``) and content (``cvecs``) vectors:
    re-cluster the subtasks, merge near-duplicate tips inside each cluster, cap cluster size, and
    decay tips learned only from failures (priority −1 per ``failure_decay_days``; a low-priority,
    single-support one is deleted)."""
    plan = Plan()
    writes, deletes, logged = plan.writes, plan.deletes, plan.log
    for members in cluster(svecs, cfg.cluster_threshold):
        kept: list[int] = []
        for i in members:
            g = writes.get(items[i].id, items[i])
            dup = next(
                (
                    j
                    for j in kept
                    if items[j].category == g.category
                    and float(cvecs[i] @ cvecs[j]) >= cfg.duplicate_threshold
                ),
                None,
            )
            if dup is None:
                kept.append(i)
                continue
            target = writes.get(items[dup].id, items[dup])
            writes[target.id] = merge_into(target, g)
            writes.pop(g.id, None)
            deletes.append(g.id)
            logged.append(
                DecisionRecord(
                    "UPDATE",
                    target.id,
                    f"absorbed duplicate {g.id}",
                    "rules",
                    target_id=target.id,
                    content=g.content,
                )
            )
            logged.append(_record("DELETE", g, f"merged into {target.id}", "rules"))
        for i in kept[cfg.max_tips_per_cluster :]:
            g = items[i]
            writes.pop(g.id, None)
            deletes.append(g.id)
            logged.append(_record("DELETE", g, "cluster over max_tips_per_cluster", "rules"))
    for g0 in items:
        if g0.id in deletes or g0.evidence != "failure":
            continue
        g = writes.get(g0.id, g0)
        updated = g.updated_at if g.updated_at.tzinfo else g.updated_at.replace(tzinfo=UTC)
        if now - updated < timedelta(days=cfg.failure_decay_days):
            continue
        if g.priority in _DEMOTE:
            writes[g.id] = g.model_copy(update={"priority": _DEMOTE[g.priority], "updated_at": now})
            logged.append(_record("UPDATE", g, "decay: learned only from failures", "decay"))
        elif g.support <= 1:
            writes.pop(g.id, None)
            deletes.append(g.id)
            logged.append(_record("DELETE", g, "decay: low-priority failure-only tip", "decay"))
        else:
            writes[g.id] = g.model_copy(update={"support": g.support - 1, "updated_at": now})
            logged.append(_record("UPDATE", g, "decay: support −1", "decay"))
    return plan


__all__ = ["plan_consolidation", "plan_forget"]
