"""``ChromaVectorStore``: a Chroma 1.x collection (persistent directory, ephemeral, or a server via
HttpClient), HNSW in cosine space, telemetry off, never Chroma's default embedding function; how
metadata Chroma cannot store is encoded; ``make_vector_store``."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import re
import uuid
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from atlas.errors import InvalidInputError, StoreError
from atlas.infra.vector_index.filters import _SCALAR, _compile, _normalize_where
from atlas.infra.vector_index.inputs import _as_query, _prepare_add
from atlas.protocols.store import QueryResult, VectorStore

if TYPE_CHECKING:
    from chromadb.api import ClientAPI, CreateCollectionConfiguration

#: Prefix of metadata values that were JSON-encoded because Chroma cannot store them natively.
JSON_MARKER = "__atlas_json__:"


#: Our default HNSW settings for Chroma collections: recall@5 >= 0.99 at 100k clustered 384-d
#: vectors with p50 <= 10 ms on a 2-core machine (see benchmarks/bench_retrieval.py).
DEFAULT_HNSW: dict[str, int] = {"max_neighbors": 32, "ef_construction": 200, "ef_search": 200}


#: Chroma's own defaults (M=16, ef_construction=100, ef_search=100), for comparison in benchmarks.
CHROMA_BUILTIN_HNSW: dict[str, int] = {}


_CHROMA_NAME = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9._-]{1,510}[a-zA-Z0-9]$")


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


def _forget_failed_system(path: str) -> None:
    """chromadb keeps the system of a path even when starting it failed, and the next client on
    that path then fails with "'RustBindingsAPI' object has no attribute 'bindings'" instead of the
    real reason: forget it, so every attempt reports the real reason."""
    with contextlib.suppress(Exception):  # chromadb internals; at worst the old message comes back
        from chromadb.api.shared_system_client import SharedSystemClient

        SharedSystemClient._identifier_to_system.pop(path, None)


def _drop_collection(client: ClientAPI, name: str) -> None:
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
        client: ClientAPI,
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
        config = cast("CreateCollectionConfiguration", {"hnsw": {"space": "cosine", **self.hnsw}})
        # the collection's own stubs are looser than what it returns; every reply is checked here
        self._col: Any
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
            _forget_failed_system(str(path))
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
