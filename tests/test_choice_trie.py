"""The token trie that lets one model pass score every choice of a turn."""

from __future__ import annotations

import itertools

import pytest

from atlas.infra.llm.choice_trie import build, chunks


def test_shared_prefixes_are_one_node_owned_by_every_choice_through_it():
    nodes, paths = build([[5, 6, 7], [5, 6, 8], [9]])
    assert len(nodes) == 5  # 5, 6 shared; 7, 8 and 9 alone
    assert paths[0][:2] == paths[1][:2]
    assert nodes[paths[0][0]].choices == [0, 1]
    assert nodes[paths[0][2]].choices == [0] and nodes[paths[1][2]].choices == [1]
    assert nodes[paths[2][0]].choices == [2]
    for path, seq in zip(paths, [[5, 6, 7], [5, 6, 8], [9]], strict=True):
        assert [nodes[n].token for n in path] == seq
        assert [nodes[n].depth for n in path] == list(range(len(seq)))
        assert nodes[path[0]].parent == -1
        assert all(nodes[b].parent == a for a, b in itertools.pairwise(path))


def test_parents_come_before_children_so_a_split_batch_reads_them_first():
    nodes, _ = build([[1, 2, 3, 4], [7], [1, 9]])
    assert [n.depth for n in nodes] == sorted(n.depth for n in nodes)
    assert all(n.parent < i for i, n in enumerate(nodes))


def test_a_choice_that_is_a_prefix_of_another_ends_on_a_shared_node():
    nodes, paths = build([[1, 2], [1, 2, 3]])
    assert paths[0] == paths[1][:2]
    assert nodes[paths[0][-1]].choices == [0, 1]


def test_nodes_at_one_depth_never_share_a_choice():
    nodes, _ = build([[1, 2, 3], [1, 2, 4], [1, 5], [6, 2, 3]])
    for depth in {n.depth for n in nodes}:
        owners = [c for n in nodes if n.depth == depth for c in n.choices]
        assert len(owners) == len(set(owners))


def test_an_empty_choice_is_refused():
    with pytest.raises(ValueError, match="choice 1 has no tokens"):
        build([[1], []])


def test_chunks_hold_at_most_size_choices_and_budget_tokens():
    assert [list(r) for r in chunks([2] * 7, 3, 100)] == [[0, 1, 2], [3, 4, 5], [6]]
    assert [list(r) for r in chunks([4, 4, 4, 1], 10, 8)] == [[0, 1], [2, 3]]
    assert chunks([], 3, 10) == []
    with pytest.raises(ValueError, match="does not fit"):
        chunks([3, 20], 5, 10)
    with pytest.raises(ValueError):
        chunks([1], 0, 10)
