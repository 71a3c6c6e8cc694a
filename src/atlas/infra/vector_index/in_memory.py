"""``InMemoryVectorStore``: exact cosine search with numpy over a growing float32 matrix; JSON snapshot
and restore. Used per design evaluation by the ALMA tools (dozens to thousands of vectors)."""

from __future__ import annotations

import asyncio
import base64
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np

from atlas.errors import InvalidInputError
from atlas.infra.vector_index.filters import _compile, _normalize_where
from atlas.infra.vector_index.inputs import _as_query, _prepare_add
from atlas.protocols.store import QueryResult

T = TypeVar("T")


# Offload in-memory searches to a thread only when the matrix is big enough to be worth it.
_OFFLOAD_CELLS = 2_000_000


# Below this many matrix cells, score with einsum (numpy's own single-threaded loop) instead of BLAS:
# OpenBLAS splits any gemv over ~9k cells across threads, and on a busy 2-core machine a descheduled
# worker thread turns a 0.05 ms product into a 10+ ms wait (measured here). Above it BLAS wins.
_EINSUM_CELLS = 8_000_000


def _matvec(mat: np.ndarray, q: np.ndarray) -> np.ndarray:
    if mat.size <= _EINSUM_CELLS:
        return np.einsum("ij,j->i", mat, q)
    return mat @ q


class InMemoryVectorStore:
    """Exact cosine search over a preallocated, doubling float32 matrix.

    Pure: vectors in, results out, no I/O. A re-entrant lock guards only the data operations, which
    are short; callers embed before calling. The first ``add`` fixes the dimension. Vectors are kept
    as given (``get`` returns them unchanged); norms are cached so a query is one matrix product.
    """

    def __init__(self, name: str = "default", *, dim: int | None = None, capacity: int = 64) -> None:
        self.name = name
        self._dim = dim
        self._lock = threading.RLock()
        self._ids: list[str] = []
        self._pos: dict[str, int] = {}
        self._docs: list[str] = []
        self._metas: list[dict[str, Any]] = []
        self._mask_cache: dict[str, np.ndarray] = {}
        cap = max(1, capacity)
        self._mat = np.zeros((cap, dim or 0), dtype=np.float32) if dim else None
        self._norms = np.zeros(cap, dtype=np.float32)

    @property
    def dim(self) -> int | None:
        return self._dim

    def __len__(self) -> int:
        return len(self._ids)

    # -- sync core ------------------------------------------------------------------------------

    def add_sync(
        self,
        ids: Sequence[str],
        embeddings: Any,
        metadatas: Sequence[Mapping[str, Any] | None] | None = None,
        documents: Sequence[str | None] | None = None,
    ) -> None:
        """Insert or replace ``ids`` with their vectors, metadata and documents."""
        with self._lock:
            ids, mat, metas, docs = _prepare_add(ids, embeddings, metadatas, documents, self._dim)
            if not ids:
                return
            self._mask_cache.clear()
            if self._dim is None:
                self._dim = int(mat.shape[1])
            self._reserve(len(self._ids) + len(ids))
            assert self._mat is not None
            norms = np.linalg.norm(mat, axis=1)
            for row, (i, meta, doc) in enumerate(zip(ids, metas, docs, strict=True)):
                pos = self._pos.get(i)
                if pos is None:
                    pos = len(self._ids)
                    self._pos[i] = pos
                    self._ids.append(i)
                    self._docs.append(doc)
                    self._metas.append(meta)
                else:
                    self._docs[pos] = doc
                    self._metas[pos] = meta
                self._mat[pos] = mat[row]
                self._norms[pos] = norms[row]

    def _reserve(self, need: int) -> None:
        cap = 0 if self._mat is None else self._mat.shape[0]
        if self._mat is not None and need <= cap and self._mat.shape[1] == self._dim:
            return
        new_cap = max(need, 2 * cap, 64)
        mat = np.zeros((new_cap, self._dim or 0), dtype=np.float32)
        norms = np.zeros(new_cap, dtype=np.float32)
        n = len(self._ids)
        if self._mat is not None and n:
            mat[:n] = self._mat[:n]
            norms[:n] = self._norms[:n]
        self._mat, self._norms = mat, norms

    def query_sync(self, embedding: Any, k: int = 5, where: Mapping[str, Any] | None = None) -> QueryResult:
        """The ``k`` nearest vectors by cosine similarity (ties: lower storage row first)."""
        clause = _normalize_where(where) if where else None
        if k <= 0:
            return QueryResult()
        with self._lock:
            n = len(self._ids)
            if n == 0 or self._mat is None:
                return QueryResult()
            q = _as_query(embedding, self._dim)
            if clause is None:
                rows = np.arange(n)
            else:
                rows = self._filter_rows(clause)
                if rows.size == 0:
                    return QueryResult()
            qn = float(np.linalg.norm(q))
            if clause is not None and rows.size * 8 < n:
                dots = _matvec(self._mat[rows], q)  # few rows: gathering them is cheaper than scoring all
            else:
                dots = _matvec(self._mat[:n], q)  # one product over everything, then pick (no big copy)
                if clause is not None:
                    dots = dots[rows]
            denom = self._norms[rows] * qn
            scores = np.divide(dots, denom, out=np.zeros_like(dots), where=denom > 0)
            kk = min(k, rows.size)
            top = np.argpartition(-scores, kk - 1)[:kk] if kk < rows.size else np.arange(rows.size)
            top = top[np.lexsort((rows[top], -scores[top]))]
            picked = rows[top]
            return QueryResult(
                ids=[self._ids[p] for p in picked],
                scores=[float(scores[t]) for t in top],
                documents=[self._docs[p] for p in picked],
                metadatas=[json.loads(json.dumps(self._metas[p])) for p in picked],
            )

    def _filter_rows(self, clause: dict[str, Any]) -> np.ndarray:
        """Row positions passing ``clause``; cached per filter until the next write, because a
        frozen memory is queried with the same few filters over and over."""
        key = json.dumps(clause, sort_keys=True)
        rows = self._mask_cache.get(key)
        if rows is None:
            pred = _compile(clause)
            rows = np.fromiter((p for p, m in enumerate(self._metas) if pred(m)), dtype=np.int64)
            if len(self._mask_cache) >= 32:
                self._mask_cache.pop(next(iter(self._mask_cache)))
            self._mask_cache[key] = rows
        return rows

    def delete_sync(self, ids: Sequence[str]) -> None:
        """Remove ``ids`` (unknown ids are ignored). The last row moves into each freed slot."""
        with self._lock:
            self._mask_cache.clear()
            for i in ids:
                pos = self._pos.pop(i, None)
                if pos is None:
                    continue
                last = len(self._ids) - 1
                if pos != last:
                    moved = self._ids[last]
                    self._ids[pos] = moved
                    self._docs[pos] = self._docs[last]
                    self._metas[pos] = self._metas[last]
                    assert self._mat is not None
                    self._mat[pos] = self._mat[last]
                    self._norms[pos] = self._norms[last]
                    self._pos[moved] = pos
                self._ids.pop()
                self._docs.pop()
                self._metas.pop()

    def get_sync(self, ids: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """Records ``{id, document, metadata, embedding}`` in the order asked. With ``ids=None``: all,
        in storage order (insertion order until a delete moves the last row into a freed slot)."""
        with self._lock:
            wanted = self._ids if ids is None else [i for i in ids if i in self._pos]
            out = []
            for i in wanted:
                p = self._pos[i]
                assert self._mat is not None
                out.append(
                    {
                        "id": i,
                        "document": self._docs[p],
                        "metadata": json.loads(json.dumps(self._metas[p])),
                        "embedding": self._mat[p].tolist(),
                    }
                )
            return out

    def count_sync(self) -> int:
        return len(self._ids)

    # -- async protocol -------------------------------------------------------------------------

    async def _call(self, fn: Callable[..., T], *args: Any) -> T:
        if self._mat is not None and len(self._ids) * (self._dim or 0) > _OFFLOAD_CELLS:
            return await asyncio.to_thread(fn, *args)
        return fn(*args)

    async def add(
        self,
        ids: list[str],
        embeddings: list[list[float]],
        metadatas: list[dict] | None = None,
        documents: list[str] | None = None,
    ) -> None:
        await self._call(self.add_sync, ids, embeddings, metadatas, documents)

    async def query(self, embedding: list[float], k: int = 5, where: dict | None = None) -> QueryResult:
        return await self._call(self.query_sync, embedding, k, where)

    async def delete(self, ids: list[str]) -> None:
        await self._call(self.delete_sync, ids)

    async def get(self, ids: list[str] | None = None) -> list[dict]:
        return await self._call(self.get_sync, ids)

    async def count(self) -> int:
        return self.count_sync()

    # -- snapshot -------------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """A JSON-safe dict holding everything; vectors as base64 little-endian float32 (exact)."""
        with self._lock:
            n = len(self._ids)
            raw = b"" if self._mat is None else self._mat[:n].astype("<f4").tobytes()
            return {
                "version": 1,
                "kind": "InMemoryVectorStore",
                "name": self.name,
                "dim": self._dim,
                "ids": list(self._ids),
                "documents": list(self._docs),
                "metadatas": json.loads(json.dumps(self._metas)),
                "embeddings_b64": base64.b64encode(raw).decode("ascii"),
            }

    @classmethod
    def from_snapshot(cls, data: Mapping[str, Any]) -> InMemoryVectorStore:
        """Rebuild a store from ``snapshot()`` output (``embeddings`` as float lists is accepted too)."""
        try:
            if data.get("version") != 1:
                raise InvalidInputError(f"unsupported vector store snapshot version {data.get('version')!r}")
            dim = data.get("dim")
            ids = list(data["ids"])
            store = cls(data.get("name", "default"), dim=dim, capacity=max(64, len(ids)))
            if not ids:
                return store
            if "embeddings_b64" in data:
                flat = np.frombuffer(base64.b64decode(data["embeddings_b64"]), dtype="<f4")
                mat = flat.reshape(len(ids), int(data["dim"])).astype(np.float32)
            else:
                mat = np.asarray(data["embeddings"], dtype=np.float32)
            store.add_sync(ids, mat, data.get("metadatas"), data.get("documents"))
            return store
        except (KeyError, TypeError, ValueError) as exc:
            raise InvalidInputError(f"corrupt vector store snapshot: {exc}") from exc
