"""Storage seams: the vector store of the ATLAS seed (pure: vectors in, results out)."""

from __future__ import annotations

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
    (``{"success": True}``; Chroma's ``$and``/``$in`` operators are accepted by both backends)."""

    async def add(
        self, ids: list[str], embeddings: list[list[float]], metadatas: list[dict], documents: list[str]
    ) -> None: ...

    async def query(self, embedding: list[float], k: int, where: dict | None = None) -> QueryResult: ...

    async def delete(self, ids: list[str]) -> None: ...

    async def get(self, ids: list[str]) -> list[dict]: ...

    async def count(self) -> int: ...
