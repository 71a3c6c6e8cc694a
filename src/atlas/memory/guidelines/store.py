"""Durable storage of one namespace of the guideline bank.

Records (guidelines, trajectories, the decision log) live in SQLite tables of a ``RecordStore``;
each guideline has three vector keys in a ``VectorStore`` — its generalized subtask description
(``<id>:s``, also used for clustering), the generalized task it was learned in (``<id>:t``) and that
task as it was written (``<id>:r``; its stored document is the generalized text, so no entity is kept
in clear beside the vector).
Tables and the collection are per namespace, so one namespace never sees another's memory.

Writes are atomic: records change in one transaction, then the vectors; if the vector write fails
the records are restored and ``StoreError`` is raised, so the two never disagree."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from atlas.core.types import Guideline, utc_now
from atlas.errors import AtlasError, StoreError
from atlas.memory.guidelines.config import check_namespace

if TYPE_CHECKING:
    from atlas.infra.records import RecordStore
    from atlas.protocols.store import VectorStore

log = logging.getLogger(__name__)


KEYS = ("s", "t", "r")  # subtask, generalized task, task as written


def table_suffix(namespace: str) -> str:
    """Namespaces are case-sensitive but SQLite table names are not: hex-encode them."""
    return check_namespace(namespace).encode().hex()


def collection_name(namespace: str) -> str:
    return f"atlas-guidelines-{table_suffix(namespace)}"


def vector_metadata(g: Guideline, key: str) -> dict[str, Any]:
    """Filterable metadata stored next to each vector key (strings only: every backend takes them)."""
    return {
        "guideline_id": g.id,
        "key": key,
        "category": g.category,
        "task_category": g.task_category,
        "domain": str(g.metadata.get("domain", "generic")),
        "evidence": g.evidence,
        "priority": g.priority,
    }


@dataclass
class Commit:
    """One atomic change: guidelines written (with their key vectors), ids deleted, log rows."""

    upserts: list[tuple[Guideline, dict[str, list[float]], dict[str, str]]] = field(default_factory=list)
    deletes: list[str] = field(default_factory=list)
    decisions: list[dict[str, Any]] = field(default_factory=list)
    trajectory: dict[str, Any] | None = None
    trajectory_deletes: list[str] = field(default_factory=list)

    def empty(self) -> bool:
        return not (
            self.upserts or self.deletes or self.decisions or self.trajectory or self.trajectory_deletes
        )


class GuidelineStore:
    """Guidelines, trajectories and decisions of one namespace (records + vectors)."""

    def __init__(self, namespace: str, records: RecordStore, vectors: VectorStore) -> None:
        sfx = table_suffix(namespace)
        self.namespace = namespace
        self.records = records
        self.vectors = vectors
        self.t_guidelines = f"gl_{sfx}_guidelines"
        self.t_trajectories = f"gl_{sfx}_trajectories"
        self.t_decisions = f"gl_{sfx}_decisions"

    # --- reads ------------------------------------------------------------------------------------
    def get(self, guideline_id: str) -> Guideline | None:
        rec = self.records.get(self.t_guidelines, guideline_id)
        return Guideline.model_validate(rec) if rec else None

    def get_many(self, ids: list[str]) -> list[Guideline]:
        out = []
        for i in ids:
            g = self.get(i)
            if g is not None:
                out.append(g)
        return out

    def all(self) -> list[Guideline]:
        return [Guideline.model_validate(r) for r in self.records.all(self.t_guidelines)]

    def count(self) -> int:
        return self.records.count(self.t_guidelines)

    def trajectory(self, trajectory_id: str) -> dict[str, Any] | None:
        return self.records.get(self.t_trajectories, trajectory_id)

    def trajectories(self) -> list[dict[str, Any]]:
        return self.records.all(self.t_trajectories)

    def decisions(self) -> list[dict[str, Any]]:
        return sorted(self.records.all(self.t_decisions), key=lambda d: (d.get("ts", ""), d.get("seq", 0)))

    async def key_vectors(self, guideline_ids: list[str]) -> dict[str, dict[str, list[float]]]:
        """guideline id → key kind → vector, for the given guidelines."""
        if not guideline_ids:
            return {}
        try:
            rows = await self.vectors.get([f"{g}:{k}" for g in guideline_ids for k in KEYS])
        except AtlasError:
            raise
        except Exception as exc:  # third-party backend error → our error, at the boundary
            raise StoreError(f"guideline vector read failed: {exc}") from exc
        out: dict[str, dict[str, list[float]]] = {}
        for row in rows:
            gid, key = row["id"].rsplit(":", 1)
            out.setdefault(gid, {})[key] = row["embedding"]
        return out

    async def query(
        self, vector: list[float], k: int, where: dict | None = None
    ) -> list[tuple[str, str, float]]:
        """Nearest keys as (guideline_id, key kind, cosine), best first."""
        try:
            res = await self.vectors.query(vector, k, where=where)
        except AtlasError:
            raise
        except Exception as exc:  # third-party backend error → our error, at the boundary
            raise StoreError(f"guideline vector query failed: {exc}") from exc
        return [
            (m.get("guideline_id", i.rsplit(":", 1)[0]), m.get("key", "s"), float(s))
            for i, s, m in zip(res.ids, res.scores, res.metadatas, strict=True)
        ]

    # --- writes -----------------------------------------------------------------------------------
    def put_trajectory(self, record: dict[str, Any]) -> None:
        self.records.put(self.t_trajectories, record["id"], record)

    def delete_trajectory(self, trajectory_id: str) -> bool:
        return self.records.delete(self.t_trajectories, trajectory_id)

    async def apply(self, commit: Commit) -> None:
        """Write ``commit`` atomically (records in one transaction, then vectors, rollback on failure)."""
        if commit.empty():
            return
        touched = [g.id for g, _, _ in commit.upserts] + list(commit.deletes)
        before = {gid: self.records.get(self.t_guidelines, gid) for gid in touched}
        traj_ids = ([commit.trajectory["id"]] if commit.trajectory else []) + list(commit.trajectory_deletes)
        traj_before = {tid: self.records.get(self.t_trajectories, tid) for tid in traj_ids}
        now = utc_now().isoformat()
        with self.records.transaction():
            for g, _, _ in commit.upserts:
                self.records.put(self.t_guidelines, g.id, g.model_dump(mode="json"))
            for gid in commit.deletes:
                self.records.delete(self.t_guidelines, gid)
            for d in commit.decisions:
                d.setdefault("ts", now)
                self.records.put(self.t_decisions, d["id"], d)
            if commit.trajectory:
                self.records.put(self.t_trajectories, commit.trajectory["id"], commit.trajectory)
            for tid in commit.trajectory_deletes:
                self.records.delete(self.t_trajectories, tid)
        stale = [f"{gid}:{k}" for gid in touched for k in KEYS]
        old_vectors: list[dict[str, Any]] = []
        try:
            if stale:
                old_vectors = await self.vectors.get(stale)
                await self.vectors.delete(stale)
            ids, vecs, metas, docs = [], [], [], []
            for g, keys, texts in commit.upserts:
                for key, vec in keys.items():
                    ids.append(f"{g.id}:{key}")
                    vecs.append(list(map(float, vec)))
                    metas.append(vector_metadata(g, key))
                    docs.append(texts.get(key, ""))
            if ids:
                await self.vectors.add(ids, vecs, metas, docs)
        except Exception as exc:
            await self._restore_vectors(stale, old_vectors)
            with self.records.transaction():
                for gid, rec in before.items():
                    if rec is None:
                        self.records.delete(self.t_guidelines, gid)
                    else:
                        self.records.put(self.t_guidelines, gid, rec)
                for d in commit.decisions:
                    self.records.delete(self.t_decisions, d["id"])
                for tid, rec in traj_before.items():
                    if rec is None:
                        self.records.delete(self.t_trajectories, tid)
                    else:
                        self.records.put(self.t_trajectories, tid, rec)
            if isinstance(exc, AtlasError):
                raise
            raise StoreError(f"guideline vector write failed, records rolled back: {exc}") from exc

    async def _restore_vectors(self, stale: list[str], old: list[dict[str, Any]]) -> None:
        """Best effort: put back the vectors a failed commit removed (the original error is what
        the caller sees; a failure here is logged, not raised over it)."""
        try:
            if stale:
                await self.vectors.delete(stale)
            if old:
                await self.vectors.add(
                    [o["id"] for o in old],
                    [o["embedding"] for o in old],
                    [o["metadata"] for o in old],
                    [o["document"] for o in old],
                )
        except Exception as exc:  # the commit's own error is re-raised by the caller
            log.error("could not restore guideline vectors after a failed commit: %s", exc)


__all__ = ["KEYS", "Commit", "GuidelineStore", "collection_name", "table_suffix", "vector_metadata"]
