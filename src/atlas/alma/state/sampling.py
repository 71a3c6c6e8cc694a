"""Parent selection: quality-diversity weights over the archive's scored designs.

    weight = 0.5·score + 0.3·novelty + 0.2/(1 + times_sampled)

``score`` is the normalized (deployment − baseline) score, which can be negative, so the weights
are shifted to be non-negative, plus a small floor so that every eligible design keeps a chance.
With probability ``exploit`` the first parent is the archive's best design instead (the parent an
edit rewrites and a crossover starts from), so the search improves on what works as well as
exploring around it (OpenEvolve's exploitation ratio). Sampling uses a caller-given ``random.Random``: the loop seeds it from (seed, generation) so a
resumed run draws exactly what an uninterrupted one would have drawn.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Protocol, TypeVar

W_SCORE = 0.5
W_NOVELTY = 0.3
W_EXPLORE = 0.2
FLOOR = 0.01  # keeps the worst design sampleable after the shift


class Sampleable(Protocol):
    id: str
    normalized_score: float | None
    novelty: float | None
    times_sampled: int


S = TypeVar("S", bound=Sampleable)


def raw_weight(score: float, novelty: float, times_sampled: int) -> float:
    return W_SCORE * score + W_NOVELTY * novelty + W_EXPLORE / (1 + times_sampled)


def weights(entries: Sequence[Sampleable]) -> list[float]:
    """Sampling weights of ``entries`` (same order), all > 0."""
    raws = [
        raw_weight(e.normalized_score or 0.0, e.novelty if e.novelty is not None else 1.0, e.times_sampled)
        for e in entries
    ]
    if not raws:
        return []
    shift = min(0.0, min(raws))
    return [r - shift + FLOOR for r in raws]


def sample_parents(
    entries: Sequence[S], k: int, rng: random.Random, *, elite: S | None = None, exploit: float = 0.0
) -> list[S]:
    """Draw up to ``k`` distinct entries, each draw proportional to the weights of those left; with
    probability ``exploit`` the first one is ``elite`` (the best design) instead of a draw."""
    pool = list(entries)
    chosen: list[S] = []
    if elite is not None and k > 0 and exploit > 0 and rng.random() < exploit:
        chosen.append(elite)
        pool = [e for e in pool if e.id != elite.id]
    while pool and len(chosen) < k:
        w = weights(pool)
        pick = rng.choices(range(len(pool)), weights=w, k=1)[0]
        chosen.append(pool.pop(pick))
    return chosen


def seeded_rng(seed: int, generation: int) -> random.Random:
    """The RNG of one iteration, a pure function of (seed, generation)."""
    return random.Random(f"alma:{seed}:{generation}")


__all__ = [
    "FLOOR",
    "W_EXPLORE",
    "W_NOVELTY",
    "W_SCORE",
    "raw_weight",
    "sample_parents",
    "seeded_rng",
    "weights",
]
