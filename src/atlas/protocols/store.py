"""Storage seams: the vector store of the ATLAS seed (pure: vectors in, results out)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass
class QueryResult:
    """Nearest neighbours, best first. ``scores`` are cosine similarities (higher is closer),
    the same meaning on every backend."""

    ids: list[str] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)
    documents: list[str] = field(default_factory=list)
    metadatas: list[dict[str, Any]] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.ids)

    def rows(self) -> list[dict[str, Any]]:
        return [
            {"id": i, "score": s, "document": d, "metadata": m}
            for i, s, d, m in zip(self.ids, self.scores, self.documents, self.metadatas, strict=True)
        ]


@runtime_checkable
class VectorStore(Protocol):
    """One collection of vectors. ``where`` is an equality filter on metadata
    (``{"success": True}``; Chroma's ``$and``/``$in`` operators are accepted by both backends).

    Each async method has a blocking ``*_sync`` twin for callers that already run in a worker thread."""

    async def add(
        self, ids: list[str], embeddings: list[list[float]], metadatas: list[dict], documents: list[str]
    ) -> None: ...

    async def query(self, embedding: list[float], k: int, where: dict | None = None) -> QueryResult: ...

    async def delete(self, ids: list[str]) -> None: ...

    async def get(self, ids: list[str] | None = None) -> list[dict]: ...

    async def count(self) -> int: ...

    def add_sync(
        self,
        ids: Sequence[str],
        embeddings: Sequence[Sequence[float]],
        metadatas: Sequence[dict],
        documents: Sequence[str],
    ) -> None: ...

    def query_sync(self, embedding: Sequence[float], k: int, where: dict | None = None) -> QueryResult: ...

    def delete_sync(self, ids: Sequence[str]) -> None: ...

    def get_sync(self, ids: Sequence[str] | None = None) -> list[dict[str, Any]]: ...

    def count_sync(self) -> int: ...
