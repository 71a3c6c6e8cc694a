"""``GuidelineBank``: the pipeline (intelligence → attribution → segmentation → tips →
generalization → consolidation) and retrieval over one namespace's store.

One async implementation; the sync methods are thin ``run_sync`` wrappers. Each stage is a strategy
object passed in (or built from ``GuidelineConfig``), so any of them can be swapped or ablated. The
stages of one trajectory run in ``extraction.py``; the whole-bank maintenance rules (forgetting a
trajectory, re-consolidating) are ``maintenance.py``; the bank embeds, locks and commits."""

from __future__ import annotations

import asyncio
import logging
import weakref
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from atlas.core.types import Guideline, Task, Trajectory
from atlas.errors import ConfigError, InvalidInputError, LLMError
from atlas.infra.aio import run_sync
from atlas.memory.guidelines.attribution import Attributor, LLMAttributor
from atlas.memory.guidelines.config import GuidelineConfig, check_namespace
from atlas.memory.guidelines.consolidate import (
    Decider,
    DecisionRecord,
    LLMDecider,
    Plan,
    RuleDecider,
    rank_key,
)
from atlas.memory.guidelines.extraction import StageFailed, extract, stage, trajectory_record
from atlas.memory.guidelines.generalize import Generalizer, LLMGeneralizer, RuleGeneralizer
from atlas.memory.guidelines.intelligence import (
    LLMThoughtClassifier,
    TrajectoryAnalyzer,
)
from atlas.memory.guidelines.maintenance import plan_consolidation, plan_forget
from atlas.memory.guidelines.messages import parse_trajectory
from atlas.memory.guidelines.retrieval import CosineRetriever, LLMSelector, Retriever
from atlas.memory.guidelines.segmentation import LLMSegmenter, Segmenter, TaskLevelSegmenter
from atlas.memory.guidelines.store import KEYS, Commit, GuidelineStore, collection_name
from atlas.memory.guidelines.tips import LLMTipGenerator, TipGenerator
from atlas.memory.relevance import relevance_floor
from atlas.protocols.embed import Embedder

if TYPE_CHECKING:
    from atlas.infra.llm.client import LLMClient
    from atlas.infra.records import RecordStore

_FILTER_VALUES: dict[str, tuple[str, ...]] = {
    "category": ("strategy", "recovery", "optimization"),
    "evidence": ("success", "failure", "both"),
    "priority": ("low", "medium", "high"),
}


def _check_choice(name: str, value: Any) -> None:
    allowed = _FILTER_VALUES.get(name)
    if allowed is not None and value not in allowed:
        raise InvalidInputError(f"{name}: must be one of {', '.join(allowed)}, got {value!r}")


log = logging.getLogger(__name__)

SaveStatus = Literal["processed", "not_processed", "duplicate"]


@dataclass
class SaveResult:
    """What saving one trajectory did. ``guideline_ids`` = tips added or updated (provenance
    points back to ``trajectory_id``); ``status == 'not_processed'`` carries the failed stage in
    ``reason`` and the trajectory is kept for ``reprocess()``."""

    trajectory_id: str
    status: SaveStatus
    guideline_ids: list[str] = field(default_factory=list)
    outcome: str | None = None
    decisions: list[dict[str, Any]] = field(default_factory=list)
    reason: str | None = None
    subtasks: list[str] = field(default_factory=list)  # the generalized segment descriptions

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class GuidelineBank:
    """Learns strategy / recovery / optimization tips from trajectories and hands the relevant ones
    back for new tasks. Satisfies ``atlas.protocols.memory.GuidelineBank``."""

    def __init__(
        self,
        *,
        store: GuidelineStore | None = None,
        namespace: str = "default",
        llm: LLMClient | None = None,
        embedder: Embedder | None = None,
        config: GuidelineConfig | None = None,
        analyzer: TrajectoryAnalyzer | None = None,
        attributor: Attributor | None = None,
        segmenter: Segmenter | None = None,
        tip_generator: TipGenerator | None = None,
        generalizer: Generalizer | None = None,
        decider: Decider | None = None,
        retriever: Retriever | None = None,
    ) -> None:
        self.config = config or GuidelineConfig()
        cfg = self.config
        self.namespace = check_namespace(store.namespace if store else namespace)
        if store is None:
            from atlas.infra.records import RecordStore
            from atlas.infra.vector_index import InMemoryVectorStore

            store = GuidelineStore(
                self.namespace, RecordStore(None), InMemoryVectorStore(collection_name(namespace))
            )
        self.store = store
        if embedder is None:
            from atlas.infra.embeddings import default_embedder

            embedder = default_embedder()
        self.embedder = embedder
        self.llm = llm
        self.rules = RuleGeneralizer()
        self.analyzer = analyzer or TrajectoryAnalyzer(
            cfg.outcome,
            LLMThoughtClassifier(llm) if (llm is not None and cfg.llm_thought_classifier) else None,
        )
        self.attributor = attributor or (LLMAttributor(llm) if llm is not None else None)
        if segmenter is None and llm is not None:
            segmenter = (
                LLMSegmenter(llm, cfg.max_segments) if cfg.granularity == "subtask" else TaskLevelSegmenter()
            )
        self.segmenter = segmenter
        self.tip_generator = tip_generator or (
            LLMTipGenerator(llm, cfg.min_tips_per_segment, cfg.max_tips_per_segment)
            if llm is not None
            else None
        )
        self.generalizer = generalizer or (
            LLMGeneralizer(llm, self.rules) if (llm is not None and cfg.llm_generalizer) else self.rules
        )
        self.decider = decider or (
            LLMDecider(llm)
            if (llm is not None and cfg.llm_consolidation)
            else RuleDecider(cfg.duplicate_threshold, cfg.max_tips_per_cluster)
        )
        self.threshold = relevance_floor(embedder, "guidelines") if cfg.threshold is None else cfg.threshold
        self.cosine = CosineRetriever(self.threshold, cfg.failure_weight)
        self.retriever = retriever
        self._locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )

    # --- construction -------------------------------------------------------------------------------
    @classmethod
    def open(
        cls,
        path: str | Path | None = None,
        *,
        namespace: str = "default",
        records: RecordStore | None = None,
        **kwargs: Any,
    ) -> GuidelineBank:
        """A bank over ``path`` (SQLite ``guidelines.sqlite`` + Chroma under ``chroma/``) or in memory
        when ``path`` is None. Pass ``records`` to share one RecordStore between namespaces."""
        from atlas.infra.records import RecordStore
        from atlas.infra.vector_index import ChromaVectorStore, InMemoryVectorStore

        check_namespace(namespace)
        if path is None:
            vectors: Any = InMemoryVectorStore(collection_name(namespace))
            records = records if records is not None else RecordStore(None)
        else:
            root = Path(path)
            if root.exists() and not root.is_dir():
                raise ConfigError(f"--path {root} exists and is not a directory")
            root.mkdir(parents=True, exist_ok=True)
            records = records if records is not None else RecordStore(root / "guidelines.sqlite")
            vectors = ChromaVectorStore.persistent(root / "chroma", collection_name(namespace))
        bank = cls(store=GuidelineStore(namespace, records, vectors), **kwargs)
        if path is not None:
            bank.repair()
        return bank

    def _lock(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        lock = self._locks.get(loop)
        if lock is None:
            lock = self._locks[loop] = asyncio.Lock()
        return lock

    async def _embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, int(getattr(self.embedder, "dim", 0) or 0)), dtype=np.float32)
        return np.asarray(await self.embedder.aembed(texts), dtype=np.float32)

    # --- saving -------------------------------------------------------------------------------------
    async def asave(self, trajectory: Any, *, success: bool | None = None) -> SaveResult:
        """Parse, extract tips, consolidate, store. Invalid input raises InvalidInputError before
        anything is written; an LLM stage that still fails after its re-asks records the trajectory
        as not processed (``SaveResult.status``) instead of raising."""
        traj = parse_trajectory(trajectory, success=success)
        prev = self.store.trajectory(traj.id)
        if prev and prev.get("status") == "processed":
            return SaveResult(
                traj.id,
                "duplicate",
                list(prev.get("guideline_ids", [])),
                prev.get("outcome"),
                reason="trajectory already processed",
            )
        return await self._process(traj, attempts=int(prev.get("attempts", 0)) + 1 if prev else 1)

    async def asave_trajectory(self, trajectory: Any, *, success: bool | None = None) -> list[str]:
        """Protocol form of ``asave``: the ids of the guidelines added or updated. An empty list means
        nothing new was learned; a trajectory that could not be processed raises ``LLMError`` (after
        it has been recorded for ``reprocess()``), so a caller never mistakes a failure for "nothing"."""
        result = await self.asave(trajectory, success=success)
        if result.status == "not_processed":
            raise LLMError(
                f"trajectory {result.trajectory_id} not processed ({result.reason}); "
                "it is recorded and reprocess() will retry it"
            )
        return result.guideline_ids

    def save(self, trajectory: Any, *, success: bool | None = None) -> SaveResult:
        return run_sync(self.asave(trajectory, success=success))

    def save_trajectory(self, trajectory: Any, *, success: bool | None = None) -> list[str]:
        return run_sync(self.asave_trajectory(trajectory, success=success))

    def enqueue(self, trajectory: Trajectory) -> bool:
        """Record a trajectory as waiting for extraction (status ``not_processed``, reason
        ``queued``, no attempt made) so that ``reprocess()`` finds it if whoever queued it stops
        before ``save``; False (nothing written) when the bank already has it."""
        if self.store.trajectory(trajectory.id) is not None:
            return False
        record = trajectory_record(trajectory, "not_processed", 0, None, None, [], "queued")
        self.store.put_trajectory(record)
        return True

    def _require_llm(self) -> None:
        missing = [
            n
            for n, s in (
                ("segmenter", self.segmenter),
                ("tip_generator", self.tip_generator),
                ("attributor", self.attributor),
            )
            if s is None
        ]
        if missing:
            raise ConfigError(
                f"extracting guidelines needs an LLM (missing: {', '.join(missing)}); pass llm= or --model"
            )

    async def _process(self, traj: Trajectory, attempts: int) -> SaveResult:
        self._require_llm()
        try:
            assert self.segmenter and self.tip_generator and self.attributor
            intel, attribution, groups = await extract(
                traj,
                analyzer=self.analyzer,
                attributor=self.attributor,
                segmenter=self.segmenter,
                generalizer=self.generalizer,
                tip_generator=self.tip_generator,
                rules=self.rules,
            )
            async with self._lock():
                commit, result = await stage("consolidation", self._consolidate_new(traj, groups))
                commit.trajectory = trajectory_record(
                    traj, "processed", attempts, intel, attribution, result.guideline_ids, None
                )
                await self.store.apply(commit)
        except StageFailed as exc:
            reason = str(exc)
            log.warning("trajectory %s not processed: %s", traj.id, reason)
            self.store.put_trajectory(
                trajectory_record(traj, "not_processed", attempts, None, None, [], reason)
            )
            return SaveResult(traj.id, "not_processed", reason=reason)
        result.outcome = intel.outcome
        result.subtasks = [desc for desc, _ in groups]
        return result

    async def _consolidate_new(
        self, traj: Trajectory, groups: list[tuple[str, list[Guideline]]]
    ) -> tuple[Commit, SaveResult]:
        cfg = self.config
        writes: dict[str, Guideline] = {}
        deletes: list[str] = []
        logged: list[DecisionRecord] = []
        pending: list[tuple[str, np.ndarray]] = []  # new tips of this trajectory, by subtask vector
        for desc, tips in groups:
            if not tips:
                continue
            svec = (await self._embed([desc]))[0]
            hits = await self.store.query(svec.tolist(), 2 * cfg.max_tips_per_cluster + 4, where={"key": "s"})
            ids = [gid for gid, _, score in hits if score >= cfg.cluster_threshold]
            ids += [gid for gid, v in pending if float(v @ svec) >= cfg.cluster_threshold and gid not in ids]
            existing = [
                g
                for g in (writes.get(i) or self.store.get(i) for i in dict.fromkeys(ids) if i not in deletes)
                if g is not None
            ]
            new_vecs = await self._embed([t.content for t in tips])
            ex_vecs = await self._embed([g.content for g in existing])
            sims = new_vecs @ ex_vecs.T if len(existing) else np.zeros((len(tips), 0), dtype=np.float32)
            plan = await self.decider.decide(desc, existing, tips, sims)
            for gid in plan.deletes:
                writes.pop(gid, None)
                deletes.append(gid)
            writes.update(plan.writes)
            for rec in plan.log:
                rec.trajectory_id = traj.id
                rec.subtask = desc
            logged.extend(plan.log)
            pending.extend((t.id, svec) for t in tips)
        fresh = {t.id for _, tips in groups for t in tips}
        raw = {gid: traj.task.description for gid in writes if gid in fresh}
        commit = await self._commit_for(list(writes.values()), deletes, logged, raw)
        touched = [
            r.guideline_id for r in logged if r.action in ("ADD", "UPDATE") and r.guideline_id in writes
        ]
        result = SaveResult(
            traj.id, "processed", list(dict.fromkeys(touched)), decisions=[r.to_dict() for r in logged]
        )
        return commit, result

    async def aimport_guidelines(self, guidelines: list[Guideline]) -> list[str]:
        """Add tips that were extracted elsewhere (an export, a benchmark), without an LLM: their
        subtask and ``metadata["task"]`` are generalized as the pipeline would and all keys
        indexed; no consolidation. Returns their ids."""
        g = self.rules.generalize_description
        raw = {x.id: str(x.metadata["task"]) for x in guidelines if x.metadata.get("task")}
        items = [
            x.model_copy(
                update={
                    "subtask": g(x.subtask) if x.subtask else None,
                    "metadata": {
                        **x.metadata,
                        **({"task": g(x.metadata["task"])} if x.metadata.get("task") else {}),
                    },
                }
            )
            for x in guidelines
        ]
        async with self._lock():
            await self.store.apply(await self._commit_for(items, [], [], raw))
        return [x.id for x in items]

    def import_guidelines(self, guidelines: list[Guideline]) -> list[str]:
        return run_sync(self.aimport_guidelines(guidelines))

    def _raw_task(self, g: Guideline, raw_tasks: dict[str, str] | None) -> str:
        """The task a tip was learned in, as written: given, from its first source trajectory's
        record, or (tips imported without one) its generalized task."""
        if raw_tasks and g.id in raw_tasks:
            return raw_tasks[g.id]
        for tid in g.source_trajectory_ids[:1]:
            rec = self.store.trajectory(tid)
            if rec and rec.get("task"):
                return str(rec["task"])
        return str(g.metadata.get("task") or g.subtask or g.content)

    async def _commit_for(
        self,
        writes: list[Guideline],
        deletes: list[str],
        logged: list[DecisionRecord],
        raw_tasks: dict[str, str] | None = None,
    ) -> Commit:
        texts_s = [g.subtask or g.trigger or g.content for g in writes]
        texts_t = [str(g.metadata.get("task") or g.subtask or g.content) for g in writes]
        texts_r = [self._raw_task(g, raw_tasks) for g in writes]
        vecs = await self._embed(texts_s + texts_t + texts_r)
        n = len(writes)
        upserts = [
            (
                g,
                {"s": vecs[i].tolist(), "t": vecs[n + i].tolist(), "r": vecs[2 * n + i].tolist()},
                {"s": texts_s[i], "t": texts_t[i], "r": texts_t[i]},  # no entity kept in clear
            )
            for i, g in enumerate(writes)
        ]
        return Commit(
            upserts=upserts,
            deletes=list(dict.fromkeys(deletes)),
            decisions=[{**r.to_dict(), "seq": j} for j, r in enumerate(logged)],
        )

    async def areprocess(self) -> list[SaveResult]:
        """Retry every trajectory recorded as not processed."""
        results = []
        for rec in self.store.trajectories():
            if rec.get("status") == "not_processed":
                traj = Trajectory.model_validate(rec["trajectory"])
                results.append(await self._process(traj, attempts=int(rec.get("attempts", 0)) + 1))
        return results

    def reprocess(self) -> list[SaveResult]:
        return run_sync(self.areprocess())

    def unprocessed(self) -> list[dict[str, Any]]:
        """Trajectories whose extraction failed: id, task, reason, attempts."""
        return [
            {k: r.get(k) for k in ("id", "task", "reason", "attempts", "saved_at")}
            for r in self.store.trajectories()
            if r.get("status") == "not_processed"
        ]

    async def arepair(self) -> dict[str, list[str]]:
        """Make the vectors agree with the records again after a crash between the SQLite commit
        and the vector write: guidelines missing a key vector are re-embedded, vectors of guidelines
        that no longer exist are removed. Cheap when nothing is wrong (one count)."""
        store = self.store
        guidelines = store.all()
        if await store.vectors.count() == len(KEYS) * len(guidelines):
            return {"reindexed": [], "removed": []}
        present = {v["id"] for v in await store.vectors.get(None)}
        known = {g.id for g in guidelines}
        stale = [vid for vid in present if vid.rsplit(":", 1)[0] not in known]
        missing = [g for g in guidelines if not {f"{g.id}:{k}" for k in KEYS} <= present]
        async with self._lock():
            if stale:
                await store.vectors.delete(stale)
            commit = await self._commit_for(missing, [], [])
            await store.apply(commit)  # re-puts the same records and (re)writes all key vectors
        if stale or missing:
            log.warning(
                "guideline store %s repaired: %d guideline(s) re-indexed, %d stale vector(s) removed",
                self.namespace,
                len(missing),
                len(stale),
            )
        return {"reindexed": [g.id for g in missing], "removed": stale}

    def repair(self) -> dict[str, list[str]]:
        return run_sync(self.arepair())

    # --- retrieval ----------------------------------------------------------------------------------
    def _retriever(self, mode: str | None) -> Retriever:
        mode = mode or self.config.retrieval_mode
        if mode == "cosine":
            return self.cosine
        if mode == "llm":
            if self.retriever is not None and self.retriever.name == "llm":
                return self.retriever
            if self.llm is None:
                raise ConfigError(
                    "retrieval mode 'llm' needs an LLM; pass llm= or --model, or use mode='cosine'"
                )
            cfg = self.config
            self.retriever = LLMSelector(
                self.llm,
                threshold=self.threshold,
                candidates=cfg.llm_candidates,
                candidate_threshold=cfg.llm_candidate_threshold,
                sure=relevance_floor(self.embedder, "guidelines_sure")
                if cfg.llm_sure is None
                else cfg.llm_sure,
                failure_weight=cfg.failure_weight,
                fallback=cfg.llm_fallback_to_cosine,
            )
            return self.retriever
        raise InvalidInputError(f"mode: must be 'cosine' or 'llm', got {mode!r}")

    async def aget_guidelines(
        self,
        task: Task | str,
        k: int | None = None,
        mode: str | None = None,
        filters: dict[str, Any] | None = None,
    ) -> list[Guideline]:
        """The tips that apply to ``task``, best first (``similarity`` filled). ``filters`` are
        equality filters on category, task_category, domain, evidence or priority."""
        text = task.description if isinstance(task, Task) else task
        if not isinstance(text, str) or not text.strip():
            raise InvalidInputError("task: must be a non-empty string")
        k = self.config.default_k if k is None else k
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise InvalidInputError(f"k: must be >= 1, got {k!r}")
        retriever = self._retriever(mode)
        allowed = {"category", "task_category", "domain", "evidence", "priority"}
        bad = set(filters or {}) - allowed
        if bad:
            raise InvalidInputError(f"filters.{sorted(bad)[0]}: unknown filter (allowed: {sorted(allowed)})")
        for name, value in (filters or {}).items():
            _check_choice(name, value)
        where = {**(filters or {})} or None
        query = self.rules.generalize_description(text) if self.config.generalize_queries else text
        vecs = await self._embed([query, text])
        return await retriever.retrieve(self.store, text, vecs[0].tolist(), k, where, vecs[1].tolist())

    def get_guidelines(
        self,
        task: Task | str,
        k: int | None = None,
        mode: str | None = None,
        filters: dict[str, Any] | None = None,
    ) -> list[Guideline]:
        return run_sync(self.aget_guidelines(task, k, mode, filters))

    # --- browsing and maintenance -------------------------------------------------------------------
    def list_guidelines(self, category: str | None = None, limit: int | None = None) -> list[Guideline]:
        """All guidelines (optionally of one category), strongest first."""
        if category is not None:
            _check_choice("category", category)
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
            raise InvalidInputError(f"limit: must be an integer >= 1 (or None for all), got {limit!r}")
        items = [g for g in self.store.all() if category is None or g.category == category]
        items.sort(key=rank_key, reverse=True)
        return items[:limit] if limit else items

    def get(self, guideline_id: str) -> Guideline | None:
        return self.store.get(guideline_id)

    def decisions(self) -> list[dict[str, Any]]:
        """The consolidation decision log (ADD / UPDATE / DELETE / NONE), oldest first."""
        return self.store.decisions()

    async def adelete_guideline(self, guideline_id: str) -> bool:
        g = self.store.get(guideline_id)
        if g is None:
            return False
        async with self._lock():
            rec = DecisionRecord(
                "DELETE", g.id, "deleted by the user", "user", target_id=g.id, content=g.content
            )
            await self.store.apply(Commit(deletes=[g.id], decisions=[rec.to_dict()]))
        return True

    def delete_guideline(self, guideline_id: str) -> bool:
        return run_sync(self.adelete_guideline(guideline_id))

    async def aremove_trajectory(self, trajectory_id: str) -> dict[str, list[str]]:
        """Forget a trajectory: tips that came only from it are deleted, the others lose it from
        their provenance and one point of support. Returns {"deleted": [...], "demoted": [...]}."""
        async with self._lock():
            plan = plan_forget(self.store.all(), trajectory_id)
            commit = await self._commit_for(list(plan.writes.values()), plan.deletes, plan.log)
            commit.trajectory_deletes = [trajectory_id] if self.store.trajectory(trajectory_id) else []
            await self.store.apply(commit)
        return {"deleted": plan.deletes, "demoted": list(plan.writes)}

    def remove_trajectory(self, trajectory_id: str) -> dict[str, list[str]]:
        return run_sync(self.aremove_trajectory(trajectory_id))

    async def aconsolidate(self, now: datetime | None = None) -> list[dict[str, Any]]:
        """Whole-bank maintenance (rule-based, no LLM): re-cluster subtask descriptions, merge
        near-duplicate tips inside each cluster, cap cluster size, and decay tips learned only from
        failures (priority −1 per ``failure_decay_days``; a low-priority, single-support one is
        deleted). Returns the logged decisions."""
        now = now or datetime.now(UTC)
        async with self._lock():
            items = sorted(self.store.all(), key=rank_key, reverse=True)
            plan = Plan()
            if items:
                svecs = await self._embed([g.subtask or g.trigger or g.content for g in items])
                cvecs = await self._embed([g.content for g in items])
                plan = plan_consolidation(items, svecs, cvecs, self.config, now)
            commit = await self._commit_for(list(plan.writes.values()), plan.deletes, plan.log)
            await self.store.apply(commit)
        return [r.to_dict() for r in plan.log]

    def consolidate(self, now: datetime | None = None) -> list[dict[str, Any]]:
        return run_sync(self.aconsolidate(now))

    def stats(self) -> dict[str, Any]:
        gls = self.store.all()
        trajs = self.store.trajectories()
        by_cat: dict[str, int] = {}
        for g in gls:
            by_cat[g.category] = by_cat.get(g.category, 0) + 1
        by_status: dict[str, int] = {}
        for t in trajs:
            by_status[t.get("status", "?")] = by_status.get(t.get("status", "?"), 0) + 1
        return {
            "namespace": self.namespace,
            "guidelines": len(gls),
            "by_category": by_cat,
            "trajectories": by_status,
            "decisions": len(self.store.decisions()),
        }


__all__ = ["GuidelineBank", "SaveResult", "SaveStatus"]
