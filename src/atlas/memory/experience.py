"""Experience memory: whole trajectories stored as experiences, retrieved by task similarity.

``ChromaExperienceMemory`` embeds the text its ``ExperienceExtractor`` returns (the task description
by default), keeps success and failure with outcome metadata, and in ``search`` (ReMem's k=4 default)
returns only experiences at or above a relevance floor (calibrated per embedder, see
:mod:`atlas.memory.relevance`), ranked by relevance with the outcome as a weight (a failure counts
``failure_weight`` of its relevance), so a close failure outranks a barely related success; the same
task stored twice with the same outcome comes back once.

Relevance is the mean cosine over the views an experience was stored under (``KEYS``): the task as
written against the query as written (``t``), the entity-stripped task against the entity-stripped
query (``g``, names, objects, ids, dates removed by :class:`RuleGeneralizer`), and, when the trajectory
carries its subtask descriptions (``metadata["subtasks"]``, e.g. from the guideline pipeline's
segmentation or the agent's plan), their generalized plan against the entity-stripped query (``p``).
One view alone lets one shared noun lift an unrelated task over the floor and one different noun push
a sibling task under it; the mean of views keeps siblings ("put a clean knife on the countertop" for
"put a clean apple in the fridge") in and near-misses out. Experiences stored before the views
existed are scored on the one vector they have. A
``RefineStrategy`` may then merge, drop and reorder what was retrieved. ``LLMRefineStrategy`` asks a model for a JSON decision and applies it defensively: ids the
model invents are ignored, conflicting instructions resolve towards keeping, nothing retrieved is lost
unless the model explicitly dropped it.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel, Field

from atlas.core.types import Experience, Task, Trajectory, new_id
from atlas.errors import InvalidInputError
from atlas.infra.aio import run_sync
from atlas.memory.common import ask_json, render_trajectory, validate_k, validate_task, validate_trajectory
from atlas.memory.guidelines.generalize import RuleGeneralizer
from atlas.memory.relevance import relevance_floor
from atlas.memory.storage import IndexedTable
from atlas.protocols.embed import Embedder
from atlas.protocols.llm import LLM
from atlas.protocols.memory import ExperienceExtractor, ExtractsAsync, RefineStrategy
from atlas.protocols.store import VectorStore

if TYPE_CHECKING:
    from atlas.infra.llm.client import LLMClient
    from atlas.infra.records import RecordStore

log = logging.getLogger(__name__)

# --- extractors ---------------------------------------------------------------------------------------


class SimpleExperienceExtractor:
    """Embed the task description only (the seed's default)."""

    def extract(self, trajectory: Trajectory) -> str:
        return trajectory.task.description


class LLMSummarizingExtractor:
    """An LLM summarizes task + key steps + outcome into the text that gets embedded.

    Falls back to nothing: an LLM error propagates (the store is then refused, nothing is written).
    """

    SYSTEM = (
        "You write short retrieval keys for an agent's memory. Given a trajectory, reply with 1-3 plain "
        "sentences: what the task was, the approach that was taken, and the outcome. No lists, no JSON."
    )

    def __init__(self, llm_client: LLM, max_chars: int = 600) -> None:
        self.llm = llm_client
        self.max_chars = max_chars

    async def aextract(self, trajectory: Trajectory) -> str:
        completion = await self.llm.acomplete(
            [
                {"role": "system", "content": self.SYSTEM},
                {"role": "user", "content": render_trajectory(trajectory)},
            ]
        )
        text = (completion.text or "").strip()
        if not text:
            return trajectory.task.description
        return text[: self.max_chars]

    def extract(self, trajectory: Trajectory) -> str:
        return run_sync(self.aextract(trajectory))


# --- refine strategies ----------------------------------------------------------------------------------


class PassthroughRefineStrategy:
    """No-op refinement (the ablation baseline)."""

    async def refine(self, experiences: list[Experience], context: Task | None = None) -> list[Experience]:
        return list(experiences)


class MergeGroup(BaseModel):
    ids: list[str] = Field(min_length=2)
    content: str = Field(min_length=1, description="the merged lesson, replacing the group")


class RefineDecision(BaseModel):
    """What the model may decide about the retrieved experiences (all ids refer to the list shown)."""

    keep: list[str] | None = None  # when given, anything not kept, merged or ordered is dropped
    drop: list[str] = Field(default_factory=list)
    merge: list[MergeGroup] = Field(default_factory=list)
    order: list[str] = Field(default_factory=list)
    notes: str = ""


def apply_refine_decision(
    experiences: list[Experience], decision: RefineDecision, *, min_keep: int = 1
) -> list[Experience]:
    """Apply a refine decision safely.

    Unknown ids are ignored; an id both kept and dropped is kept; an id in several merge groups joins
    the first; a merged experience takes the position of its first member and ``merged_from`` lists its
    members. If everything would be dropped, the best ``min_keep`` originals survive.
    """
    by_id = {e.id: e for e in experiences}
    known = [i for i in by_id]
    keep = {i for i in (decision.keep or []) if i in by_id}
    ordered_ids = [i for i in decision.order if i in by_id]
    drop = {i for i in decision.drop if i in by_id} - keep - set(ordered_ids)
    if decision.keep is not None:
        mentioned = keep | set(ordered_ids) | {i for g in decision.merge for i in g.ids}
        drop |= {i for i in known if i not in mentioned}

    member_of: dict[str, int] = {}
    groups: list[tuple[list[str], str]] = []
    for group in decision.merge:
        members = [i for i in dict.fromkeys(group.ids) if i in by_id and i not in member_of]
        if len(members) < 2:
            continue
        for i in members:
            member_of[i] = len(groups)
        groups.append((members, group.content))
    drop -= set(member_of)

    merged: dict[int, Experience] = {}
    for gi, (members, content) in enumerate(groups):
        parts = [by_id[i] for i in members]
        lead = max(parts, key=lambda e: (e.success, e.score, e.similarity or 0.0))
        merged[gi] = Experience(
            id=new_id(),
            task=lead.task,
            trajectory_id=lead.trajectory_id,
            content=content.strip(),
            steps=lead.steps,
            success=any(p.success for p in parts),
            score=max(p.score for p in parts),
            similarity=max((p.similarity for p in parts if p.similarity is not None), default=None),
            metadata={"merged_from": members, "refined": True},
        )

    # the sequence before reordering: originals minus drops, merge groups at their first member
    sequence: list[tuple[str, Experience]] = []  # (representative original id, experience)
    emitted: set[int] = set()
    for e in experiences:
        if e.id in member_of:
            gi = member_of[e.id]
            if gi not in emitted:
                emitted.add(gi)
                sequence.append((e.id, merged[gi]))
        elif e.id not in drop:
            sequence.append((e.id, e))

    if ordered_ids:
        rank: dict[int, int] = {}
        for pos, oid in enumerate(ordered_ids):
            key = id(merged[member_of[oid]]) if oid in member_of else id(by_id[oid])
            rank.setdefault(key, pos)
        first = [x for x in sequence if id(x[1]) in rank]
        first.sort(key=lambda x: rank[id(x[1])])
        rest = [x for x in sequence if id(x[1]) not in rank]
        sequence = first + rest

    result = [e for _, e in sequence]
    if not result and experiences and min_keep > 0:
        result = list(experiences[:min_keep])
    return result


class LLMRefineStrategy:
    """ReMem-style meta-reasoning: the model decides what to keep, drop, merge and in which order;
    :func:`apply_refine_decision` applies that decision safely."""

    SYSTEM = (
        "You curate an agent's retrieved memories before it starts a task. Decide which experiences help "
        "with the task: drop noisy or irrelevant ones, merge near-duplicates into one lesson, and order the "
        "rest from most to least useful. Refer to experiences only by the ids shown. Reply with JSON only: "
        '{"keep": [ids] or null, "drop": [ids], "merge": [{"ids": [ids], "content": "merged lesson"}], '
        '"order": [ids], "notes": "why"}'
    )

    def __init__(self, llm_client: LLMClient, *, min_keep: int = 1, retries: int = 2) -> None:
        self.llm = llm_client
        self.min_keep = min_keep
        self.retries = retries

    def _prompt(self, experiences: list[Experience], context: Task | None) -> str:
        lines = []
        if context is not None:
            lines.append(f"Upcoming task: {context.description}\n")
        lines.append("Retrieved experiences:")
        for e in experiences:
            outcome = "success" if e.success else "failure"
            sim = f", similarity {e.similarity:.2f}" if e.similarity is not None else ""
            steps = "; ".join(s.action for s in e.steps[:8])
            lines.append(
                f"- id={e.id} [{outcome}{sim}] task: {e.task.description}\n  memory: {e.content}\n  steps: {steps}"
            )
        return "\n".join(lines)

    async def refine(self, experiences: list[Experience], context: Task | None = None) -> list[Experience]:
        if len(experiences) <= 1 and context is None:
            return list(experiences)
        if not experiences:
            return []
        decision = await ask_json(
            self.llm, self.SYSTEM, self._prompt(experiences, context), RefineDecision, retries=self.retries
        )
        return apply_refine_decision(experiences, decision, min_keep=self.min_keep)


# --- the component ---------------------------------------------------------------------------------------

#: The views an experience is stored under: t = extracted text (the task as written), g = the task
#: entity-stripped, p = its subtask descriptions entity-stripped (only when the trajectory has them).
KEYS = ("t", "g", "p")
_MAX_SUBTASKS = 12


def trajectory_subtasks(trajectory: Trajectory) -> list[str]:
    """The subtask descriptions a trajectory carries (``metadata["subtasks"]``: strings, or objects
    with a ``description``/``subtask``), at most 12, blanks dropped."""
    raw = trajectory.metadata.get("subtasks") if isinstance(trajectory.metadata, dict) else None
    if not isinstance(raw, list):
        return []
    out = []
    for item in raw[:_MAX_SUBTASKS]:
        if isinstance(item, dict):
            item = item.get("description") or item.get("subtask")
        if isinstance(item, str) and item.strip():
            out.append(item.strip()[:300])
    return out


def _dedupe_key(exp: Experience) -> tuple[str, bool]:
    return (" ".join("".join(c if c.isalnum() else " " for c in exp.content.casefold()).split()), exp.success)


def _ts(dt: datetime) -> float:
    return dt.timestamp()


class ChromaExperienceMemory:
    """ExperienceMemory backed by a VectorStore (Chroma by default) plus SQLite records.

    ``records`` defaults to an in-memory RecordStore (tests, throw-away memories); pass a file-backed
    one (``build_memory_system`` does) to persist. Both stores must point at the same place every time
    the memory is reopened. ``min_similarity`` (None = the calibrated floor of the embedder) is the
    relevance floor of ``search``; ``failure_weight`` scales the rank of failed experiences;
    ``generalizer`` strips entities from tasks, subtasks and queries (a rule pass by default).
    """

    TABLE = "experiences"

    def __init__(
        self,
        embedder: Embedder,
        vector_store: VectorStore,
        extractor: ExperienceExtractor | None = None,
        refine_strategy: RefineStrategy | None = None,
        collection_name: str = "atlas_experiences",
        *,
        records: RecordStore | None = None,
        max_steps_stored: int = 200,
        pool_factor: int = 4,
        min_similarity: float | None = None,
        failure_weight: float = 0.9,
        generalizer: RuleGeneralizer | None = None,
    ) -> None:
        if not 0.0 < failure_weight <= 1.0:
            raise InvalidInputError(f"failure_weight: must be in (0, 1], got {failure_weight!r}")
        if records is None:
            from atlas.infra.records import RecordStore

            records = RecordStore(None)
        self.embedder = embedder
        self.vector_store = vector_store
        self.extractor: ExperienceExtractor = extractor or SimpleExperienceExtractor()
        self.refine_strategy: RefineStrategy = refine_strategy or PassthroughRefineStrategy()
        self.collection_name = collection_name
        self.max_steps_stored = max_steps_stored
        self.pool_factor = max(1, pool_factor)
        self.min_similarity = (
            relevance_floor(embedder, "experience") if min_similarity is None else float(min_similarity)
        )
        self.failure_weight = failure_weight
        self.generalizer = generalizer or RuleGeneralizer()
        self._table = IndexedTable(records, collection_name, vector_store)
        self._keys_table = f"{collection_name}__keys"

    # --- writing ---------------------------------------------------------------------------
    def _experience(self, trajectory: Trajectory, content: str) -> Experience:
        if not content or not content.strip():
            raise InvalidInputError("the extractor returned empty text; nothing to embed")
        return Experience(
            id=new_id(),
            task=trajectory.task,
            trajectory_id=trajectory.id,
            content=content,
            steps=trajectory.steps[: self.max_steps_stored],
            success=trajectory.success,
            score=trajectory.score,
            metadata={
                "outcome": "success" if trajectory.success else "failure",
                "n_steps": len(trajectory.steps),
                "uses": 0,
                "use_successes": 0,
                **({"subtasks": subtasks} if (subtasks := trajectory_subtasks(trajectory)) else {}),
            },
            created_at=trajectory.created_at,
        )

    @staticmethod
    def _vector_meta(exp: Experience) -> dict[str, Any]:
        return {
            "success": exp.success,
            "outcome": "success" if exp.success else "failure",
            "domain": exp.task.domain,
            "score": float(exp.score),
            "created_ts": _ts(exp.created_at),
            "trajectory_id": exp.trajectory_id or "",
        }

    def _view_texts(self, trajectory: Trajectory) -> list[str]:
        """The texts of views g and p (p only when the trajectory has subtasks)."""
        gen = self.generalizer.generalize_description
        texts = [gen(trajectory.task.description) or trajectory.task.description]
        subtasks = trajectory_subtasks(trajectory)
        if subtasks:
            texts.append("; ".join(gen(s) or s for s in subtasks))
        return texts

    @staticmethod
    def _keys_record(vectors: list[np.ndarray]) -> dict[str, Any]:
        return {k: [round(float(x), 5) for x in v] for k, v in zip(KEYS, vectors, strict=False)}

    def _write(
        self, experiences: list[Experience], vectors: np.ndarray, keys: list[dict[str, Any]] | None = None
    ) -> list[str]:
        """Write the experiences not stored yet and return every one's id. A trajectory id already
        stored (a retried write whose first answer was lost) gives the first experience's id back
        instead of a duplicate; the check and the write share one transaction."""
        index = f"{self.collection_name}__by_trajectory"
        table = self._table
        with table._lock, table.records.transaction():
            ids: list[str] = []
            fresh: list[int] = []
            seen: dict[str, str] = {}
            for n, e in enumerate(experiences):
                tid = e.trajectory_id
                known = table.records.get(index, tid) if tid else None
                if known is not None and table.get(known.get("experience_id", "")) is None:
                    known = None  # that experience was since deleted or merged: store this one
                if known is not None:
                    ids.append(known["experience_id"])
                    continue
                if tid and tid in seen:
                    ids.append(seen[tid])
                    continue
                if tid:
                    seen[tid] = e.id
                ids.append(e.id)
                fresh.append(n)
            if fresh:
                table.write(
                    [(experiences[n].id, experiences[n].model_dump(mode="json")) for n in fresh],
                    np.asarray(vectors)[fresh],
                    [self._vector_meta(experiences[n]) for n in fresh],
                    [experiences[n].content for n in fresh],
                    extra=[
                        (index, experiences[n].trajectory_id, {"experience_id": experiences[n].id})
                        for n in fresh
                        if experiences[n].trajectory_id
                    ]
                    + [(self._keys_table, experiences[n].id, keys[n]) for n in fresh if keys is not None],
                )
        return ids

    async def _aextract(self, trajectory: Trajectory) -> str:
        if isinstance(self.extractor, ExtractsAsync):
            return await self.extractor.aextract(trajectory)
        return await asyncio.to_thread(self.extractor.extract, trajectory)

    async def astore_many(self, trajectories: list[Trajectory | dict]) -> list[str]:
        """Store several trajectories with one batched embedding and one atomic write."""
        trajs = [validate_trajectory(t) for t in trajectories]
        if not trajs:
            return []
        contents = await asyncio.gather(*(self._aextract(t) for t in trajs))
        exps = [self._experience(t, c) for t, c in zip(trajs, contents, strict=True)]
        views = [self._view_texts(t) for t in trajs]
        texts = [e.content for e in exps] + [v for vs in views for v in vs]
        vectors = np.asarray(await self.embedder.aembed(texts))
        return await asyncio.to_thread(
            self._write, exps, vectors[: len(exps)], self._keys(exps, views, vectors)
        )

    @classmethod
    def _keys(
        cls, exps: list[Experience], views: list[list[str]], vectors: np.ndarray
    ) -> list[dict[str, Any]]:
        out, at = [], len(exps)
        for n, vs in enumerate(views):
            out.append(cls._keys_record([vectors[n], *vectors[at : at + len(vs)]]))
            at += len(vs)
        return out

    async def astore(self, trajectory: Trajectory | dict) -> str:
        """Store one trajectory (success or failure) as an experience; returns its UUID."""
        return (await self.astore_many([trajectory]))[0]

    def store(self, trajectory: Trajectory | dict) -> str:
        """Sync store: validates, extracts, embeds, writes records+vector atomically."""
        traj = validate_trajectory(trajectory)
        content = (
            run_sync(self.extractor.aextract(traj))
            if isinstance(self.extractor, ExtractsAsync)
            else self.extractor.extract(traj)
        )
        exp = self._experience(traj, content)
        views = self._view_texts(traj)
        vectors = np.asarray(self.embedder.embed([exp.content, *views]))
        return self._write([exp], vectors[:1], self._keys([exp], [views], vectors))[0]

    def store_many(self, trajectories: list[Trajectory | dict]) -> list[str]:
        return run_sync(self.astore_many(trajectories))

    # --- reading -----------------------------------------------------------------------------
    def _query_texts(self, task: Task) -> list[str]:
        """The query as written (view t) and entity-stripped (views g and p)."""
        gen = self.generalizer.generalize_description(task.description) or task.description
        return [self.query_text(task), gen]

    def relevance(self, raw: np.ndarray, gen: np.ndarray, keys: dict[str, Any] | None) -> float | None:
        """Mean cosine over the experience's views (None when it has no stored views)."""
        if not keys:
            return None
        sims = []
        for key, q in (("t", raw), ("g", gen), ("p", gen)):
            v = keys.get(key)
            if isinstance(v, list) and len(v) == len(q):
                sims.append(float(np.asarray(v, dtype=np.float32) @ q))
        return sum(sims) / len(sims) if sims else None

    def _rank(self, task: Task, k: int, vectors: np.ndarray, where: dict | None) -> list[Experience]:
        """Experiences with relevance ≥ ``min_similarity``, best ``k`` by relevance × outcome weight,
        one per (content, outcome).

        The candidates are the nearest ``pool_factor * k`` stored vectors to the query as written and
        to the query entity-stripped; each is then scored on all its views (:meth:`relevance`).
        """
        if k <= 0:
            return []
        raw, gen = (np.asarray(v, dtype=np.float32) for v in vectors[:2])
        want = max(k * self.pool_factor, k)
        scores: dict[str, float] = {}
        metas: dict[str, dict] = {}
        for q in (raw, gen):
            pool = self._table.query_raw(q, want, where)
            for rid, score, meta in zip(
                pool.ids, pool.scores, pool.metadatas or [{}] * len(pool.ids), strict=False
            ):
                metas.setdefault(rid, meta or {})
                if q is raw:
                    scores[rid] = float(score)  # the one-vector score (experiences stored without views)
                else:
                    scores.setdefault(rid, float(score))
        ranked = []
        for rid, fallback in scores.items():
            views_score = self.relevance(raw, gen, self._table.records.get(self._keys_table, rid))
            score = fallback if views_score is None else views_score
            if score < self.min_similarity:
                continue
            weight = 1.0 if metas[rid].get("success") is True else self.failure_weight
            ranked.append((score * weight, score, rid))
        ranked.sort(key=lambda r: (-r[0], r[2]))
        out: list[Experience] = []
        seen: set[tuple[str, bool]] = set()
        for _, score, rid in ranked:
            if len(out) == k:
                break
            record = self._table.get(rid)
            if record is None:
                log.warning("vector %s has no experience record (interrupted write?); skipped", rid)
                continue
            exp = Experience.model_validate(record)
            key = _dedupe_key(exp)
            if key in seen:
                continue
            seen.add(key)
            exp.similarity = round(score, 4)
            out.append(exp)
        return out

    def search(self, task: Task | str, k: int = 4, where: dict | None = None) -> list[Experience]:
        """The relevant experiences (relevance ≥ ``min_similarity``), most relevant first; a failure
        ranks at ``failure_weight`` of its relevance. Nothing relevant → an empty list."""
        task = validate_task(task)
        k = validate_k(k)
        vectors = self.embedder.embed(self._query_texts(task))
        return self._rank(task, k, vectors, where)

    async def asearch(self, task: Task | str, k: int = 4, where: dict | None = None) -> list[Experience]:
        task = validate_task(task)
        k = validate_k(k)
        vectors = await self.embedder.aembed(self._query_texts(task))
        return await asyncio.to_thread(self._rank, task, k, vectors, where)

    def query_text(self, task: Task) -> str:
        """What a task is embedded as for view t (its description, matching the default extractor)."""
        return task.description

    def get(self, experience_id: str) -> Experience | None:
        record = self._table.get(experience_id)
        return Experience.model_validate(record) if record is not None else None

    def all(self) -> list[Experience]:
        return [Experience.model_validate(r) for r in self._table.all()]

    def count(self) -> int:
        return self._table.count()

    async def arefine(self, experiences: list[Experience], context: Task | None = None) -> list[Experience]:
        return await self.refine_strategy.refine(experiences, context)

    def refine(self, experiences: list[Experience], context: Task | None = None) -> list[Experience]:
        """Delegates to the refine strategy."""
        return run_sync(self.arefine(experiences, context))

    def update_stats(self, experience_id: str, success: bool) -> None:
        """Record that reusing this experience led to success or failure (feeds ``min_success_rate``)."""

        def bump(record: dict[str, Any]) -> dict[str, Any]:
            meta = dict(record.get("metadata") or {})
            meta["uses"] = int(meta.get("uses", 0)) + 1
            meta["use_successes"] = int(meta.get("use_successes", 0)) + (1 if success else 0)
            record["metadata"] = meta
            return record

        try:
            self._table.update(experience_id, bump)
        except KeyError as exc:
            raise InvalidInputError(f"unknown experience id {experience_id!r}") from exc

    @staticmethod
    def success_rate(exp: Experience) -> float:
        """Observed reuse success rate, or the experience's own outcome before any reuse."""
        uses = int(exp.metadata.get("uses", 0))
        if uses:
            return int(exp.metadata.get("use_successes", 0)) / uses
        return 1.0 if exp.success else 0.0

    def prune(self, criteria: dict[str, Any]) -> int:
        """Remove low-value experiences; returns how many were removed.

        ``min_success_rate`` — drop experiences whose reuse success rate (or own outcome, if never
        reused) is below it; ``max_age_days`` — drop older ones; ``keep_diverse`` — spare a candidate
        whose nearest surviving neighbour is less similar than ``diversity_threshold`` (default 0.8), so
        the only memory of a kind of task is not lost. Unknown criteria are an error.
        """
        allowed = {"min_success_rate", "max_age_days", "keep_diverse", "diversity_threshold"}
        unknown = set(criteria) - allowed
        if unknown:
            raise InvalidInputError(f"unknown prune criteria: {sorted(unknown)} (allowed: {sorted(allowed)})")
        exps = self.all()
        now = datetime.now(UTC)
        doomed: set[str] = set()
        if "min_success_rate" in criteria:
            threshold = float(criteria["min_success_rate"])
            doomed |= {e.id for e in exps if self.success_rate(e) < threshold}
        if "max_age_days" in criteria:
            cutoff = now - timedelta(days=float(criteria["max_age_days"]))
            doomed |= {e.id for e in exps if e.created_at < cutoff}
        if criteria.get("keep_diverse") and doomed:
            doomed -= self._diverse_survivors(exps, doomed, float(criteria.get("diversity_threshold", 0.8)))
        removed = self._table.delete(sorted(doomed))
        with self._table.records.transaction():
            for rid in doomed:
                self._table.records.delete(self._keys_table, rid)
        return removed

    def _diverse_survivors(self, exps: list[Experience], doomed: set[str], threshold: float) -> set[str]:
        """Candidates to spare: greedily keep a doomed experience unless something kept is near it."""
        vecs = self.embedder.embed([e.content for e in exps])
        kept_idx = [i for i, e in enumerate(exps) if e.id not in doomed]
        spared: set[str] = set()
        for i, e in enumerate(exps):
            if e.id not in doomed:
                continue
            if kept_idx:
                nearest = float(np.max(vecs[kept_idx] @ vecs[i]))
                if nearest >= threshold:
                    continue
            spared.add(e.id)
            kept_idx.append(i)
        return spared


__all__ = [
    "KEYS",
    "ChromaExperienceMemory",
    "LLMRefineStrategy",
    "LLMSummarizingExtractor",
    "MergeGroup",
    "PassthroughRefineStrategy",
    "RefineDecision",
    "SimpleExperienceExtractor",
    "apply_refine_decision",
    "trajectory_subtasks",
]
