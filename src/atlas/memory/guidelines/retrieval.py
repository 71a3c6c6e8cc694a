"""Stage 6, retrieval: which stored tips reach the agent for a new task.

- ``CosineRetriever`` (default): a tip's relevance to a task is the mean cosine over its three keys —
  the task as written against the task the tip was learned in, and the entity-stripped task against
  that task generalized and against the tip's generalized subtask. Averaging the views keeps a
  sibling task ("bring the lamp to room_D" for a tip learned on "bring the key to room_C") above the
  floor while one shared noun no longer lifts an unrelated task over it (one key alone did both).
  Tips at or above ``threshold`` (the relevance floor, calibrated per embedder) are kept, best k.
- ``LLMSelector``: a cosine pool (same floor unless told otherwise) and optional metadata filters,
  then one LLM call picks the tips that really apply (more consistent across task variants, per the
  seed). Candidates are shown under short ids (``g1``, ``g2``...) that small models copy reliably.
  Tips whose relevance reaches ``sure`` (calibrated above every unrelated query's best match) are
  kept without asking: a small model dropped sibling tasks' tips the embedder was certain of, and
  a pool of only sure tips costs no call.

Ranking multiplies cosine by ``failure_weight`` for tips learned only from failures, so tips from
successes outrank them; ties go to support and priority. The same advice stored under several
subtasks comes back once (the best-scoring copy). ``metadata['relevance']`` holds the raw cosine."""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

from atlas.core.types import Guideline
from atlas.errors import LLMError
from atlas.memory.guidelines.consolidate import rank_key
from atlas.memory.guidelines.prompts import stage_messages
from atlas.memory.guidelines.schemas import Selection, bounded
from atlas.memory.guidelines.store import GuidelineStore

if TYPE_CHECKING:
    from atlas.infra.llm.client import LLMClient

log = logging.getLogger(__name__)


def content_key(text: str) -> str:
    """What makes two tips "the same advice" at retrieval: case, punctuation and spacing ignored."""
    return " ".join(re.sub(r"[^\w\s]", " ", text.casefold()).split())


async def relevance(
    store: GuidelineStore, vector: list[float], raw_vector: list[float] | None, pool: int, where: dict | None
) -> dict[str, float]:
    """guideline id → mean cosine over its keys (``raw_vector`` against the task as written, ``vector``
    against the generalized keys), for the nearest ``pool`` keys of either query vector."""
    raw = vector if raw_vector is None else raw_vector
    ids = [gid for gid, _, _ in await store.query(vector, pool, where=where)]
    if raw_vector is not None:
        ids += [gid for gid, _, _ in await store.query(raw_vector, pool, where=where)]
    keys = await store.key_vectors(list(dict.fromkeys(ids)))
    q = {"s": np.asarray(vector, dtype=np.float32), "t": np.asarray(vector, dtype=np.float32)}
    q["r"] = np.asarray(raw, dtype=np.float32)
    out = {}
    for gid, vecs in keys.items():
        sims = [float(q[k] @ np.asarray(v, dtype=np.float32)) for k, v in vecs.items() if k in q and len(v)]
        if sims:
            out[gid] = sum(sims) / len(sims)
    return out


async def cosine_candidates(
    store: GuidelineStore,
    vector: list[float],
    k: int,
    threshold: float,
    failure_weight: float,
    where: dict | None = None,
    raw_vector: list[float] | None = None,
) -> list[Guideline]:
    """Guidelines whose relevance (see :func:`relevance`) is ≥ threshold, ranked, duplicates
    collapsed, at most k."""
    scores = await relevance(store, vector, raw_vector, max(4 * k, k + 8), where)
    best = {gid: s for gid, s in scores.items() if s >= threshold}
    found = []
    for g in store.get_many(list(best)):
        weight = failure_weight if g.evidence == "failure" else 1.0
        found.append((best[g.id] * weight, g))
    found.sort(key=lambda p: (p[0], rank_key(p[1])), reverse=True)
    out: list[Guideline] = []
    seen: set[str] = set()
    for s, g in found:
        key = content_key(g.content)
        if key in seen:
            continue
        seen.add(key)
        meta = {**g.metadata, "relevance": round(best[g.id], 4)}
        out.append(g.model_copy(update={"similarity": round(s, 4), "metadata": meta}))
        if len(out) == k:
            break
    return out


@runtime_checkable
class Retriever(Protocol):
    name: str

    async def retrieve(
        self,
        store: GuidelineStore,
        task_text: str,
        vector: list[float],
        k: int,
        where: dict | None = None,
        raw_vector: list[float] | None = None,
    ) -> list[Guideline]: ...


class CosineRetriever:
    name = "cosine"

    def __init__(self, threshold: float, failure_weight: float = 0.9) -> None:
        self.threshold = threshold
        self.failure_weight = failure_weight

    async def retrieve(
        self,
        store: GuidelineStore,
        task_text: str,
        vector: list[float],
        k: int,
        where: dict | None = None,
        raw_vector: list[float] | None = None,
    ) -> list[Guideline]:
        return await cosine_candidates(
            store, vector, k, self.threshold, self.failure_weight, where, raw_vector
        )


class LLMSelector:
    """One LLM call per task over a cosine candidate pool. If the reply is still invalid after the
    client's re-asks, falls back to cosine retrieval (``metadata['retrieval'] == 'cosine-fallback'``)
    unless ``fallback`` is False, in which case the LLMError propagates."""

    name = "llm"

    def __init__(
        self,
        llm: LLMClient,
        *,
        threshold: float,
        candidates: int = 15,
        candidate_threshold: float | None = None,
        sure: float = 2.0,
        failure_weight: float = 0.9,
        fallback: bool = True,
    ) -> None:
        self.llm = llm
        self.sure = sure
        self.candidates = candidates
        self.candidate_threshold = threshold if candidate_threshold is None else candidate_threshold
        self.threshold = threshold
        self.failure_weight = failure_weight
        self.fallback = fallback

    async def retrieve(
        self,
        store: GuidelineStore,
        task_text: str,
        vector: list[float],
        k: int,
        where: dict | None = None,
        raw_vector: list[float] | None = None,
    ) -> list[Guideline]:
        pool = await cosine_candidates(
            store, vector, self.candidates, self.candidate_threshold, self.failure_weight, where, raw_vector
        )
        if not pool:
            return []
        kept = [
            g.model_copy(update={"metadata": {**g.metadata, "retrieval": "sure"}})
            for g in pool
            if g.metadata.get("relevance", g.similarity or 0) >= self.sure
        ][:k]
        unsure = [g for g in pool if g.metadata.get("relevance", g.similarity or 0) < self.sure]
        if len(kept) == k or not unsure:
            return kept
        return kept + await self._select(task_text, unsure, k - len(kept))

    async def _select(self, task_text: str, pool: list[Guideline], k: int) -> list[Guideline]:
        """The LLM's pick of at most ``k`` of ``pool`` (cosine above the floor if its reply is unusable)."""
        alias = {f"g{i + 1}": g for i, g in enumerate(pool)}
        listing = "\n".join(
            f"- id={a} [{g.category}; {g.task_category}; evidence={g.evidence}; support={g.support}] "
            f"subtask: {g.subtask or '-'} | when: {g.trigger} | tip: {g.content}"
            for a, g in alias.items()
        )
        schema = bounded(Selection, candidate_ids=frozenset(alias))
        try:
            reply = await self.llm.astructured(
                stage_messages("select", task=task_text, candidates=listing, k=k), schema
            )
        except LLMError as exc:
            if not self.fallback:
                raise
            log.warning("LLM guideline selection failed, using cosine: %s", exc)
            fb = [g for g in pool if (g.similarity or 0) >= self.threshold][:k]
            return [
                g.model_copy(update={"metadata": {**g.metadata, "retrieval": "cosine-fallback"}}) for g in fb
            ]
        by_id = alias
        chosen = list(dict.fromkeys(reply.selected))[:k]
        return [
            by_id[i].model_copy(update={"metadata": {**by_id[i].metadata, "retrieval": "llm"}})
            for i in chosen
        ]


__all__ = ["CosineRetriever", "LLMSelector", "Retriever", "content_key", "cosine_candidates", "relevance"]
