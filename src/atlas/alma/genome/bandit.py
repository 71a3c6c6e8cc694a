"""Which operator makes the next child: a UCB1 bandit over the operators, rewarded when a child beats
its parent (ShinkaEvolve shares its budget between models the same way).

The state is derived from the archive (each evolved entry's search record keeps its ``operator`` and
whether it ``beat_parent``), so a resumed run picks up exactly where it left off and nothing is stored
twice.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from atlas.alma.state.search_record import SearchRecord


@dataclass
class OperatorStats:
    tries: int = 0
    wins: int = 0

    @property
    def rate(self) -> float:
        return self.wins / self.tries if self.tries else 0.0


def operator_stats(records: Iterable[SearchRecord | None], operators: list[str]) -> dict[str, OperatorStats]:
    """Tries and wins per operator from the entries' search records (``operator``, ``beat_parent``)."""
    stats = {op: OperatorStats() for op in operators}
    for r in records:
        if r is not None and r.operator is not None and r.operator in stats:
            stats[r.operator].tries += 1
            stats[r.operator].wins += 1 if r.beat_parent else 0
    return stats


def choose_operator(stats: dict[str, OperatorStats], exploration: float = 1.0) -> str:
    """Every operator once (in order), then the largest ``rate + exploration * sqrt(2 ln N / n)``."""
    for op, s in stats.items():
        if s.tries == 0:
            return op
    total = sum(s.tries for s in stats.values())
    return max(
        stats, key=lambda op: stats[op].rate + exploration * math.sqrt(2 * math.log(total) / stats[op].tries)
    )


def stats_table(stats: dict[str, OperatorStats]) -> list[dict[str, Any]]:
    return [
        {"operator": op, "tries": s.tries, "wins": s.wins, "rate": round(s.rate, 3)}
        for op, s in stats.items()
    ]


__all__ = ["OperatorStats", "choose_operator", "operator_stats", "stats_table"]
