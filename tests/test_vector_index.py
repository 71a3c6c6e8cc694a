"""atlas.infra.vector_index: both backends against the same expectations, real Chroma throughout."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from atlas.errors import InvalidInputError, StoreError
from atlas.infra.vector_index import (
    DEFAULT_HNSW,
    JSON_MARKER,
    ChromaVectorStore,
    InMemoryVectorStore,
    chroma_collection_name,
    make_vector_store,
    matches_where,
)
from atlas.protocols.store import VectorStore


def _chroma_native() -> ChromaVectorStore:
    """Chroma with post-filtering off: every filtered query runs Chroma's own where-search."""
    s = ChromaVectorStore.ephemeral("t")
    s.post_filter_factor = 0
    return s


BACKENDS: dict[str, Callable[[], VectorStore]] = {
    "memory": lambda: InMemoryVectorStore("t"),
    "chroma": lambda: ChromaVectorStore.ephemeral("t"),
    "chroma-native-filter": _chroma_native,
}

METAS = [
    {"room": "kitchen", "success": True, "steps": 3, "tags": ["a", "b"]},
    {"room": "hall", "success": False, "steps": 7},
    {"room": "kitchen", "success": False, "steps": 12, "extra": {"k": [1, None]}},
    {"room": "garden", "success": True, "steps": 5.5, "note": None},
    {},
    {"room": "hall", "success": 1, "text": JSON_MARKER + "looks encoded"},
]


def _data(n: int = 6, dim: int = 8, seed: int = 0) -> tuple[list[str], np.ndarray]:
    rng = np.random.default_rng(seed)
    return [f"id{i}" for i in range(n)], rng.normal(size=(n, dim)).astype(np.float32)


@pytest.fixture(params=sorted(BACKENDS))
def store(request) -> VectorStore:
    s = BACKENDS[request.param]()
    ids, vecs = _data()
    s.add_sync(ids, vecs, METAS, [f"doc {i}" for i in ids])
    yield s
    if isinstance(s, ChromaVectorStore):
        s.close()


def _exact(vecs: np.ndarray, q: np.ndarray) -> np.ndarray:
    return (vecs @ q) / (np.linalg.norm(vecs, axis=1) * np.linalg.norm(q))


def test_both_backends_implement_the_protocol(store) -> None:
    assert isinstance(store, VectorStore)


def test_scores_are_cosine_similarities_best_first(store) -> None:
    ids, vecs = _data()
    q = vecs[2] + 0.1
    res = store.query_sync(q, k=6)
    want = _exact(vecs, q)
    order = np.argsort(-want)
    assert res.ids == [ids[i] for i in order]
    np.testing.assert_allclose(res.scores, want[order], atol=1e-5)
    assert res.documents[0] == f"doc {ids[order[0]]}"
    assert store.query_sync(vecs[4], k=1).scores[0] == pytest.approx(1.0, abs=1e-5)
    assert len(store.query_sync(q, k=100)) == 6
    assert len(store.query_sync(q, k=0)) == 0


def test_metadata_round_trips_exactly(store) -> None:
    recs = store.get_sync([f"id{i}" for i in range(6)])
    assert [r["metadata"] for r in recs] == METAS
    res = store.query_sync(_data()[1][2], k=1)
    assert res.metadatas == [METAS[2]]


def test_get_keeps_requested_order_and_skips_unknown(store) -> None:
    ids, vecs = _data()
    recs = store.get_sync(["id3", "nope", "id0"])
    assert [r["id"] for r in recs] == ["id3", "id0"]
    np.testing.assert_allclose(recs[0]["embedding"], vecs[3], atol=1e-6)
    assert recs[1]["document"] == "doc id0"
    assert [r["id"] for r in store.get_sync()] == ids
    assert store.get_sync([]) == []


WHERES = [
    {"room": "kitchen"},
    {"room": "kitchen", "success": False},
    {"success": True},
    {"success": 1},  # True is not 1 (Chroma's rule), only id5 matches
    {"steps": 3.0},  # ints and floats compare numerically
    {"room": {"$ne": "hall"}},  # a missing key matches $ne
    {"room": {"$in": ["hall", "garden"]}},
    {"room": {"$nin": ["hall", "garden"]}},
    {"steps": {"$gte": 5.5}},
    {"steps": {"$lt": 5}},
    {"$or": [{"room": "garden"}, {"steps": {"$gt": 10}}]},
    {"$and": [{"room": {"$in": ["kitchen", "hall"]}}, {"success": {"$ne": True}}]},
    {"$and": [{"room": "hall"}]},
    {"room": "attic"},
    {"text": JSON_MARKER + "looks encoded"},  # encoded values never equal a scalar
    {"tags": "a"},
]


@pytest.mark.parametrize("where", WHERES, ids=[json.dumps(w) for w in WHERES])
def test_where_filters_agree_across_backends(where) -> None:
    ids, vecs = _data()
    q = vecs.mean(axis=0)
    results = {}
    for name, make in BACKENDS.items():
        s = make()
        s.add_sync(ids, vecs, METAS, None)
        results[name] = s.query_sync(q, k=10, where=where)
    mem = results.pop("memory")
    expected = [i for i, m in zip(ids, METAS, strict=True) if matches_where(m, where)]
    assert sorted(mem.ids) == sorted(expected)
    for chroma in results.values():
        assert mem.ids == chroma.ids
        np.testing.assert_allclose(mem.scores, chroma.scores, atol=1e-5)
        assert chroma.metadatas == mem.metadatas


@pytest.mark.parametrize("k", [1, 3, 10])
def test_chroma_post_filter_and_native_filter_agree_on_a_bigger_collection(k: int) -> None:
    ids, vecs = _data(300, 16, seed=5)
    metas = [{"kind": "rare" if i % 50 == 0 else ("half" if i % 2 else "other"), "i": i} for i in range(300)]
    post, native, mem = ChromaVectorStore.ephemeral("pf"), _chroma_native(), InMemoryVectorStore()
    for s in (post, native, mem):
        s.add_sync(ids, vecs, metas, None)
    for q in vecs[:20]:
        for where in ({"kind": "rare"}, {"kind": "half"}, {"kind": {"$ne": "rare"}}, {"i": {"$lt": 3}}):
            want = mem.query_sync(q, k, where)
            for s in (post, native):
                got = s.query_sync(q, k, where)
                assert got.ids == want.ids, where  # rare (6 matches) needs the fallback when k=10
                np.testing.assert_allclose(got.scores, want.scores, atol=1e-5)


@pytest.mark.parametrize(
    "bad",
    [
        {},
        {"$and": []},
        {"a": {"$regex": "x"}},
        {"a": {"$in": []}},
        {"a": [1, 2]},
        {"a": {"$gt": "x"}},
        {"$not": {"a": 1}},
        {"a": {"$eq": 1, "$ne": 2}},
    ],
)
def test_bad_filters_are_refused_the_same_way(store, bad) -> None:
    with pytest.raises(InvalidInputError):
        store.query_sync(np.ones(8), k=3, where=bad or {"$and": []})


def test_add_is_an_upsert(store) -> None:
    store.add_sync(["id1"], [np.ones(8)], [{"room": "attic"}], ["replaced"])
    assert store.count_sync() == 6
    (rec,) = store.get_sync(["id1"])
    assert rec["document"] == "replaced" and rec["metadata"] == {"room": "attic"}
    assert store.query_sync(np.ones(8), k=1).ids == ["id1"]


def test_delete(store) -> None:
    store.delete_sync(["id0", "id4", "unknown"])
    assert store.count_sync() == 4
    assert store.get_sync(["id0", "id4"]) == []
    _ids, vecs = _data()
    res = store.query_sync(vecs[0], k=10)
    assert "id0" not in res.ids and len(res) == 4
    store.delete_sync([])
    store.add_sync(["id0"], [vecs[0]], None, None)
    assert store.query_sync(vecs[0], k=1).ids == ["id0"]


def test_zero_vector_scores_zero(store) -> None:
    store.add_sync(["zero"], [np.zeros(8)], None, None)
    res = store.query_sync(np.zeros(8), k=7)
    assert res.scores == pytest.approx([0.0] * 7, abs=1e-6)


def test_input_validation(store) -> None:
    with pytest.raises(InvalidInputError):
        store.add_sync(["x", "y"], [np.ones(8)], None, None)
    with pytest.raises(InvalidInputError):
        store.add_sync(["x"], [np.ones(8)], [{"bad": object()}], None)
    with pytest.raises(InvalidInputError):
        store.add_sync(["x"], [[np.nan] * 8], None, None)
    with pytest.raises(InvalidInputError):
        store.add_sync(["x"], [np.ones(5)], None, None)  # wrong dimension
    with pytest.raises(InvalidInputError):
        store.query_sync(np.ones(5), k=2)
    assert store.count_sync() == 6


async def test_async_methods_match_sync(store) -> None:
    _ids, vecs = _data()
    q = vecs[1]
    a = await store.query(q.tolist(), 3, {"room": {"$ne": "garden"}})
    b = store.query_sync(q, 3, {"room": {"$ne": "garden"}})
    assert a.ids == b.ids and a.scores == b.scores
    await store.add(["new"], [np.ones(8).tolist()], [{"room": "x"}], ["n"])
    assert await store.count() == 7
    assert [r["id"] for r in await store.get(["new"])] == ["new"]
    await store.delete(["new"])
    assert await store.count() == 6


async def test_concurrent_async_queries(store) -> None:
    _, vecs = _data()
    results = await asyncio.gather(*(store.query(vecs[i % 6].tolist(), 1) for i in range(24)))
    assert [r.ids[0] for r in results] == [f"id{i % 6}" for i in range(24)]


def test_in_memory_snapshot_round_trip() -> None:
    s = InMemoryVectorStore("snap")
    ids, vecs = _data(50, 16)
    s.add_sync(ids, vecs, [{"i": i, "l": [i]} for i in range(50)], [f"d{i}" for i in range(50)])
    s.delete_sync(["id7"])
    snap = json.loads(json.dumps(s.snapshot()))
    r = InMemoryVectorStore.from_snapshot(snap)
    assert r.name == "snap" and r.count_sync() == 49
    assert r.get_sync() == s.get_sync()
    q = vecs[3] + 0.05
    assert r.query_sync(q, 5).rows() == s.query_sync(q, 5).rows()
    empty = InMemoryVectorStore.from_snapshot(InMemoryVectorStore().snapshot())
    assert empty.count_sync() == 0
    with pytest.raises(InvalidInputError):
        InMemoryVectorStore.from_snapshot({"version": 99})


def test_in_memory_grows_past_capacity_and_deletes_swap_rows() -> None:
    s = InMemoryVectorStore(capacity=2)
    ids, vecs = _data(300, 4, seed=3)
    for i in range(0, 300, 7):
        s.add_sync(ids[i : i + 7], vecs[i : i + 7], None, None)
    s.delete_sync(ids[::2])
    assert s.count_sync() == 150
    for i in range(1, 300, 38):  # odd ids survive
        assert s.query_sync(vecs[i], 1).ids == [ids[i]]


def test_ephemeral_chroma_stores_do_not_share_data() -> None:
    a = ChromaVectorStore.ephemeral("same")
    b = ChromaVectorStore.ephemeral("same")
    a.add_sync(["x"], [np.ones(4)], None, None)
    assert a.count_sync() == 1 and b.count_sync() == 0
    assert a.chroma_name != b.chroma_name and a.name == b.name == "same"
    a.close()
    b.close()


def test_chroma_collection_uses_cosine_and_our_hnsw_defaults() -> None:
    s = ChromaVectorStore.ephemeral("cfg")
    hnsw = s._col.configuration["hnsw"]
    assert hnsw["space"] == "cosine"
    assert {k: hnsw[k] for k in DEFAULT_HNSW} == DEFAULT_HNSW
    assert s._col._embedding_function is None
    s.close()


def test_persistent_chroma_reopens_with_data_intact(tmp_path: Path) -> None:
    ids, vecs = _data(40, 12)
    metas = [{"n": i, "nested": {"i": [i]}} for i in range(40)]
    s = ChromaVectorStore.persistent(tmp_path / "chroma", "memories")
    s.add_sync(ids, vecs, metas, [f"doc{i}" for i in range(40)])
    s.delete_sync(["id5"])
    before = s.query_sync(vecs[9], 5, {"n": {"$gte": 9}})
    del s

    # Read back through a fresh process-level client: the data lives on disk.
    reopened = make_vector_store(tmp_path / "chroma", "memories")
    assert isinstance(reopened, ChromaVectorStore)
    assert reopened.count_sync() == 39
    after = reopened.query_sync(vecs[9], 5, {"n": {"$gte": 9}})
    assert after.rows() == before.rows()
    assert after.ids[0] == "id9" and after.metadatas[0] == {"n": 9, "nested": {"i": [9]}}
    assert reopened.get_sync(["id5"]) == []
    other = ChromaVectorStore.persistent(tmp_path / "chroma", "other")
    assert other.count_sync() == 0


@pytest.mark.slow
def test_persistent_store_survives_a_new_process(tmp_path: Path) -> None:
    import subprocess
    import sys

    ids, vecs = _data(10, 6)
    s = ChromaVectorStore.persistent(tmp_path / "c", "m")
    s.add_sync(ids, vecs, [{"i": i} for i in range(10)], None)
    code = (
        "from atlas.infra.vector_index import ChromaVectorStore;"
        f"s=ChromaVectorStore.persistent({str(tmp_path / 'c')!r}, 'm');"
        "print(s.count_sync(), s.get_sync(['id3'])[0]['metadata']['i'])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.split() == ["10", "3"]


def test_any_collection_name_maps_to_a_stable_chroma_name(tmp_path: Path) -> None:
    assert chroma_collection_name("memories") == "memories"
    odd = ["m", "my collection!", "ü..x", "-x-", "a" * 600]
    names = [chroma_collection_name(n) for n in odd]
    assert len(set(names)) == len(odd)
    assert names == [chroma_collection_name(n) for n in odd]  # deterministic
    s = ChromaVectorStore.persistent(tmp_path, "my collection!")
    s.add_sync(["a"], [np.ones(3)], None, None)
    assert ChromaVectorStore.persistent(tmp_path, "my collection!").count_sync() == 1
    with pytest.raises(InvalidInputError):
        chroma_collection_name("")


def test_unreachable_server_says_how_to_start_one() -> None:
    with pytest.raises(StoreError, match="chroma run"):
        ChromaVectorStore.http("127.0.0.1", 9, "c")


def test_make_vector_store_without_path_is_ephemeral() -> None:
    s = make_vector_store(None, "scratch")
    assert isinstance(s, ChromaVectorStore) and s.chroma_name.startswith("scratch-")
    s.close()


def test_filter_cache_is_invalidated_by_writes() -> None:
    s = InMemoryVectorStore()
    s.add_sync(["a"], [[1.0, 0.0]], [{"t": "x"}], None)
    assert s.query_sync([1.0, 0.0], 5, {"t": "x"}).ids == ["a"]
    s.add_sync(["b"], [[0.0, 1.0]], [{"t": "x"}], None)
    assert s.query_sync([1.0, 0.0], 5, {"t": "x"}).ids == ["a", "b"]
    s.add_sync(["a"], [[1.0, 0.0]], [{"t": "y"}], None)
    assert s.query_sync([1.0, 0.0], 5, {"t": "x"}).ids == ["b"]
    s.delete_sync(["b"])
    assert s.query_sync([1.0, 0.0], 5, {"t": "x"}).ids == []


def test_compiled_filters_agree_with_the_reference_matcher() -> None:
    import random

    from atlas.infra.vector_index.filters import _compile, _normalize_where

    rng = random.Random(7)
    values = [0, 1, 1.0, 2.5, True, False, "a", "b", "", None, [1], {"a": 1}]
    metas = [{k: rng.choice(values) for k in rng.sample(["x", "y"], rng.randint(0, 2))} for _ in range(200)]
    scalars = [v for v in values if isinstance(v, str | int | float)]
    ops = ["$eq", "$ne", "$in", "$nin", "$gt", "$lte"]
    for _ in range(300):
        op = rng.choice(ops)
        if op in {"$in", "$nin"}:
            operand = rng.sample(scalars, 2)
        elif op in {"$gt", "$lte"}:
            operand = rng.choice([0, 1, 2.5])
        else:
            operand = rng.choice(scalars)
        where = {rng.choice(["x", "y"]): {op: operand}}
        if rng.random() < 0.3:
            where = {"$or": [where, {"y": rng.choice(scalars)}]}
        pred = _compile(_normalize_where(where))
        assert [pred(m) for m in metas] == [matches_where(m, where) for m in metas], where


@pytest.mark.slow
def test_http_client_against_a_real_chroma_server(tmp_path: Path) -> None:
    """`chroma run` on a free local port; the same store semantics through HttpClient."""
    import os
    import socket
    import subprocess
    import sys
    import time

    exe = Path(sys.executable).parent / "chroma"
    assert exe.exists(), "the chroma CLI ships with chromadb"
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}
    server = subprocess.Popen(
        [str(exe), "run", "--path", str(tmp_path / "srv"), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                store = ChromaVectorStore.http("127.0.0.1", port, "remote")
                break
            except StoreError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise
                time.sleep(0.5)
        ids, vecs = _data()
        store.add_sync(ids, vecs, METAS, None)
        mem = InMemoryVectorStore()
        mem.add_sync(ids, vecs, METAS, None)
        for where in (None, {"room": "kitchen"}, {"success": {"$ne": True}}):
            got, want = store.query_sync(vecs[0], 4, where), mem.query_sync(vecs[0], 4, where)
            assert got.ids == want.ids and got.metadatas == want.metadatas
            np.testing.assert_allclose(got.scores, want.scores, atol=1e-5)
        assert [r["metadata"] for r in store.get_sync(ids)] == METAS
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_public_api_is_pinned() -> None:
    import atlas.infra.vector_index as mod

    assert sorted(mod.__all__) == [
        "CHROMA_BUILTIN_HNSW", "ChromaVectorStore", "DEFAULT_HNSW", "InMemoryVectorStore", "JSON_MARKER",
        "chroma_collection_name", "make_vector_store", "matches_where",
    ]  # fmt: skip


def test_in_memory_large_matrix_path_matches_exact_search() -> None:
    """Above 8M cells the store scores with BLAS instead of einsum; both give the exact answer."""
    rng = np.random.default_rng(11)
    for n in (500, 21_000):
        vecs = rng.normal(size=(n, 400)).astype(np.float32)
        s = InMemoryVectorStore(capacity=n)
        s.add_sync([str(i) for i in range(n)], vecs, [{"even": i % 2 == 0} for i in range(n)], None)
        q = rng.normal(size=400).astype(np.float32)
        want = _exact(vecs, q)
        res = s.query_sync(q, 5)
        assert res.ids == [str(i) for i in np.argsort(-want)[:5]]
        np.testing.assert_allclose(res.scores, np.sort(want)[::-1][:5], atol=1e-5)
        assert all(int(i) % 2 == 0 for i in s.query_sync(q, 5, {"even": True}).ids)
