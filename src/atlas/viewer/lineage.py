"""Layout of the archive's lineage tree, shared by the web viewer and the report so both draw
the same picture: one column per generation, parents to the left of their children, rows
ordered to keep edges short (each child sits near the mean row of its parents)."""

from __future__ import annotations

from typing import Any


def lineage_layout(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """Place each entry at ``(column, row)``.

    Returns ``{"nodes": [{"id", "col", "row", "generation"}], "edges": [[parent, child]],
    "columns": [generation, ...], "rows": max rows in a column}``. Rows are floats centred in
    the tallest column; edges to unknown parents are dropped.
    """
    ids = {e["id"] for e in entries}
    gens = sorted({e["generation"] for e in entries})
    col_of_gen = {g: i for i, g in enumerate(gens)}
    by_col: dict[int, list[dict[str, Any]]] = {i: [] for i in range(len(gens))}
    for e in entries:
        by_col[col_of_gen[e["generation"]]].append(e)

    rank: dict[str, float] = {}
    for col in range(len(gens)):
        members = by_col[col]

        def key(e: dict[str, Any], members: list[dict[str, Any]] = members) -> tuple[float, int]:
            placed = [rank[p] for p in e["parent_ids"] if p in rank]
            order = members.index(e)
            # Roots keep archive order; children go next to the mean of their parents.
            return (sum(placed) / len(placed) if placed else float(order), order)

        for i, e in enumerate(sorted(members, key=key)):
            rank[e["id"]] = float(i)

    tallest = max((len(m) for m in by_col.values()), default=0)
    nodes = []
    for col, members in by_col.items():
        offset = (tallest - len(members)) / 2.0
        for e in members:
            nodes.append(
                {"id": e["id"], "col": col, "row": rank[e["id"]] + offset, "generation": e["generation"]}
            )
    edges = [[p, e["id"]] for e in entries for p in e["parent_ids"] if p in ids]
    return {"nodes": nodes, "edges": edges, "columns": gens, "rows": tallest}
