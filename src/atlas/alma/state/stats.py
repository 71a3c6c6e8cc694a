"""Paired comparisons over tasks: the mean difference and its bootstrap 95% interval.

Every "better than" ATLAS prints comes from here: two conditions played on the same tasks, the
per-task differences resampled with replacement (a fixed seed, so a report is reproducible), the
2.5th and 97.5th percentiles of the resampled means as the interval.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from atlas.errors import ConfigError

RESAMPLES = 10_000


@dataclass(frozen=True)
class PairedDifference:
    """``mean`` of ``a_i - b_i`` over ``n`` tasks with its 95% interval ``ci95``."""

    mean: float
    ci95: tuple[float, float]
    n: int

    @property
    def separates(self) -> bool:
        """True when the interval excludes 0: the two conditions are told apart."""
        lo, hi = self.ci95
        return lo > 0 or hi < 0

    def verdict(self, a: str = "A", b: str = "B") -> str:
        if self.n == 0:
            return "no paired tasks"
        if self.ci95[0] > 0:
            return f"{a} beats {b}"
        if self.ci95[1] < 0:
            return f"{b} beats {a}"
        return f"cannot tell {a} from {b} on {self.n} tasks"

    def to_dict(self) -> dict[str, object]:
        return {
            "mean": round(self.mean, 6),
            "ci95": [round(self.ci95[0], 6), round(self.ci95[1], 6)],
            "n": self.n,
        }


def paired_difference(
    a: Sequence[float], b: Sequence[float], *, resamples: int = RESAMPLES, seed: int = 0, level: float = 0.95
) -> PairedDifference:
    """Mean of ``a - b`` (same tasks, same order) with a percentile bootstrap interval."""
    if len(a) != len(b):
        raise ConfigError(f"paired scores need the same tasks: {len(a)} vs {len(b)} values")
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    if d.size == 0:
        return PairedDifference(0.0, (0.0, 0.0), 0)
    if not np.all(np.isfinite(d)):
        raise ConfigError("paired scores must be finite numbers")
    rng = np.random.default_rng(seed)
    means = d[rng.integers(0, d.size, size=(resamples, d.size))].mean(axis=1)
    tail = (1 - level) / 2 * 100
    lo, hi = np.percentile(means, [tail, 100 - tail])
    return PairedDifference(float(d.mean()), (float(lo), float(hi)), int(d.size))


__all__ = ["RESAMPLES", "PairedDifference", "paired_difference"]
