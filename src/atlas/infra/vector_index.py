"""Vector stores: pure (vectors in, results out), one collection per store, same meaning on every backend.

Two implementations of ``atlas.protocols.store.VectorStore``:

- ``InMemoryVectorStore`` — exact cosine search with numpy over a growing float32 matrix; JSON
  snapshot/restore. Used per design evaluation by the ALMA tools (dozens to thousands of vectors).
- ``ChromaVectorStore`` — Chroma 1.x collection (persistent directory, ephemeral, or a server via
  HttpClient), HNSW in cosine space, telemetry off, never Chroma's default embedding function.

Shared semantics (pinned by tests on both backends):

- ``scores`` are cosine similarities, best first (Chroma: ``1 - cosine distance``). A zero vector
  scores 0 against everything.
- ``add`` is an upsert that replaces the record whole (Chroma's ``add`` would silently ignore an
  existing id and its ``upsert`` would merge the old metadata keys into the new ones).
- ``where`` filters: ``{"key": value}`` equality (several keys = implicit ``$and``), operators
  ``$eq $ne $in $nin $gt $gte $lt $lte`` and ``$and``/``$or`` lists. Operands must be str/int/float/bool
  (lists of them for ``$in``/``$nin``). A missing key never matches ``$eq``/``$in``/comparisons and
  always matches ``$ne``/``$nin`` (Chroma's behaviour). ``True`` does not equal ``1``; ``1`` equals ``1.0``.
- Metadata values may be any JSON value. Chroma only stores str/int/float/bool, so ``None``, lists
  and dicts (and strings that happen to start with the marker) are stored as ``JSON_MARKER + json``
  strings and decoded on read; both backends round-trip the same dicts. Filters only look at scalar
  values: a list/dict/None value never equals (or is ``$in``) a scalar operand.
- ``documents`` default to ``""`` and metadata to ``{}``; ``get(ids)`` returns records in the
  requested order and skips unknown ids; ``delete`` of unknown ids is a no-op.

Chroma specifics: collections are created with ``configuration={"hnsw": {"space": "cosine",
**DEFAULT_HNSW}}`` (Chroma 1.x's configuration API; the legacy ``hnsw:*`` metadata keys are not used)
and ``embedding_function=None``. HNSW settings are fixed when a collection is created (Chroma 1.5
ignores a later ``ef_search`` change on a loaded index). Any collection name is accepted and mapped
to a valid, stable Chroma name (``chroma_collection_name``). Ephemeral stores get a unique suffix
because Chroma's in-process clients share one system. Filtered queries post-filter HNSW candidates
first and fall back to Chroma's filtered search (see ``ChromaVectorStore.query_sync``).

Embedding is the caller's job and must happen before calling the store (never under a lock).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import json
import re
import threading
import uuid
import weakref
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from atlas.errors import InvalidInputError, StoreError
from atlas.protocols.store import QueryResult, VectorStore

__all__ = [
    "CHROMA_BUILTIN_HNSW",
    "DEFAULT_HNSW",
    "JSON_MARKER",
    "ChromaVectorStore",
    "InMemoryVectorStore",
    "chroma_collection_name",
    "make_vector_store",
    "matches_where",
]

T = TypeVar("T")

#: Prefix of metadata values that were JSON-encoded because Chroma cannot store them natively.
JSON_MARKER = "__atlas_json__:"

#: Our default HNSW settings for Chroma collections: recall@5 >= 0.99 at 100k clustered 384-d
#: vectors with p50 <= 10 ms on a 2-core machine (see benchmarks/bench_retrieval.py).
DEFAULT_HNSW: dict[str, int] = {"max_neighbors": 32, "ef_construction": 200, "ef_search": 200}

#: Chroma's own defaults (M=16, ef_construction=100, ef_search=100), for comparison in benchmarks.
CHROMA_BUILTIN_HNSW: dict[str, int] = {}

_SCALAR = (str, int, float, bool)
_COMPARE_OPS = {"$gt", "$gte", "$lt", "$lte"}
_VALUE_OPS = {"$eq", "$ne", "$in", "$nin"} | _COMPARE_OPS
_CHROMA_NAME = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9._-]{1,510}[a-zA-Z0-9]$")

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


# ---------------------------------------------------------------------------------------------
# Input validation shared by both backends
# ---------------------------------------------------------------------------------------------


def _as_matrix(embeddings: Any, n: int | None = None, dim: int | None = None) -> np.ndarray:
    try:
        mat = np.asarray(embeddings, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"embeddings must be a list of equal-length float lists: {exc}") from exc
    if mat.ndim == 1 and n == 1:
        mat = mat[None, :]
    if mat.ndim != 2 or (n is not None and mat.shape[0] != n) or mat.shape[1] == 0:
        raise InvalidInputError(
            f"expected {n if n is not None else 'n'} embeddings, got array of shape {mat.shape}"
        )
    if dim is not None and mat.shape[1] != dim:
        raise InvalidInputError(
            f"embedding dimension {mat.shape[1]} does not match the store's dimension {dim}"
        )
    if not np.isfinite(mat).all():
        raise InvalidInputError("embeddings contain NaN or infinity")
    return mat


def _as_query(embedding: Any, dim: int | None) -> np.ndarray:
    q = _as_matrix([embedding] if np.ndim(embedding) == 1 else embedding, 1, dim)
    return q[0]


def _prepare_add(
    ids: Sequence[str],
    embeddings: Any,
    metadatas: Sequence[Mapping[str, Any] | None] | None,
    documents: Sequence[str | None] | None,
    dim: int | None,
) -> tuple[list[str], np.ndarray, list[dict[str, Any]], list[str]]:
    ids = list(ids)
    n = len(ids)
    if any(not isinstance(i, str) or not i for i in ids):
        raise InvalidInputError("ids must be non-empty strings")
    if len(set(ids)) != n:
        raise InvalidInputError("ids must be unique within one add()")
    metas = [{} for _ in range(n)] if metadatas is None else [_clean_meta(m) for m in metadatas]
    docs = ["" for _ in range(n)] if documents is None else ["" if d is None else d for d in documents]
    if len(metas) != n or len(docs) != n:
        raise InvalidInputError(f"add(): {n} ids but {len(metas)} metadatas and {len(docs)} documents")
    if any(not isinstance(d, str) for d in docs):
        raise InvalidInputError("documents must be strings")
    mat = _as_matrix(embeddings, n, dim) if n else np.zeros((0, dim or 1), np.float32)
    return ids, mat, metas, docs


def _clean_meta(meta: Mapping[str, Any] | None) -> dict[str, Any]:
    """A JSON-safe deep copy of one metadata dict (so stored data never aliases the caller's)."""
    if meta is None:
        return {}
    if not isinstance(meta, Mapping):
        raise InvalidInputError(f"metadata must be a dict, got {type(meta).__name__}")
    if any(not isinstance(k, str) or not k for k in meta):
        raise InvalidInputError("metadata keys must be non-empty strings")
    try:
        return json.loads(json.dumps(dict(meta), allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"metadata must be JSON-serializable: {exc}") from exc


def _check_operand(op: str, value: Any) -> None:
    if op in {"$in", "$nin"}:
        if not isinstance(value, list | tuple) or not value or any(not isinstance(v, _SCALAR) for v in value):
            raise InvalidInputError(f"{op} needs a non-empty list of str/int/float/bool, got {value!r}")
    elif op in _COMPARE_OPS:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise InvalidInputError(f"{op} needs a number, got {value!r}")
    elif not isinstance(value, _SCALAR):
        raise InvalidInputError(f"{op} needs a str/int/float/bool operand, got {value!r}")


def _normalize_where(where: Mapping[str, Any]) -> dict[str, Any]:
    """Validate a where-filter and rewrite it into Chroma's strict form (one operator per dict,
    ``$and``/``$or`` with at least two clauses, explicit ``$eq``)."""
    if not isinstance(where, Mapping) or not where:
        raise InvalidInputError(f"where must be a non-empty dict, got {where!r}")
    clauses: list[dict[str, Any]] = []
    for key, cond in where.items():
        if key in {"$and", "$or"}:
            if not isinstance(cond, list | tuple) or not cond:
                raise InvalidInputError(f"{key} needs a non-empty list of filters")
            subs = [_normalize_where(c) for c in cond]
            clauses.append(subs[0] if len(subs) == 1 else {key: subs})
        elif key.startswith("$"):
            raise InvalidInputError(f"unknown where operator {key!r}")
        elif isinstance(cond, Mapping):
            if len(cond) != 1:
                raise InvalidInputError(
                    f"filter on {key!r} must have exactly one operator, got {dict(cond)!r}"
                )
            ((op, value),) = cond.items()
            if op not in _VALUE_OPS:
                raise InvalidInputError(f"unknown operator {op!r} on {key!r}")
            _check_operand(op, value)
            clauses.append({key: {op: list(value) if isinstance(value, tuple) else value}})
        else:
            _check_operand("$eq", cond)
            clauses.append({key: {"$eq": cond}})
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}


def _same(a: Any, b: Any) -> bool:
    """Equality as Chroma sees it: bools only equal bools; ints and floats compare numerically."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return False


def _match(meta: Mapping[str, Any], where: Mapping[str, Any]) -> bool:
    ((key, cond),) = where.items()
    if key == "$and":
        return all(_match(meta, c) for c in cond)
    if key == "$or":
        return any(_match(meta, c) for c in cond)
    ((op, operand),) = cond.items()
    present = key in meta
    value = meta.get(key)
    if op == "$eq":
        return present and _same(value, operand)
    if op == "$ne":
        return not (present and _same(value, operand))
    if op == "$in":
        return present and any(_same(value, o) for o in operand)
    if op == "$nin":
        return not (present and any(_same(value, o) for o in operand))
    if not present or isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return {
        "$gt": value > operand,
        "$gte": value >= operand,
        "$lt": value < operand,
        "$lte": value <= operand,
    }[op]


_MISSING = object()


def _eq_pred(key: str, operand: Any) -> Callable[[Mapping[str, Any]], bool]:
    """A fast equality test with ``_same`` semantics, specialised on the operand's type."""
    if isinstance(operand, bool):
        return lambda m: m.get(key, _MISSING) is operand
    if isinstance(operand, str):
        return lambda m: m.get(key, _MISSING) == operand and type(m.get(key)) is str

    def num(m: Mapping[str, Any]) -> bool:
        v = m.get(key, _MISSING)
        return type(v) in (int, float) and v == operand

    return num


def _compile(clause: Mapping[str, Any]) -> Callable[[Mapping[str, Any]], bool]:
    """Turn a normalized filter into a predicate (same answers as ``_match``, far fewer steps)."""
    ((key, cond),) = clause.items()
    if key in {"$and", "$or"}:
        preds = [_compile(c) for c in cond]
        if key == "$and":
            return lambda m: all(p(m) for p in preds)
        return lambda m: any(p(m) for p in preds)
    ((op, operand),) = cond.items()
    if op == "$eq":
        return _eq_pred(key, operand)
    if op == "$ne":
        eq = _eq_pred(key, operand)
        return lambda m: not eq(m)
    if op in {"$in", "$nin"}:
        eqs = [_eq_pred(key, o) for o in operand]
        if op == "$in":
            return lambda m: any(e(m) for e in eqs)
        return lambda m: not any(e(m) for e in eqs)
    return lambda m: _match(m, clause)


def matches_where(metadata: Mapping[str, Any], where: Mapping[str, Any] | None) -> bool:
    """True when ``metadata`` passes the filter ``where`` (the semantics of both backends)."""
    return True if not where else _match(metadata, _normalize_where(where))


# ---------------------------------------------------------------------------------------------
# In-memory exact store
# ---------------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------------
# Chroma
# ---------------------------------------------------------------------------------------------


def _encode_meta(meta: dict[str, Any]) -> dict[str, Any] | None:
    """Chroma-storable metadata: scalars stay, everything else becomes ``JSON_MARKER + json``."""
    out: dict[str, Any] = {}
    for k, v in meta.items():
        if isinstance(v, _SCALAR) and not (isinstance(v, str) and v.startswith(JSON_MARKER)):
            out[k] = v
        else:
            out[k] = JSON_MARKER + json.dumps(v)
    return out or None  # Chroma rejects empty metadata dicts


def _decode_meta(meta: Mapping[str, Any] | None) -> dict[str, Any]:
    if not meta:
        return {}
    return {
        k: json.loads(v[len(JSON_MARKER) :]) if isinstance(v, str) and v.startswith(JSON_MARKER) else v
        for k, v in meta.items()
    }


def _encode_operand(value: Any) -> Any:
    if isinstance(value, str) and value.startswith(JSON_MARKER):
        return JSON_MARKER + json.dumps(value)
    if isinstance(value, list):
        return [_encode_operand(v) for v in value]
    return value


def _chroma_where(clause: dict[str, Any]) -> dict[str, Any]:
    """A normalized filter with string operands encoded the way ``_encode_meta`` stores them."""
    ((key, cond),) = clause.items()
    if key in {"$and", "$or"}:
        return {key: [_chroma_where(c) for c in cond]}
    ((op, value),) = cond.items()
    return {key: {op: _encode_operand(value)}}


def chroma_collection_name(name: str) -> str:
    """The Chroma collection name used for ``name``: ``name`` itself when Chroma accepts it
    (3-512 chars of ``[a-zA-Z0-9._-]``, alphanumeric at both ends), otherwise a sanitized form with
    a hash of the original (deterministic, so a persistent store reopens the same collection)."""
    if not isinstance(name, str) or not name:
        raise InvalidInputError(f"collection name must be a non-empty string, got {name!r}")
    if _CHROMA_NAME.match(name) and ".." not in name:
        return name
    digest = hashlib.sha1(name.encode("utf-8")).hexdigest()[:10]
    base = re.sub(r"[^a-zA-Z0-9._-]", "_", name).replace("..", "_")[:400].strip("._-")
    return f"{base}-{digest}" if base else f"c-{digest}"


def _chroma_settings() -> Any:
    from chromadb.config import Settings

    return Settings(anonymized_telemetry=False, allow_reset=False)


def _store_error(action: str, exc: BaseException) -> Exception:
    msg = str(exc)
    if "dimension" in msg.lower():
        return InvalidInputError(f"Chroma {action}: {msg}")
    return StoreError(f"Chroma {action} failed: {type(exc).__name__}: {msg}")


def _drop_collection(client: Any, name: str) -> None:
    """Finalizer of ephemeral stores: free the collection's memory in the shared in-process system."""
    # Best-effort cleanup during garbage collection: there is no caller to report a failure to.
    with contextlib.suppress(Exception):
        client.delete_collection(name)


class ChromaVectorStore:
    """A Chroma collection behind the VectorStore protocol.

    Build with ``persistent(path, collection)``, ``ephemeral(collection)`` or ``http(host, port,
    collection)``. Collections are created in cosine space with ``DEFAULT_HNSW`` (or ``hnsw=``) and
    ``embedding_function=None``: every vector comes from the caller. An existing collection keeps
    the settings it was created with (its space must be cosine). Async methods run the blocking
    Chroma calls in a worker thread; chromadb exceptions become ``StoreError``.
    """

    def __init__(
        self,
        client: Any,
        collection: str,
        *,
        hnsw: Mapping[str, int] | None = None,
        chroma_name: str | None = None,
        drop_on_close: bool = False,
        post_filter_factor: int = 8,
    ) -> None:
        self.name = collection
        self.post_filter_factor = post_filter_factor
        self.chroma_name = chroma_name or chroma_collection_name(collection)
        self._client = client
        self.hnsw = dict(DEFAULT_HNSW if hnsw is None else hnsw)
        config = {"hnsw": {"space": "cosine", **self.hnsw}}
        try:
            self._col = client.get_or_create_collection(
                self.chroma_name, configuration=config, embedding_function=None
            )
            space = ((self._col.configuration or {}).get("hnsw") or {}).get("space", "cosine")
        except Exception as exc:  # chromadb raises ChromaError, ValueError, TypeError, ...
            raise _store_error(f"open collection {self.chroma_name!r}", exc) from exc
        if space != "cosine":
            raise StoreError(
                f"Chroma collection {self.chroma_name!r} uses space {space!r}; ATLAS needs 'cosine' "
                "(scores are cosine similarities). Use another collection name."
            )
        try:
            self._max_batch = max(1, int(client.get_max_batch_size()))
        except Exception:  # older servers do not report it; Chroma's documented minimum is fine
            self._max_batch = 1000
        self._finalizer: weakref.finalize | None = None
        if drop_on_close:
            self._finalizer = weakref.finalize(self, _drop_collection, client, self.chroma_name)
            self._finalizer.atexit = False

    # -- constructors ---------------------------------------------------------------------------

    @classmethod
    def persistent(
        cls, path: str | Path, collection: str = "default", *, hnsw: Mapping[str, int] | None = None
    ) -> ChromaVectorStore:
        """A collection stored on disk under ``path`` (created if needed; reopening keeps the data)."""
        try:
            import chromadb

            Path(path).mkdir(parents=True, exist_ok=True)
            client = chromadb.PersistentClient(path=str(path), settings=_chroma_settings())
        except Exception as exc:
            raise StoreError(f"cannot open a Chroma store in {path}: {exc}") from exc
        return cls(client, collection, hnsw=hnsw)

    @classmethod
    def ephemeral(
        cls, collection: str = "default", *, hnsw: Mapping[str, int] | None = None
    ) -> ChromaVectorStore:
        """An in-process, in-memory collection.

        Chroma's EphemeralClient instances share one system per process, so the real collection
        name gets a unique suffix (``chroma_name``); the collection is dropped when the store is
        garbage collected or ``close()`` is called. Two ephemeral stores never see each other's data.
        """
        try:
            import chromadb

            client = chromadb.EphemeralClient(settings=_chroma_settings())
        except Exception as exc:
            raise StoreError(f"cannot start an in-memory Chroma: {exc}") from exc
        unique = f"{chroma_collection_name(collection)[:480]}-{uuid.uuid4().hex[:12]}"
        return cls(client, collection, hnsw=hnsw, chroma_name=unique, drop_on_close=True)

    @classmethod
    def http(
        cls,
        host: str,
        port: int,
        collection: str = "default",
        *,
        ssl: bool = False,
        headers: Mapping[str, str] | None = None,
        hnsw: Mapping[str, int] | None = None,
    ) -> ChromaVectorStore:
        """A collection on a Chroma server (``chroma run --path DIR --port PORT``)."""
        try:
            import chromadb

            client = chromadb.HttpClient(
                host=host, port=port, ssl=ssl, headers=dict(headers or {}), settings=_chroma_settings()
            )
            client.heartbeat()
        except Exception as exc:
            raise StoreError(
                f"cannot reach a Chroma server at {host}:{port} ({type(exc).__name__}: {exc}). "
                f"Fix: start one with `chroma run --path ./chroma --port {port}` or check host/port"
            ) from exc
        return cls(client, collection, hnsw=hnsw)

    # -- sync core ------------------------------------------------------------------------------

    def add_sync(
        self,
        ids: Sequence[str],
        embeddings: Any,
        metadatas: Sequence[Mapping[str, Any] | None] | None = None,
        documents: Sequence[str | None] | None = None,
    ) -> None:
        """Insert or replace ``ids`` whole (in chunks of Chroma's max batch size)."""
        ids, mat, metas, docs = _prepare_add(ids, embeddings, metadatas, documents, None)
        if not ids:
            return
        encoded = [_encode_meta(m) for m in metas]
        step = self._max_batch
        try:
            # Chroma's upsert merges metadata into the old record; ATLAS replaces records whole,
            # so existing ids are deleted first.
            for s in range(0, len(ids), step):
                existing = self._col.get(ids=ids[s : s + step], include=[])["ids"]
                if existing:
                    self._col.delete(ids=list(existing))
            for s in range(0, len(ids), step):
                self._col.add(
                    ids=ids[s : s + step],
                    embeddings=mat[s : s + step],
                    metadatas=encoded[s : s + step],
                    documents=docs[s : s + step],
                )
        except Exception as exc:
            raise _store_error("add", exc) from exc

    def query_sync(self, embedding: Any, k: int = 5, where: Mapping[str, Any] | None = None) -> QueryResult:
        """The ``k`` nearest vectors; scores = 1 - cosine distance = cosine similarity.

        With a filter, HNSW is first asked for the ``post_filter_factor * k`` (at least 32) nearest
        vectors without it and those passing the filter are kept (same semantics, in Python). If at
        least ``k`` pass, or the collection holds fewer vectors than were asked for, that is the
        answer. Otherwise Chroma's own filtered search runs; it first reads every matching id from
        SQLite, which costs hundreds of ms at 100k vectors with a broad filter.
        """
        clause = _normalize_where(where) if where else None
        if k <= 0:
            return QueryResult()
        q = _as_query(embedding, None)
        if clause is not None and self.post_filter_factor > 0:
            n = max(k * self.post_filter_factor, 32)
            cand = self._query(q, n, None)
            pred = _compile(clause)
            keep = [i for i, m in enumerate(cand.metadatas) if pred(m)]
            if len(keep) >= k or len(cand) < n:
                keep = keep[:k]
                return QueryResult(
                    ids=[cand.ids[i] for i in keep],
                    scores=[cand.scores[i] for i in keep],
                    documents=[cand.documents[i] for i in keep],
                    metadatas=[cand.metadatas[i] for i in keep],
                )
        return self._query(q, k, None if clause is None else _chroma_where(clause))

    def _query(self, q: np.ndarray, k: int, where: dict[str, Any] | None) -> QueryResult:
        try:
            res = self._col.query(
                query_embeddings=q[None, :],
                n_results=int(k),
                where=where,
                include=["documents", "metadatas", "distances"],
            )
        except Exception as exc:
            raise _store_error("query", exc) from exc
        ids = res["ids"][0] if res.get("ids") else []
        dists = (res.get("distances") or [[]])[0]
        docs = (res.get("documents") or [[None] * len(ids)])[0]
        metas = (res.get("metadatas") or [[None] * len(ids)])[0]
        return QueryResult(
            ids=list(ids),
            scores=[1.0 - float(d) for d in dists],
            documents=[d or "" for d in docs],
            metadatas=[_decode_meta(m) for m in metas],
        )

    def delete_sync(self, ids: Sequence[str]) -> None:
        ids = list(ids)
        if not ids:
            return
        try:
            self._col.delete(ids=ids)
        except Exception as exc:
            raise _store_error("delete", exc) from exc

    def get_sync(self, ids: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """Records ``{id, document, metadata, embedding}`` in the order asked (all when ``ids`` is None)."""
        if ids is not None and not list(ids):
            return []
        try:
            res = self._col.get(
                ids=None if ids is None else list(ids), include=["documents", "metadatas", "embeddings"]
            )
        except Exception as exc:
            raise _store_error("get", exc) from exc
        embs = res.get("embeddings")
        by_id = {
            i: {
                "id": i,
                "document": (res["documents"][n] if res.get("documents") else None) or "",
                "metadata": _decode_meta(res["metadatas"][n] if res.get("metadatas") else None),
                "embedding": [] if embs is None else np.asarray(embs[n], dtype=np.float32).tolist(),
            }
            for n, i in enumerate(res["ids"])
        }
        order = res["ids"] if ids is None else [i for i in ids if i in by_id]
        return [by_id[i] for i in order]

    def count_sync(self) -> int:
        try:
            return int(self._col.count())
        except Exception as exc:
            raise _store_error("count", exc) from exc

    def close(self) -> None:
        """Drop an ephemeral collection now (persistent and server collections are kept)."""
        if self._finalizer is not None:
            self._finalizer()

    # -- async protocol -------------------------------------------------------------------------

    async def add(
        self,
        ids: list[str],
        embeddings: list[list[float]],
        metadatas: list[dict] | None = None,
        documents: list[str] | None = None,
    ) -> None:
        await asyncio.to_thread(self.add_sync, ids, embeddings, metadatas, documents)

    async def query(self, embedding: list[float], k: int = 5, where: dict | None = None) -> QueryResult:
        return await asyncio.to_thread(self.query_sync, embedding, k, where)

    async def delete(self, ids: list[str]) -> None:
        await asyncio.to_thread(self.delete_sync, ids)

    async def get(self, ids: list[str] | None = None) -> list[dict]:
        return await asyncio.to_thread(self.get_sync, ids)

    async def count(self) -> int:
        return await asyncio.to_thread(self.count_sync)


def make_vector_store(
    path: str | Path | None, collection: str, *, hnsw: Mapping[str, int] | None = None
) -> VectorStore:
    """A Chroma store: persistent under ``path``, or ephemeral (in-memory, private) when ``path`` is None."""
    if path is None:
        return ChromaVectorStore.ephemeral(collection, hnsw=hnsw)
    return ChromaVectorStore.persistent(path, collection, hnsw=hnsw)
