"""The run's own time, kept with its archive (``run_time_s``) so that ``--max-minutes`` caps the whole
run, its resumed parts included, not the time between them."""

from __future__ import annotations

import math
import time
from typing import Any

from atlas.errors import ArchiveError


class RunClock:
    """Seconds the run ran before this invocation (``earlier_s``) plus this invocation's, once started."""

    def __init__(self, earlier_s: float = 0.0) -> None:
        self.earlier_s = earlier_s
        self._start: float | None = None

    def start(self) -> None:
        self._start = time.perf_counter()

    def run_time_s(self) -> float:
        return self.earlier_s + (time.perf_counter() - self._start if self._start is not None else 0.0)


def earlier_time(value: Any, iterations: list[dict[str, Any]], where: str, hint: str) -> float:
    """The run's own time saved with an archive; an archive written before it was kept counts its
    generations' recorded durations (the baselines' time was not recorded then)."""
    if value is None:
        durations = (it.get("duration_s") for it in iterations)
        return float(sum(d for d in durations if isinstance(d, int | float) and math.isfinite(d) and d > 0))
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise ArchiveError(
            f"{where}: 'run_time_s' must be a number of seconds, 0 or more, not {value!r}{hint}"
        )
    return float(value)


__all__ = ["RunClock", "earlier_time"]
