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

The package: ``inputs`` (what both stores accept), ``filters`` (``where``, one meaning everywhere),
``in_memory`` (``InMemoryVectorStore``) and ``chroma`` (``ChromaVectorStore``, ``make_vector_store``).
"""

from __future__ import annotations

from atlas.infra.vector_index.chroma import (
    CHROMA_BUILTIN_HNSW,
    DEFAULT_HNSW,
    JSON_MARKER,
    ChromaVectorStore,
    chroma_collection_name,
    make_vector_store,
)
from atlas.infra.vector_index.filters import matches_where
from atlas.infra.vector_index.in_memory import InMemoryVectorStore

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
