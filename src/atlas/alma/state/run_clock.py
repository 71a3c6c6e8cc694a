"""The run's own time, kept with its archive (``run_time_s``) so that ``--max-minutes`` caps the whole
run, its resumed parts included, not the time between them.

The archive is saved when a design's evaluation ends, which on a slow environment can be half an
hour; so a running search also ticks its time into ``run_clock.json`` beside the archive, and a
killed run resumes with the time it had really run, not the time of its last save."""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from pathlib import Path
from typing import Any

from atlas.alma.state.run_dir import CLOCK_FILE, atomic_write_text
from atlas.errors import ArchiveError, InvalidInputError
from atlas.infra.safe_read import read_limited

TICK_S = 15.0

log = logging.getLogger(__name__)


class RunClock:
    """Seconds the run ran before this invocation (``earlier_s``) plus this invocation's, once started."""

    def __init__(self, earlier_s: float = 0.0) -> None:
        self.earlier_s = earlier_s
        self._start: float | None = None
        self._ticking: threading.Event | None = None

    def start(self, keep: Path | None = None, every_s: float = TICK_S) -> None:
        """Start counting; with ``keep``, write the run's time to that file every ``every_s`` seconds
        until :meth:`stop`."""
        self._start = time.perf_counter()
        if keep is not None and self._ticking is None:
            self._ticking = stop = threading.Event()
            threading.Thread(target=self._tick, args=(keep, every_s, stop), daemon=True).start()

    def stop(self) -> None:
        """Stop ticking (idempotent); the last tick was at most ``every_s`` seconds ago."""
        if self._ticking is not None:
            self._ticking.set()
            self._ticking = None

    def run_time_s(self) -> float:
        return self.earlier_s + (time.perf_counter() - self._start if self._start is not None else 0.0)

    def _tick(self, keep: Path, every_s: float, stop: threading.Event) -> None:
        while not stop.wait(every_s):
            try:
                atomic_write_text(keep, json.dumps({"run_time_s": round(self.run_time_s(), 3)}) + "\n")
            except OSError as exc:  # a full disk must not end the search; the archive keeps its time
                log.warning("could not keep the run's time in %s: %s", keep, exc)


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


def ticked_time(run_root: Path) -> float:
    """The time a running search last ticked into ``run_clock.json`` (0 when there is none). The file
    is only a help for resuming, so one that cannot be read is ignored with a warning, not an error."""
    path = run_root / CLOCK_FILE
    if not path.exists():
        return 0.0
    try:
        value = json.loads(read_limited(path, max_bytes=4096, what="run clock")).get("run_time_s")
    except (InvalidInputError, OSError, ValueError, AttributeError) as exc:
        log.warning("ignoring %s: %s", path, exc)
        return 0.0
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        log.warning("ignoring %s: 'run_time_s' is %r, not a number of seconds", path, value)
        return 0.0
    return float(value)


__all__ = ["RunClock", "earlier_time", "ticked_time"]
