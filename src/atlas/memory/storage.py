"""Storage for the memory components: the vector-store seam and one rule for writing.

Each component keeps its records (the full pydantic objects) in a SQLite ``RecordStore`` table and
their embeddings in a ``VectorStore`` collection. Records are the source of truth; the vector index is
derived from them. :class:`IndexedTable` writes both or neither:

    open SQLite transaction → put records → add vectors → commit
      vector add fails  → the transaction rolls back (no record)
      commit fails      → the vectors just added are deleted again (no vector)

Searches read ids from the vector store and objects from SQLite; an id the vector store returns but
SQLite does not know (a process killed between the two writes) is skipped and logged, never shown.

The vector-store protocol and its implementations live in ``atlas.infra``; they are re-exported here
lazily so that importing ``atlas.memory`` does not import chromadb.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from atlas.errors import AtlasError, StoreError
from atlas.protocols.store import QueryResult, VectorStore

if TYPE_CHECKING:  # pragma: no cover - lazy re-exports, see __getattr__
    from atlas.infra.records import RecordStore
    from atlas.infra.vector_index import ChromaVectorStore, InMemoryVectorStore, make_vector_store

log = logging.getLogger(__name__)

_LAZY = {
    "ChromaVectorStore": "atlas.infra.vector_index",
    "InMemoryVectorStore": "atlas.infra.vector_index",
    "make_vector_store": "atlas.infra.vector_index",
    "RecordStore": "atlas.infra.records",
}


def __getattr__(name: str) -> Any:
    """Lazy re-exports of the infra stores (chromadb is heavy to import)."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(name)


def _as_lists(embeddings: np.ndarray | Sequence[Sequence[float]]) -> list[list[float]]:
    if isinstance(embeddings, np.ndarray):
        return embeddings.astype(np.float32).tolist()
    return [list(map(float, e)) for e in embeddings]


def clean_metadata(meta: dict[str, Any]) -> dict[str, Any]:
    """Chroma metadata accepts only str/int/float/bool values (no None, no nesting)."""
    out: dict[str, Any] = {}
    for key, value in meta.items():
        if value is None:
            continue
        if isinstance(value, bool | int | float | str):
            out[key] = value
        else:
            out[key] = str(value)
    return out


class IndexedTable:
    """A RecordStore table paired with a VectorStore collection, kept in agreement.

    All methods are synchronous and thread-safe (the RecordStore serializes transactions; a lock here
    keeps each record+vector pair together). Async callers run them with ``asyncio.to_thread`` after
    embedding outside any lock.
    """

    def __init__(self, records: RecordStore, table: str, vectors: VectorStore) -> None:
        self.records = records
        self.table = table
        self.vectors = vectors
        self._lock = threading.RLock()
        self.repaired = self.repair()

    def repair(self) -> int:
        """Delete vectors that have no record (a process killed between the vector add and the
        commit); returns how many. Cheap when nothing is wrong: it compares counts first. Runs in a
        write transaction, so a writer in another process is never mid-write while it looks."""
        with self._lock:
            try:
                with self.records.transaction():
                    if self.vectors.count_sync() <= self.records.count(self.table):
                        return 0
                    known = set(self.records.ids(self.table))
                    orphans = [row["id"] for row in self.vectors.get_sync(None) if row["id"] not in known]
                    if orphans:
                        self.vectors.delete_sync(orphans)
            except AtlasError:
                raise
            except Exception as exc:
                raise StoreError(f"repairing {self.table!r} failed: {exc}") from exc
        if orphans:
            log.warning(
                "removed %d vector(s) without a record from %s (interrupted write)", len(orphans), self.table
            )
        return len(orphans)

    # --- writes ----------------------------------------------------------------------------------
    def write(
        self,
        rows: Sequence[tuple[str, dict[str, Any]]],
        embeddings: np.ndarray | Sequence[Sequence[float]],
        metadatas: Sequence[dict[str, Any]],
        documents: Sequence[str],
        *,
        extra: Sequence[tuple[str, str, dict[str, Any]]] = (),
    ) -> None:
        """Put ``rows`` (id, record) and their vectors, all or nothing. Raises StoreError.

        ``extra`` rows ``(table, id, record)`` (secondary indexes) are written in the same transaction."""
        if not rows:
            return
        ids = [r[0] for r in rows]
        if len(set(ids)) != len(ids):
            raise StoreError(f"duplicate ids in one write to {self.table!r}")
        vectors = _as_lists(embeddings)
        metas = [clean_metadata(m) for m in metadatas]
        if not (len(ids) == len(vectors) == len(metas) == len(documents)):
            raise StoreError("rows, embeddings, metadatas and documents differ in length")
        vectors_added = False
        with self._lock:
            try:
                with self.records.transaction():
                    for rid, record in rows:
                        self.records.put(self.table, rid, record)
                    for table, rid, record in extra:
                        self.records.put(table, rid, record)
                    try:
                        self.vectors.add_sync(ids, vectors, metas, list(documents))
                    except AtlasError:
                        raise
                    except Exception as exc:  # third-party failure at the vector boundary
                        raise StoreError(f"vector write to {self.table!r} failed: {exc}") from exc
                    vectors_added = True
            except BaseException as exc:
                if vectors_added:  # the commit itself failed: take the vectors back out
                    self._undo_vectors(ids)
                if isinstance(exc, AtlasError | KeyboardInterrupt | SystemExit | asyncio.CancelledError):
                    raise
                raise StoreError(f"record write to {self.table!r} failed: {exc}") from exc

    def _undo_vectors(self, ids: list[str]) -> None:
        try:
            self.vectors.delete_sync(ids)
        except Exception as exc:  # report, do not mask the original error
            log.error("could not remove vectors %s from %s after a failed commit: %s", ids, self.table, exc)

    def delete(self, ids: Sequence[str]) -> int:
        """Delete records and vectors together; returns how many records existed."""
        ids = [i for i in ids]
        if not ids:
            return 0
        with self._lock:
            try:
                with self.records.transaction():
                    existing = [i for i in ids if self.records.delete(self.table, i)]
                    if existing:
                        self.vectors.delete_sync(existing)
            except AtlasError:
                raise
            except Exception as exc:
                raise StoreError(f"delete from {self.table!r} failed: {exc}") from exc
        return len(existing)

    def update(self, rid: str, fn: Callable[[dict[str, Any]], dict[str, Any]]) -> dict[str, Any]:
        """Atomic read-modify-write of one record (fields that are not embedded only)."""
        if self.records.get(self.table, rid) is None:
            raise KeyError(rid)
        return self.records.update(self.table, rid, fn)

    # --- reads -------------------------------------------------------------------------------------
    def get(self, rid: str) -> dict[str, Any] | None:
        return self.records.get(self.table, rid)

    def all(self) -> list[dict[str, Any]]:
        return self.records.all(self.table)

    def count(self) -> int:
        return self.records.count(self.table)

    def _live_query(self, vec: list[float], k: int, where: dict | None) -> QueryResult:
        """The ``k`` nearest vectors that have a record. A vector without one (the process died
        between the vector add and the SQLite commit) is skipped and the query widened, so such
        orphans never take a slot and hide a real record."""
        want = k
        while True:
            try:
                result = self.vectors.query_sync(vec, want, where)
            except AtlasError:
                raise
            except Exception as exc:
                raise StoreError(f"vector query on {self.table!r} failed: {exc}") from exc
            live = [j for j, rid in enumerate(result.ids) if self.records.get(self.table, rid) is not None]
            orphans = len(result.ids) - len(live)
            if orphans:
                log.warning(
                    "%d vector(s) in %s have no record (interrupted write?); skipped",
                    orphans,
                    self.table,
                )
            if len(live) >= k or len(result.ids) < want:  # enough, or the collection is exhausted
                live = live[:k]
                return QueryResult(
                    ids=[result.ids[j] for j in live],
                    scores=[result.scores[j] for j in live],
                    documents=[result.documents[j] for j in live] if result.documents else [],
                    metadatas=[result.metadatas[j] for j in live] if result.metadatas else [],
                )
            want = k + orphans

    @staticmethod
    def _vector(embedding: np.ndarray | Sequence[float]) -> list[float]:
        return embedding.astype(np.float32).tolist() if isinstance(embedding, np.ndarray) else list(embedding)

    def query_raw(
        self, embedding: np.ndarray | Sequence[float], k: int, where: dict | None = None
    ) -> QueryResult:
        """The vector store's answer (ids, scores, metadata) for the nearest ``k`` live records."""
        if k <= 0:
            return QueryResult()
        return self._live_query(self._vector(embedding), k, where)

    def query(
        self, embedding: np.ndarray | Sequence[float], k: int, where: dict | None = None
    ) -> list[tuple[dict, float]]:
        """Nearest records with their cosine similarity, best first; orphan vectors are skipped."""
        if k <= 0:
            return []
        result = self._live_query(self._vector(embedding), k, where)
        out: list[tuple[dict, float]] = []
        for rid, score in zip(result.ids, result.scores, strict=False):
            record = self.records.get(self.table, rid)
            if record is not None:  # deleted between the two reads
                out.append((record, float(score)))
        return out


__all__ = [
    "ChromaVectorStore",
    "InMemoryVectorStore",
    "IndexedTable",
    "QueryResult",
    "RecordStore",
    "VectorStore",
    "clean_metadata",
    "make_vector_store",
]
