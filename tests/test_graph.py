"""atlas.infra.graph: undirected, sorted, deterministic BFS paths, snapshot/restore."""

from __future__ import annotations

import json
import random
import threading

import pytest

from atlas.errors import InvalidInputError
from atlas.infra.graph import GraphStore


@pytest.fixture
def g() -> GraphStore:
    g = GraphStore()
    g.add_edges(
        [
            ("room_A", "room_C"),
            ("room_A", "room_B"),
            ("room_B", "room_D"),
            ("room_C", "room_D"),
            ("room_D", "room_E"),
            ("room_X", "room_Y"),
        ]
    )
    return g


def test_edges_are_undirected_and_counted_once(g: GraphStore) -> None:
    assert g.add_edges([("room_B", "room_A"), ("room_A", "room_B"), ("room_E", "room_F")]) == 1
    assert g.has_edge("room_B", "room_A") and g.has_edge("room_A", "room_B")
    assert ("room_A", "room_B") in g.edges() and len(g.edges()) == 7


def test_neighbors_sorted_and_empty_for_unknown(g: GraphStore) -> None:
    assert g.neighbors("room_A") == ["room_B", "room_C"]
    assert g.neighbors("room_D") == ["room_B", "room_C", "room_E"]
    assert g.neighbors("nowhere") == []


def test_shortest_path(g: GraphStore) -> None:
    assert g.shortest_path("room_A", "room_E") == ["room_A", "room_B", "room_D", "room_E"]
    assert g.shortest_path("room_E", "room_A") == ["room_E", "room_D", "room_B", "room_A"]
    assert g.shortest_path("room_A", "room_A") == ["room_A"]
    assert g.shortest_path("room_A", "room_X") is None  # disconnected
    assert g.shortest_path("room_A", "nowhere") is None  # unknown
    assert g.shortest_path("nowhere", "nowhere") is None


def test_paths_do_not_depend_on_insertion_order() -> None:
    edges = [(f"n{a}", f"n{b}") for a in range(30) for b in range(a + 1, 30) if (a * 7 + b * 3) % 5 == 0]
    paths = set()
    for seed in range(5):
        shuffled = edges[:]
        random.Random(seed).shuffle(shuffled)
        g = GraphStore()
        g.add_edges([(b, a) if seed % 2 else (a, b) for a, b in shuffled])
        paths.add(json.dumps([g.shortest_path("n0", f"n{i}") for i in range(30)]))
    assert len(paths) == 1


def test_bad_edges_are_refused() -> None:
    g = GraphStore()
    for bad in (["a"], ("a", "b", "c"), "ab", ("a", 1), ("a", ""), ("a", "a")):
        with pytest.raises(InvalidInputError):
            g.add_edges([bad])
    assert g.nodes() == []


def test_snapshot_round_trip(g: GraphStore) -> None:
    g.add_node("lonely")
    snap = json.loads(json.dumps(g.snapshot()))
    r = GraphStore.from_snapshot(snap)
    assert r.nodes() == g.nodes() and "lonely" in r.nodes()
    assert r.edges() == g.edges()
    assert r.shortest_path("room_A", "room_E") == g.shortest_path("room_A", "room_E")
    assert GraphStore.from_snapshot(GraphStore().snapshot()).nodes() == []
    with pytest.raises(InvalidInputError):
        GraphStore.from_snapshot({"version": 2})


def test_remove_edge(g: GraphStore) -> None:
    assert g.remove_edge("room_D", "room_E") is True and g.remove_edge("room_D", "room_E") is False
    assert g.shortest_path("room_A", "room_E") is None and g.has_node("room_E")


def test_concurrent_writers() -> None:
    g = GraphStore()

    def work(t: int) -> None:
        for i in range(200):
            g.add_edges([(f"t{t}", f"n{i}")])

    ts = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for th in ts:
        th.start()
    for th in ts:
        th.join()
    assert len(g.edges()) == 1600 and len(g) == 208


def test_public_api_is_pinned() -> None:
    import atlas.infra.graph as mod

    assert mod.__all__ == ["GraphStore"]
