"""Task and scenario goal completion: how often an agent succeeds, and how *reliably*.

- **TGC** (task goal completion): the share of tasks solved.
- **SGC** (scenario goal completion): the share of scenarios solved, where a scenario counts only
  when *every* one of its variants (its tasks) is solved. A scenario is the tasks that share
  ``Task.metadata["scenario"]``, or else ``metadata["family"]`` (ATLAS's task families: one layout,
  several tasks); a task with neither is a scenario of its own, and then SGC equals TGC.

An agent that solves 2 of 3 variants of every scenario has TGC 67 % and SGC 0 %: SGC is the
stricter measure of consistency. Each rate comes with its Wilson 95 % interval (over tasks for TGC,
over scenarios for SGC; the interval of TGC treats tasks as independent, which variants of one
scenario are not, so it is the narrower of the two by construction).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

Z95 = 1.959963984540054


def scenario_of(metadata: Mapping[str, Any]) -> str | None:
    """The scenario a task belongs to, from its (hidden) metadata; None when it names none."""
    for key in ("scenario", "family"):
        value = metadata.get(key)
        if value is not None and not isinstance(value, bool):
            return str(value)
    return None


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion (sensible at 0 %, 100 % and small n)."""
    if n <= 0:
        return (0.0, 0.0)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    lo = 0.0 if successes <= 0 else max(0.0, centre - half)
    hi = 1.0 if successes >= n else min(1.0, centre + half)
    return (lo, hi)


@dataclass(frozen=True)
class Rate:
    """``successes`` of ``n`` with the Wilson 95 % interval."""

    successes: int
    n: int

    @property
    def rate(self) -> float:
        return self.successes / self.n if self.n else 0.0

    @property
    def ci95(self) -> tuple[float, float]:
        return wilson(self.successes, self.n)

    def to_dict(self) -> dict[str, Any]:
        lo, hi = self.ci95
        return {
            "rate": round(self.rate, 6),
            "ci95": [round(lo, 6), round(hi, 6)],
            "successes": self.successes,
            "n": self.n,
        }

    def text(self) -> str:
        lo, hi = self.ci95
        return f"{self.rate:.0%} [{lo:.0%}, {hi:.0%}] ({self.successes}/{self.n})"


@dataclass(frozen=True)
class GoalCompletion:
    tgc: Rate
    sgc: Rate

    def to_dict(self) -> dict[str, Any]:
        return {"tgc": self.tgc.to_dict(), "sgc": self.sgc.to_dict()}

    def text(self) -> str:
        return f"task goal completion {self.tgc.text()}, scenario goal completion {self.sgc.text()}"


def _field(item: Any, name: str) -> Any:
    return item.get(name) if isinstance(item, Mapping) else getattr(item, name, None)


def goal_completion(results: Iterable[Any]) -> GoalCompletion:
    """TGC and SGC over per-task results: dicts or objects with ``task_id``, ``success`` and,
    optionally, ``scenario`` (a task without one is its own scenario)."""
    scenarios: dict[str, bool] = {}
    solved = n = 0
    for i, item in enumerate(results):
        ok = bool(_field(item, "success"))
        n += 1
        solved += ok
        scenario = _field(item, "scenario")
        key = f"s:{scenario}" if scenario is not None else f"t:{_field(item, 'task_id') or i}"
        scenarios[key] = scenarios.get(key, True) and ok
    return GoalCompletion(Rate(solved, n), Rate(sum(scenarios.values()), len(scenarios)))


__all__ = ["GoalCompletion", "Rate", "goal_completion", "scenario_of", "wilson"]
