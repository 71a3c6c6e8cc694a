"""IndexedTable: records and vectors are written together or not at all."""

from __future__ import annotations

import numpy as np
import pytest

from atlas.errors import StoreError
from atlas.infra.vector_index import InMemoryVectorStore
from atlas.memory.storage import IndexedTable


def _vec(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=(1, 8)).astype(np.float32)
    return v / np.linalg.norm(v)


def test_write_then_query_returns_record(records):
    table = IndexedTable(records, "t", InMemoryVectorStore())
    table.write([("a", {"x": 1})], _vec(1), [{"k": "v"}], ["doc"])
    assert table.get("a") == {"x": 1}
    hits = table.query(_vec(1)[0], 3)
    assert hits[0][0] == {"x": 1} and hits[0][1] == pytest.approx(1.0, abs=1e-5)


def test_failing_vector_write_rolls_back_records(records, failing_vectors):
    table = IndexedTable(records, "t", failing_vectors(fail_after=0))
    with pytest.raises(StoreError, match="injected"):
        table.write([("a", {"x": 1}), ("b", {"x": 2})], np.vstack([_vec(1), _vec(2)]), [{}, {}], ["a", "b"])
    assert table.count() == 0
    assert records.get("t", "a") is None


def test_failing_commit_removes_vectors(commit_failing_records):
    vectors = InMemoryVectorStore()
    table = IndexedTable(commit_failing_records, "t", vectors)
    commit_failing_records.armed = True
    with pytest.raises(StoreError, match="commit failed"):
        table.write([("a", {"x": 1})], _vec(1), [{}], ["a"])
    assert table.count() == 0
    assert vectors.count_sync() == 0


def test_extra_rows_share_the_transaction(records, failing_vectors):
    table = IndexedTable(records, "t", failing_vectors(fail_after=0))
    with pytest.raises(StoreError):
        table.write([("a", {"x": 1})], _vec(1), [{}], ["a"], extra=[("index", "h1", {"id": "a"})])
    assert records.get("index", "h1") is None


def test_orphan_vector_is_skipped_not_shown(records):
    vectors = InMemoryVectorStore()
    vectors.add_sync(["ghost"], _vec(3), [{}], ["ghost"])  # as if a process died before the commit
    table = IndexedTable(records, "t", vectors)
    table.write([("a", {"x": 1})], _vec(1), [{}], ["a"])
    assert [r for r, _ in table.query(_vec(3)[0], 5)] == [{"x": 1}]


def test_delete_removes_both(records):
    vectors = InMemoryVectorStore()
    table = IndexedTable(records, "t", vectors)
    table.write([("a", {"x": 1}), ("b", {"x": 2})], np.vstack([_vec(1), _vec(2)]), [{}, {}], ["a", "b"])
    assert table.delete(["a", "zzz"]) == 1
    assert table.count() == 1 and vectors.count_sync() == 1


def test_duplicate_ids_in_one_write_are_refused(records):
    table = IndexedTable(records, "t", InMemoryVectorStore())
    with pytest.raises(StoreError, match="duplicate"):
        table.write([("a", {}), ("a", {})], np.vstack([_vec(1), _vec(2)]), [{}, {}], ["a", "a"])
