"""Staged evaluation (OpenEvolve's cascade, GEPA's minibatch-then-full): a new design plays the
deployment tasks in batches and goes on only while it can still beat the best design so far.

Two rules decide after each batch, both against the best fully-evaluated design on the same tasks:

- ``bound`` (never drops a possible winner): the best mean the design could still reach, if every
  task it has not played scored the maximum, must exceed the best design's mean.
- ``ci`` (``bound`` plus evidence): the design also stops once the paired difference with the best
  design on the tasks played so far has its 95% interval entirely below 0 (it is worse there), or
  once it has played at least ``TIE_EVIDENCE`` tasks the best design did not score the maximum on
  and did better on none of them (a tie everywhere, often 0 against 0 where memory is hard to find,
  is no sign of a gain to come).

A design stopped early is recorded with ``stage="minibatch"`` and the episodes it did not play; it
is never claimed to beat anything (``Archive.best`` and the intervals skip it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from atlas.alma.state.stats import paired_difference

MAX_SCORE = 1.0  # episode scores are in [0, 1]
TIE_EVIDENCE = 4  # beatable tasks played, all without a gain, that stop a design under "ci"
Rule = Literal["bound", "ci"]


@dataclass(frozen=True)
class Verdict:
    """Whether the design goes on to the next batch, and why (shown in its archive entry)."""

    go_on: bool
    reason: str


def optimistic_mean(played: Mapping[str, float], total: int, max_score: float = MAX_SCORE) -> float:
    """The design's mean over ``total`` tasks if every task it has not played scored ``max_score``."""
    return (sum(played.values()) + max_score * (total - len(played))) / total


def can_still_beat(
    played: Mapping[str, float],
    best: Mapping[str, float],
    total: int,
    *,
    rule: Rule = "ci",
    max_score: float = MAX_SCORE,
) -> Verdict:
    """``played``: the design's scores by task id so far; ``best``: the best design's scores on all
    ``total`` deployment tasks (same ids)."""
    best_mean = sum(best.values()) / len(best)
    reach = optimistic_mean(played, total, max_score)
    if reach <= best_mean:
        return Verdict(
            False,
            f"after {len(played)} of {total} tasks its best reachable mean is {reach:.3f}, "
            f"not above the best design's {best_mean:.3f}",
        )
    if rule == "ci":
        ids = [t for t in played if t in best]
        diff = paired_difference([played[t] for t in ids], [best[t] for t in ids])
        if diff.n and diff.ci95[1] < 0:
            return Verdict(
                False,
                f"after {len(played)} of {total} tasks it is worse than the best design: "
                f"paired difference {diff.mean:+.3f}, 95% CI [{diff.ci95[0]:+.3f}, {diff.ci95[1]:+.3f}]",
            )
        beatable = [t for t in ids if best[t] < max_score]
        if len(beatable) >= TIE_EVIDENCE and not any(played[t] > best[t] for t in beatable):
            return Verdict(
                False,
                f"after {len(played)} of {total} tasks it did better than the best design on none of "
                f"the {len(beatable)} it could have bettered",
            )
    return Verdict(
        True,
        f"after {len(played)} of {total} tasks it can still beat the best design "
        f"(reachable mean {reach:.3f} > {best_mean:.3f})",
    )


def batches(n: int, size: int) -> list[range]:
    """Index ranges of the stages over ``n`` tasks (one range when ``size`` is 0 or covers them all)."""
    if size <= 0 or size >= n:
        return [range(n)]
    return [range(i, min(i + size, n)) for i in range(0, n, size)]


__all__ = ["MAX_SCORE", "TIE_EVIDENCE", "Rule", "Verdict", "batches", "can_still_beat", "optimistic_mean"]
