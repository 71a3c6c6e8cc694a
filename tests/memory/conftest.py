"""Fixtures for the memory-library tests: trajectories, real stores, and a vector store that fails."""

from __future__ import annotations

import pytest

from atlas.core.types import Step, Task, Trajectory
from atlas.errors import StoreError
from atlas.infra.records import RecordStore
from atlas.infra.vector_index import ChromaVectorStore, InMemoryVectorStore


def make_traj(
    description: str,
    success: bool = True,
    *,
    steps: list[str] | None = None,
    code: str | None = None,
    domain: str = "generic",
    score: float | None = None,
) -> Trajectory:
    acts = steps if steps is not None else ["look()", 'move_to(room="room_B")']
    return Trajectory(
        task=Task(description=description, domain=domain),
        steps=[Step(action=a, observation=f"did {a}") for a in acts],
        success=success,
        score=(0.8 if success else 0.0) if score is None else score,
        metadata={"code": code} if code else {},
    )


class FailingVectorStore(InMemoryVectorStore):
    """A real in-memory vector store whose writes fail after ``fail_after`` successful adds."""

    def __init__(self, fail_after: int = 0) -> None:
        super().__init__("failing")
        self.fail_after = fail_after
        self.adds = 0

    def add_sync(self, ids, embeddings, metadatas=None, documents=None):
        if self.adds >= self.fail_after:
            raise StoreError("disk full (injected)")
        self.adds += 1
        return super().add_sync(ids, embeddings, metadatas, documents)

    async def add(self, ids, embeddings, metadatas=None, documents=None):
        self.add_sync(ids, embeddings, metadatas, documents)


class CommitFailingRecordStore(RecordStore):
    """A real SQLite record store whose transactions fail at commit time while ``armed``."""

    armed = False

    def transaction(self):  # type: ignore[override]
        from contextlib import contextmanager

        parent = super().transaction

        @contextmanager
        def tx():
            with parent() as store:
                yield store
                if self.armed:
                    raise StoreError("commit failed (injected)")

        return tx()


@pytest.fixture
def records():
    store = RecordStore(None)
    yield store
    store.close()


@pytest.fixture
def chroma():
    """A factory of private ephemeral Chroma collections."""
    made: list[ChromaVectorStore] = []

    def make(name: str = "test") -> ChromaVectorStore:
        store = ChromaVectorStore.ephemeral(name)
        made.append(store)
        return store

    yield make
    for s in made:
        s.close()


@pytest.fixture
def traj():
    """``traj(description, success=True, steps=..., code=..., domain=...)`` → a Trajectory."""
    return make_traj


@pytest.fixture
def failing_vectors():
    return FailingVectorStore


@pytest.fixture
def commit_failing_records():
    store = CommitFailingRecordStore(None)
    yield store
    store.close()
