"""What both vector stores accept: ids, embeddings (finite float32, one dimension), documents and
metadata (a JSON-safe deep copy), checked the same way before either backend stores anything."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from atlas.errors import InvalidInputError


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
