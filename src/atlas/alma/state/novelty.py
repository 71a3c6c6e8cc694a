"""Novelty of a design: its minimum normalized AST distance to the other designs of the archive.

A source is turned into a sequence of AST tokens (node types in pre-order, plus the attribute /
called names that tell which tools a design uses; identifiers and literals are ignored, so renaming
a variable is not novelty). Distance between two sources = Levenshtein distance of their token
sequences / the longer length: 0 for identical sources, 1 for nothing in common, growing with edits.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Sequence
from functools import lru_cache

import numpy as np


def _tokens(node: ast.AST, out: list[str]) -> None:
    out.append(type(node).__name__)
    if isinstance(node, ast.Attribute):
        out.append("." + node.attr)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        out.append("call:" + node.func.id)
    elif isinstance(node, ast.Constant):
        out.append("const:" + type(node.value).__name__)
    for child in ast.iter_child_nodes(node):
        _tokens(child, out)


@lru_cache(maxsize=4096)
def ast_tokens(source: str) -> tuple[str, ...]:
    """Pre-order AST token sequence of ``source``. Unparsable sources fall back to their raw
    whitespace-separated words, so even a broken design has a comparable shape."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return tuple(source.split())
    out: list[str] = []
    for stmt in tree.body:
        # A module docstring says nothing about the design's behaviour.
        if (
            isinstance(stmt, ast.Expr)
            and isinstance(stmt.value, ast.Constant)
            and isinstance(stmt.value.value, str)
        ):
            continue
        _tokens(stmt, out)
    return tuple(out)


def levenshtein(a: Sequence[str], b: Sequence[str]) -> int:
    """Edit distance between two token sequences, one numpy row at a time (O(len(a)·len(b)) work
    but vectorized along ``b``: ~2k × 2k tokens in tens of milliseconds)."""
    if len(a) < len(b):
        a, b = b, a
    if not b:
        return len(a)
    vocab: dict[str, int] = {}
    ia = np.array([vocab.setdefault(t, len(vocab)) for t in a], dtype=np.int64)
    ib = np.array([vocab.setdefault(t, len(vocab)) for t in b], dtype=np.int64)
    m = len(ib)
    idx = np.arange(m + 1, dtype=np.int64)
    prev = idx.copy()
    for i in range(1, len(ia) + 1):
        cost = (ib != ia[i - 1]).astype(np.int64)
        # best of deletion (prev[j] + 1) and substitution (prev[j-1] + cost); then insertions
        # along the row: cur[j] = min_k<=j (t[k] + j - k) = j + cummin(t - idx).
        t = np.empty(m + 1, dtype=np.int64)
        t[0] = i
        t[1:] = np.minimum(prev[1:] + 1, prev[:-1] + cost)
        prev = np.minimum.accumulate(t - idx) + idx
    return int(prev[-1])


def ast_distance(a: str, b: str) -> float:
    """Normalized AST distance in [0, 1]: 0 for identical token sequences."""
    if a > b:  # symmetric: one cache slot per pair
        a, b = b, a
    return _distance(a, b)


@lru_cache(maxsize=16384)
def _distance(a: str, b: str) -> float:
    ta, tb = ast_tokens(a), ast_tokens(b)
    if ta == tb:
        return 0.0
    longest = max(len(ta), len(tb))
    return levenshtein(ta, tb) / longest


def novelty(source: str, others: Iterable[str]) -> float:
    """Minimum distance from ``source`` to each of ``others`` (1.0 when there is nothing to compare)."""
    dists = [ast_distance(source, o) for o in others]
    return min(dists) if dists else 1.0


def novelty_scores(sources: dict[str, str]) -> dict[str, float]:
    """Novelty of every design in ``sources`` (id → source) against all the others."""
    ids = list(sources)
    n = len(ids)
    best = {i: 1.0 for i in ids}
    for x in range(n):
        for y in range(x + 1, n):
            d = ast_distance(sources[ids[x]], sources[ids[y]])
            best[ids[x]] = min(best[ids[x]], d)
            best[ids[y]] = min(best[ids[y]], d)
    return best


__all__ = ["ast_distance", "ast_tokens", "levenshtein", "novelty", "novelty_scores"]
