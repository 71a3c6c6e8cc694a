"""The subpackages of ``atlas`` form layers: the import graph between them (every import, lazy ones
included, read with ``ast``) has no cycle, and the edges docs/design.md forbids are absent. Inside
``atlas.alma`` the same holds for its folders and top-level modules (its floors)."""

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


# The floors of atlas.alma, top to bottom: api → search → genome → author → baselines, cluster →
# evaluate → state, sandbox → design. An edge listed here would run up a floor.
ALMA_FORBIDDEN = {
    ("cluster", "search"),  # the search builds its executor; the cluster knows nothing of the search
    ("cluster", "baselines"),  # host designs reach the workers through the kit's HostExecutor
    ("cluster", "author"),
    ("cluster", "genome"),
    ("cluster", "deploy"),
    ("baselines", "cluster"),
    ("evaluate", "cluster"),
    ("state", "cluster"),
    ("sandbox", "cluster"),
    ("evaluate", "baselines"),  # host designs reach the runner through its HostExecutor seam
    ("evaluate", "author"),
    ("evaluate", "search"),
    ("evaluate", "deploy"),
    ("evaluate", "genome"),
    ("state", "evaluate"),
    ("state", "author"),
    ("state", "search"),
    ("state", "baselines"),
    ("state", "sandbox"),
    ("sandbox", "state"),
    ("sandbox", "evaluate"),
    ("author", "search"),
    ("author", "genome"),
    ("author", "deploy"),
    ("baselines", "author"),
    ("baselines", "search"),
    ("deploy", "search"),
    ("genome", "search"),
    ("search", "api"),
    ("design", "state"),
    ("design", "evaluate"),
}


def _subpackage(path: Path, root: Path = SRC) -> str | None:
    parts = path.relative_to(root).parts
    if parts == ("__init__.py",):
        return None  # the package re-exports lazily from everywhere
    return parts[0].removesuffix(".py")


def import_graph(package: str = "atlas") -> dict[str, dict[str, list[str]]]:
    """``{importer: {imported: [files]}}`` between the subpackages (and top-level modules) of
    ``package`` (``atlas`` or ``atlas.alma``)."""
    root = SRC.parent.joinpath(*package.split("."))
    depth = len(package.split("."))
    graph: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for path in sorted(root.rglob("*.py")):
        here = _subpackage(path, root)
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
                inside = parts[:depth] == package.split(".") and len(parts) > depth
                if inside and parts[depth] != here:
                    graph[here][parts[depth]].append(str(path.relative_to(SRC)))
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


def test_the_floors_of_alma_have_no_cycle():
    graph = import_graph("atlas.alma")
    assert {"search", "author", "evaluate", "state", "deploy"} <= set(graph)  # the folders are read
    cycle = _cycle(graph)
    where = [f"{a} -> {b}: {sorted(set(graph[a][b]))}" for a, b in pairwise(cycle)] if cycle else []
    assert cycle is None, "import cycle " + " -> ".join(cycle or []) + "\n" + "\n".join(where)


def test_no_import_in_alma_runs_up_a_floor():
    graph = import_graph("atlas.alma")
    present = {(a, b): sorted(set(graph[a][b])) for a, b in ALMA_FORBIDDEN if b in graph.get(a, {})}
    assert present == {}


def test_alma_stays_small_at_its_top():
    """At most 10 modules at the top of atlas.alma, none over 500 lines (800 anywhere in src)."""
    alma = SRC / "alma"
    assert len(list(alma.glob("*.py"))) <= 10
    sizes = {
        str(p.relative_to(SRC)): len(p.read_text(encoding="utf-8").splitlines()) for p in SRC.rglob("*.py")
    }
    assert {p: n for p, n in sizes.items() if p.startswith("alma/") and n > 500} == {}
    assert {p: n for p, n in sizes.items() if n > 800} == {}


def test_the_cycle_finder_finds_a_cycle():
    assert _cycle({"a": {"b": []}, "b": {"c": []}, "c": {"a": []}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b": []}, "b": {}}) is None
