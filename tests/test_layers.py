"""The subpackages of ``atlas`` form layers: the import graph between them (every import, lazy ones
included, read with ``ast``) has no cycle, and the edges docs/design.md forbids are absent."""

from __future__ import annotations

import ast
from collections import defaultdict
from itertools import pairwise
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "atlas"

FORBIDDEN = {
    ("trace", "alma"),  # telemetry writing sits below ALMA; reading and viewing runs is atlas.viewer
    ("infra", "alma"),
    ("infra", "memory"),
    ("infra", "envs"),
    ("infra", "agent"),
    ("envs", "memory"),
    ("envs", "alma"),
    ("memory", "alma"),
    ("agent", "alma"),
    ("core", "infra"),
    ("protocols", "infra"),
}


def _subpackage(path: Path) -> str | None:
    parts = path.relative_to(SRC).parts
    if parts == ("__init__.py",):
        return None  # the top-level package re-exports lazily from everywhere
    return parts[0].removesuffix(".py")


def import_graph() -> dict[str, dict[str, list[str]]]:
    """``{importer: {imported: [files]}}`` between subpackages (and top-level modules) of atlas."""
    graph: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for path in sorted(SRC.rglob("*.py")):
        here = _subpackage(path)
        if here is None:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            elif isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            else:
                continue
            for module in modules:
                parts = module.split(".")
                if parts[0] == "atlas" and len(parts) > 1 and parts[1] != here:
                    graph[here][parts[1]].append(str(path.relative_to(SRC)))
    return graph


def _cycle(graph: dict[str, dict[str, list[str]]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, {})):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_subpackage_import_graph_has_no_cycle():
    graph = import_graph()
    cycle = _cycle(graph)
    where = [f"{a} -> {b}: {sorted(set(graph[a][b]))}" for a, b in pairwise(cycle)] if cycle else []
    assert cycle is None, "import cycle " + " -> ".join(cycle or []) + "\n" + "\n".join(where)


def test_forbidden_edges_are_absent():
    graph = import_graph()
    present = {(a, b): sorted(set(graph[a][b])) for a, b in FORBIDDEN if b in graph.get(a, {})}
    assert present == {}


def test_the_cycle_finder_finds_a_cycle():
    assert _cycle({"a": {"b": []}, "b": {"c": []}, "c": {"a": []}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b": []}, "b": {}}) is None
