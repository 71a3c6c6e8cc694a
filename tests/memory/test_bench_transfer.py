"""The transfer benchmark's data and its floor calibration (the benchmark itself prints figures)."""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCH))

from bench_transfer import Hits, Query, calibrate, figures, held_out, load  # noqa: E402


def test_data_is_broad_and_labelled():
    memories, queries = load()
    ids = {m.id for m in memories}
    domains = {m.domain for m in memories}
    assert {"graphworld", "alfworld", "textworld", "appworld", "everyday"} <= domains
    for d in domains:
        assert sum(1 for q in queries if q.domain == d) >= 20, d
    unrelated = [q for q in queries if not q.related]
    assert len(unrelated) >= 50 and len({q.domain for q in unrelated}) >= 5
    assert all(q.related <= ids for q in queries)
    assert all(m.tips and m.subtasks for m in memories)


def _hits(related_score: float, unrelated_score: float) -> list[Hits]:
    out = []
    for i in range(10):
        out.append(Hits(Query(f"r{i}", f"d{i % 2}", frozenset({"m"})), [("m", related_score)]))
        out.append(Hits(Query(f"u{i}", f"x{i % 2}", frozenset()), [("m", unrelated_score)]))
    return out


def test_calibration_puts_the_floor_between_related_and_unrelated_scores():
    hits = _hits(0.7, 0.3)
    floor = calibrate(hits, k=1)
    assert 0.3 < floor <= 0.7
    fig = figures(hits, 1, floor)
    assert fig.recall == 1.0 and fig.unrelated_hit == 0.0
    fig, floors = held_out(hits, 1)
    assert fig.recall == 1.0 and fig.unrelated_hit == 0.0 and set(floors) == {"d0", "d1", "x0", "x1"}
