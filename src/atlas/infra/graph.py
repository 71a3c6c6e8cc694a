"""An undirected graph of named nodes on networkx, with deterministic answers.

Used by memory designs for spatial knowledge (rooms connected by doors, ...). Neighbors come back
sorted and shortest paths are found by a BFS that visits neighbors in sorted order, so the same
edges always give the same path, whatever order they were added in or after snapshot/restore.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import networkx as nx

from atlas.errors import InvalidInputError

__all__ = ["GraphStore"]


def _node(x: Any) -> str:
    if not isinstance(x, str) or not x:
        raise InvalidInputError(f"graph nodes are non-empty strings, got {x!r}")
    return x


class GraphStore:
    """Undirected edges between string nodes; thread-safe; JSON snapshot/restore."""

    def __init__(self) -> None:
        self._g: nx.Graph = nx.Graph()
        self._lock = threading.RLock()

    def add_edges(self, edges: Iterable[Sequence[str]]) -> int:
        """Add undirected edges ``(a, b)``; returns how many were new. Self-loops are refused."""
        pairs = []
        for e in edges:
            if isinstance(e, str) or not isinstance(e, Sequence) or len(e) != 2:
                raise InvalidInputError(f"an edge is a pair of node names, got {e!r}")
            a, b = _node(e[0]), _node(e[1])
            if a == b:
                raise InvalidInputError(f"self-loop {a!r} -> {a!r} is not an edge")
            pairs.append((a, b))
        with self._lock:
            added = 0
            for a, b in pairs:
                if not self._g.has_edge(a, b):
                    self._g.add_edge(a, b)
                    added += 1
            return added

    def add_node(self, node: str) -> bool:
        """Add an isolated node; True when it is new."""
        n = _node(node)
        with self._lock:
            new = n not in self._g
            self._g.add_node(n)
            return new

    def remove_edge(self, a: str, b: str) -> bool:
        """Remove an edge (nodes stay); True when it existed."""
        with self._lock:
            if self._g.has_edge(a, b):
                self._g.remove_edge(a, b)
                return True
            return False

    def has_node(self, node: str) -> bool:
        with self._lock:
            return node in self._g

    def has_edge(self, a: str, b: str) -> bool:
        with self._lock:
            return self._g.has_edge(a, b)

    def neighbors(self, node: str) -> list[str]:
        """Sorted neighbors of ``node`` ([] when unknown)."""
        with self._lock:
            return sorted(self._g.neighbors(node)) if node in self._g else []

    def shortest_path(self, src: str, dst: str) -> list[str] | None:
        """Fewest-edges path ``[src, ..., dst]`` by BFS; None when either node is unknown or they
        are disconnected. ``[src]`` when ``src == dst`` and the node exists."""
        with self._lock:
            if src not in self._g or dst not in self._g:
                return None
            if src == dst:
                return [src]
            parent: dict[str, str] = {src: src}
            queue = deque([src])
            while queue:
                cur = queue.popleft()
                for nxt in sorted(self._g.neighbors(cur)):
                    if nxt in parent:
                        continue
                    parent[nxt] = cur
                    if nxt == dst:
                        path = [dst]
                        while path[-1] != src:
                            path.append(parent[path[-1]])
                        return path[::-1]
                    queue.append(nxt)
            return None

    def nodes(self) -> list[str]:
        """All nodes, sorted."""
        with self._lock:
            return sorted(self._g.nodes)

    def edges(self) -> list[tuple[str, str]]:
        """All edges as sorted ``(a, b)`` pairs with ``a < b``, sorted."""
        with self._lock:
            return sorted((min(a, b), max(a, b)) for a, b in self._g.edges)

    def __len__(self) -> int:
        with self._lock:
            return self._g.number_of_nodes()

    def snapshot(self) -> dict[str, Any]:
        """JSON-safe ``{"version": 1, "nodes": [...], "edges": [[a, b], ...]}``."""
        with self._lock:
            return {"version": 1, "nodes": self.nodes(), "edges": [list(e) for e in self.edges()]}

    @classmethod
    def from_snapshot(cls, data: Mapping[str, Any]) -> GraphStore:
        """Rebuild a graph from ``snapshot()`` output."""
        if not isinstance(data, Mapping) or data.get("version") != 1:
            raise InvalidInputError(f"unsupported graph snapshot: {data!r:.80}")
        g = cls()
        for n in data.get("nodes", []):
            g.add_node(n)
        g.add_edges(data.get("edges", []))
        return g
