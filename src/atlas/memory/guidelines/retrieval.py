"""Stage 6, retrieval: which stored tips reach the agent for a new task.

- ``CosineRetriever`` (default): embed the (entity-stripped) task, keep keys with cosine ≥
  ``threshold``, best k. No LLM call, milliseconds.
- ``LLMSelector``: a cosine pool with a looser threshold and optional metadata filters, then one
  LLM call picks the tips that really apply (more consistent across task variants, per the seed).

Ranking multiplies cosine by ``failure_weight`` for tips learned only from failures, so tips from
successes outrank them; ties go to support and priority."""

from __future__ import annotations

import logging
from typing import Any, Protocol, runtime_checkable

from atlas.core.types import Guideline
from atlas.errors import LLMError
from atlas.memory.guidelines.consolidate import rank_key
from atlas.memory.guidelines.prompts import stage_messages
from atlas.memory.guidelines.schemas import Selection, bounded
from atlas.memory.guidelines.store import GuidelineStore

log = logging.getLogger(__name__)


async def cosine_candidates(
    store: GuidelineStore,
    vector: list[float],
    k: int,
    threshold: float,
    failure_weight: float,
    where: dict | None = None,
) -> list[Guideline]:
    """Guidelines whose best key matches with cosine ≥ threshold, ranked, at most k."""
    hits = await store.query(vector, max(4 * k, k + 8), where=where)
    best: dict[str, float] = {}
    for gid, _key, score in hits:
        if score >= threshold and score > best.get(gid, -2.0):
            best[gid] = score
    found = []
    for g in store.get_many(list(best)):
        weight = failure_weight if g.evidence == "failure" else 1.0
        found.append((best[g.id] * weight, g))
    found.sort(key=lambda p: (p[0], rank_key(p[1])), reverse=True)
    return [g.model_copy(update={"similarity": round(s, 4)}) for s, g in found[:k]]


@runtime_checkable
class Retriever(Protocol):
    name: str

    async def retrieve(
        self, store: GuidelineStore, task_text: str, vector: list[float], k: int, where: dict | None = None
    ) -> list[Guideline]: ...


class CosineRetriever:
    name = "cosine"

    def __init__(self, threshold: float = 0.6, failure_weight: float = 0.9) -> None:
        self.threshold = threshold
        self.failure_weight = failure_weight

    async def retrieve(
        self, store: GuidelineStore, task_text: str, vector: list[float], k: int, where: dict | None = None
    ) -> list[Guideline]:
        return await cosine_candidates(store, vector, k, self.threshold, self.failure_weight, where)


class LLMSelector:
    """One LLM call per task over a cosine candidate pool. If the reply is still invalid after the
    client's re-asks, falls back to cosine retrieval (``metadata['retrieval'] == 'cosine-fallback'``)
    unless ``fallback`` is False, in which case the LLMError propagates."""

    name = "llm"

    def __init__(
        self,
        llm: Any,
        *,
        candidates: int = 15,
        candidate_threshold: float = 0.3,
        threshold: float = 0.6,
        failure_weight: float = 0.9,
        fallback: bool = True,
    ) -> None:
        self.llm = llm
        self.candidates = candidates
        self.candidate_threshold = candidate_threshold
        self.threshold = threshold
        self.failure_weight = failure_weight
        self.fallback = fallback

    async def retrieve(
        self, store: GuidelineStore, task_text: str, vector: list[float], k: int, where: dict | None = None
    ) -> list[Guideline]:
        pool = await cosine_candidates(
            store, vector, self.candidates, self.candidate_threshold, self.failure_weight, where
        )
        if not pool:
            return []
        listing = "\n".join(
            f"- id={g.id} [{g.category}; {g.task_category}; evidence={g.evidence}; support={g.support}] "
            f"subtask: {g.subtask or '-'} | when: {g.trigger} | tip: {g.content}"
            for g in pool
        )
        schema = bounded(Selection, candidate_ids=frozenset(g.id for g in pool))
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
        by_id = {g.id: g for g in pool}
        chosen = list(dict.fromkeys(reply.selected))[:k]
        return [
            by_id[i].model_copy(update={"metadata": {**by_id[i].metadata, "retrieval": "llm"}})
            for i in chosen
        ]


__all__ = ["CosineRetriever", "LLMSelector", "Retriever", "cosine_candidates"]
