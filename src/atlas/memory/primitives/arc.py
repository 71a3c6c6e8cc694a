"""ARC-AGI grid primitives: real, runnable operations on grids (``list[list[int]]``, colors 0-9).

Every function below is self-contained (imports inside, no helpers), so its source is a complete
``CodeConcept.code`` that can be ``exec``-ed on its own. ``ARCPrimitiveLoader`` builds the concepts
from these sources; tests execute the concept code and compare it with the function.
"""

from __future__ import annotations

import inspect
import uuid
from collections.abc import Callable

from atlas.core.types import CodeConcept

Grid = list[list[int]]

PRIMITIVE_NAMESPACE = uuid.UUID("5f1b3c1e-8a0e-4b8e-9d63-2f7a4e0c9a11")


def get_background_color(grid: Grid) -> int:
    """The most common color in the grid (ties → the smallest color)."""
    from collections import Counter

    counts = Counter(c for row in grid for c in row)
    if not counts:
        return 0
    best = max(counts.values())
    return min(c for c, n in counts.items() if n == best)


def get_objects(grid: Grid, background: int | None = None, diagonal: bool = False) -> list[dict]:
    """Connected single-color objects that are not background.

    Returns dicts with ``color``, ``cells`` (sorted (row, col) list), ``bbox`` (r0, c0, r1, c1 inclusive)
    and ``size``, ordered by first cell in reading order.
    """
    from collections import Counter, deque

    if background is None:
        counts = Counter(c for row in grid for c in row)
        background = max(sorted(counts), key=lambda c: counts[c]) if counts else 0
    h = len(grid)
    w = len(grid[0]) if h else 0
    seen = [[False] * w for _ in range(h)]
    steps = [(-1, 0), (1, 0), (0, -1), (0, 1)]
    if diagonal:
        steps += [(-1, -1), (-1, 1), (1, -1), (1, 1)]
    objects = []
    for r in range(h):
        for c in range(w):
            if seen[r][c] or grid[r][c] == background:
                continue
            color = grid[r][c]
            queue = deque([(r, c)])
            seen[r][c] = True
            cells = []
            while queue:
                y, x = queue.popleft()
                cells.append((y, x))
                for dy, dx in steps:
                    ny, nx = y + dy, x + dx
                    if 0 <= ny < h and 0 <= nx < w and not seen[ny][nx] and grid[ny][nx] == color:
                        seen[ny][nx] = True
                        queue.append((ny, nx))
            cells.sort()
            rows = [p[0] for p in cells]
            cols = [p[1] for p in cells]
            objects.append(
                {
                    "color": color,
                    "cells": cells,
                    "size": len(cells),
                    "bbox": (min(rows), min(cols), max(rows), max(cols)),
                }
            )
    return objects


def flood_fill(grid: Grid, row: int, col: int, new_color: int) -> Grid:
    """Recolor the 4-connected region of same-colored cells containing (row, col); returns a new grid."""
    from collections import deque

    out = [list(r) for r in grid]
    if not out or not (0 <= row < len(out) and 0 <= col < len(out[0])):
        return out
    old = out[row][col]
    if old == new_color:
        return out
    queue = deque([(row, col)])
    out[row][col] = new_color
    while queue:
        y, x = queue.popleft()
        for ny, nx in ((y - 1, x), (y + 1, x), (y, x - 1), (y, x + 1)):
            if 0 <= ny < len(out) and 0 <= nx < len(out[0]) and out[ny][nx] == old:
                out[ny][nx] = new_color
                queue.append((ny, nx))
    return out


def rotate_90(grid: Grid) -> Grid:
    """Rotate the grid 90 degrees clockwise."""
    return [list(row) for row in zip(*grid[::-1], strict=True)]


def rotate_180(grid: Grid) -> Grid:
    """Rotate the grid 180 degrees."""
    return [list(reversed(row)) for row in reversed(grid)]


def rotate_270(grid: Grid) -> Grid:
    """Rotate the grid 90 degrees counter-clockwise."""
    return [list(row) for row in zip(*grid, strict=True)][::-1]


def mirror_horizontal(grid: Grid) -> Grid:
    """Mirror left-right (each row reversed)."""
    return [list(reversed(row)) for row in grid]


def mirror_vertical(grid: Grid) -> Grid:
    """Mirror top-bottom (row order reversed)."""
    return [list(row) for row in reversed(grid)]


def transpose(grid: Grid) -> Grid:
    """Swap rows and columns."""
    return [list(row) for row in zip(*grid, strict=True)]


def crop(grid: Grid, r0: int, c0: int, r1: int, c1: int) -> Grid:
    """The sub-grid from (r0, c0) to (r1, c1) inclusive."""
    return [list(row[c0 : c1 + 1]) for row in grid[r0 : r1 + 1]]


def crop_to_content(grid: Grid, background: int | None = None) -> Grid:
    """Crop to the bounding box of all non-background cells (the grid itself if all background)."""
    from collections import Counter

    if background is None:
        counts = Counter(c for row in grid for c in row)
        background = max(sorted(counts), key=lambda c: counts[c]) if counts else 0
    cells = [(r, c) for r, row in enumerate(grid) for c, v in enumerate(row) if v != background]
    if not cells:
        return [list(r) for r in grid]
    r0, r1 = min(p[0] for p in cells), max(p[0] for p in cells)
    c0, c1 = min(p[1] for p in cells), max(p[1] for p in cells)
    return [list(row[c0 : c1 + 1]) for row in grid[r0 : r1 + 1]]


def replace_color(grid: Grid, old: int, new: int) -> Grid:
    """Every cell of color ``old`` becomes ``new``."""
    return [[new if v == old else v for v in row] for row in grid]


def count_colors(grid: Grid) -> dict[int, int]:
    """How many cells of each color, colors ascending."""
    counts: dict[int, int] = {}
    for row in grid:
        for v in row:
            counts[v] = counts.get(v, 0) + 1
    return dict(sorted(counts.items()))


def scale_up(grid: Grid, factor: int) -> Grid:
    """Each cell becomes a ``factor``×``factor`` block."""
    out = []
    for row in grid:
        big = [v for v in row for _ in range(factor)]
        out.extend([list(big) for _ in range(factor)])
    return out


def tile(grid: Grid, rows: int, cols: int) -> Grid:
    """Repeat the grid ``rows`` times vertically and ``cols`` times horizontally."""
    return [list(row) * cols for _ in range(rows) for row in grid]


def overlay(base: Grid, top: Grid, transparent: int = 0) -> Grid:
    """Paint ``top`` over ``base`` (same shape); cells of ``top`` equal to ``transparent`` let base show."""
    return [
        [b if t == transparent else t for b, t in zip(rb, rt, strict=True)]
        for rb, rt in zip(base, top, strict=True)
    ]


def draw_line(grid: Grid, r0: int, c0: int, r1: int, c1: int, color: int) -> Grid:
    """Draw a horizontal, vertical or diagonal line between two cells (inclusive); returns a new grid."""
    out = [list(r) for r in grid]
    dr = (r1 > r0) - (r1 < r0)
    dc = (c1 > c0) - (c1 < c0)
    if dr and dc and abs(r1 - r0) != abs(c1 - c0):
        raise ValueError("draw_line draws only horizontal, vertical or 45-degree lines")
    r, c = r0, c0
    while True:
        if 0 <= r < len(out) and 0 <= c < len(out[0]):
            out[r][c] = color
        if (r, c) == (r1, c1):
            break
        r, c = r + dr, c + dc
    return out


def grid_shape(grid: Grid) -> tuple[int, int]:
    """(height, width)."""
    return (len(grid), len(grid[0]) if grid else 0)


def make_grid(height: int, width: int, color: int = 0) -> Grid:
    """A new grid filled with one color."""
    return [[color] * width for _ in range(height)]


ARC_FUNCTIONS: dict[str, Callable] = {
    f.__name__: f
    for f in (
        get_background_color,
        get_objects,
        flood_fill,
        rotate_90,
        rotate_180,
        rotate_270,
        mirror_horizontal,
        mirror_vertical,
        transpose,
        crop,
        crop_to_content,
        replace_color,
        count_colors,
        scale_up,
        tile,
        overlay,
        draw_line,
        grid_shape,
        make_grid,
    )
}


def concept_from_function(fn: Callable, domain: str) -> CodeConcept:
    """A primitive CodeConcept whose code is the function's own source (deterministic uuid5 id)."""
    doc = inspect.getdoc(fn) or fn.__name__
    # annotations name ``Grid``; postponed evaluation keeps the snippet runnable on its own
    source = "from __future__ import annotations\n\n" + inspect.getsource(fn)
    signature = f"{fn.__name__}{inspect.signature(fn)}".replace("'", "")
    return CodeConcept(
        id=str(uuid.uuid5(PRIMITIVE_NAMESPACE, f"{domain}:{fn.__name__}")),
        name=fn.__name__,
        description=doc.splitlines()[0],
        code=source,
        signature=signature,
        domain=domain,
        usage_guidance=doc,
        is_primitive=True,
    )


class ARCPrimitiveLoader:
    """Loads the ARC-AGI grid primitives above as concepts keyed by name."""

    domain = "arc"

    def load(self) -> dict[str, CodeConcept]:
        return {name: concept_from_function(fn, self.domain) for name, fn in ARC_FUNCTIONS.items()}


__all__ = ["ARCPrimitiveLoader", "ARC_FUNCTIONS", "concept_from_function", *ARC_FUNCTIONS]
