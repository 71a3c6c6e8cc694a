"""The token trie of a turn's choices, for scoring them all in one model pass.

Choices such as ``focus on red wire`` and ``focus on blue wire`` share their first tokens. In the
trie each shared token is one node, read once; a node belongs to every choice that passes through
it, so in llama.cpp it is one batch token carrying all those choices' sequence ids, and attends
only to its own ancestors (nodes at one depth belong to disjoint sets of choices).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Node:
    token: int
    depth: int  # 0 for a choice's first token
    parent: int  # index of the parent node, -1 under the prompt
    choices: list[int] = field(default_factory=list)  # indexes of the choices through this node


def build(sequences: list[list[int]]) -> tuple[list[Node], list[list[int]]]:
    """The trie's nodes, parents before children (by depth), and each choice's path of node indexes."""
    children: dict[tuple[int, int], int] = {}
    nodes: list[Node] = []
    paths: list[list[int]] = []
    for i, seq in enumerate(sequences):
        if not seq:
            raise ValueError(f"choice {i} has no tokens")
        parent, path = -1, []
        for depth, token in enumerate(seq):
            key = (parent, token)
            if key not in children:
                children[key] = len(nodes)
                nodes.append(Node(token=token, depth=depth, parent=parent))
            parent = children[key]
            nodes[parent].choices.append(i)
            path.append(parent)
        paths.append(path)
    order = sorted(range(len(nodes)), key=lambda n: nodes[n].depth)
    new_index = {old: new for new, old in enumerate(order)}
    ordered = [nodes[old] for old in order]
    for node in ordered:
        node.parent = new_index[node.parent] if node.parent >= 0 else -1
    return ordered, [[new_index[n] for n in path] for path in paths]


def chunks(lengths: list[int], size: int, budget: int) -> list[range]:
    """Consecutive groups of choices for one decode each: at most ``size`` choices (the sequences a
    context holds) whose tokens number at most ``budget`` together (the KV cells left after the prompt;
    the trie needs at most that many)."""
    if size < 1:
        raise ValueError("size must be at least 1")
    groups, start, used = [], 0, 0
    for i, n in enumerate(lengths):
        if n > budget:
            raise ValueError(f"choice {i} ({n} tokens) does not fit the {budget} cells left in the context")
        if i > start and (i - start == size or used + n > budget):
            groups.append(range(start, i))
            start, used = i, 0
        used += n
    if start < len(lengths):
        groups.append(range(start, len(lengths)))
    return groups


__all__ = ["Node", "build", "chunks"]
