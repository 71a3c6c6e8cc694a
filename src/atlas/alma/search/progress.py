"""What a search shows while it runs: a ``SearchProgress`` receives the run's steps (a design
starts, an episode ends, an iteration ends, a line of text). The library prints plain, timestamped
lines (``PlainProgress``) or nothing (``SilentProgress``, with ``quiet``); the ``atlas`` command
passes its rich progress bars on a terminal and the same plain lines elsewhere
(``atlas.cli.progress.RichProgress``)."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol, TextIO

HEARTBEAT_S = 60.0  # a long phase prints a line at least this often when no other line came


class SearchProgress(Protocol):
    """The progress display a ``Search`` drives. A display may also have ``design_done()``, called when
    a design's play ends (a staged design can stop before its last episode)."""

    def start(self, iterations: int) -> None: ...
    def design(self, name: str, episodes: int) -> None: ...
    def episode(self, _rec: Any = None) -> None: ...
    def iteration_done(self) -> None: ...
    def line(self, text: str) -> None: ...
    def stop(self) -> None: ...


class SilentProgress:
    """Shows nothing (``quiet``)."""

    def start(self, iterations: int) -> None:
        return None

    def design(self, name: str, episodes: int) -> None:
        return None

    def episode(self, _rec: Any = None) -> None:
        return None

    def design_done(self) -> None:
        return None

    def iteration_done(self) -> None:
        return None

    def line(self, text: str) -> None:
        return None

    def stop(self) -> None:
        return None


def elapsed(seconds: float) -> str:
    """``42s``, ``5m02s``, ``1h05m``."""
    s = int(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


class PlainProgress(SilentProgress):
    """Plain lines for output that is not a terminal (a log file, ``nohup``, CI, a notebook): each
    line with the wall-clock time and the time since the start; a line when a design starts playing
    and when it is scored (the search's own lines), and, while a phase runs long with nothing else
    to say, a line every ``every_s`` seconds saying what is being played and how far it got."""

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        every_s: float = HEARTBEAT_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream = stream
        self.every_s = every_s
        self.clock = clock
        self._lock = threading.Lock()
        self._t0 = self._last = clock()
        self._name: str | None = None
        self._episodes = self._played = 0
        self._since = self._t0
        self._generations = self._done = 0
        self._quit = threading.Event()
        self._beat: threading.Thread | None = None

    def _print(self, text: str) -> None:
        with self._lock:
            now = self.clock()
            self._last = now
            stamp = f"{time.strftime('%H:%M:%S')} +{elapsed(now - self._t0):>6}"
            print(f"{stamp}  {text}", file=self.stream or sys.stderr, flush=True)

    def start(self, iterations: int) -> None:
        self._generations = iterations
        self._print(f"started: up to {iterations} generations" if iterations else "started")
        if self.every_s > 0 and self._beat is None:
            self._quit.clear()
            self._beat = threading.Thread(target=self._heartbeat, name="atlas-progress", daemon=True)
            self._beat.start()

    def design(self, name: str, episodes: int) -> None:
        with self._lock:
            self._name, self._episodes, self._played, self._since = name, episodes, 0, self.clock()
        self._print(f"playing   {name}: {episodes} episodes")

    def episode(self, _rec: Any = None) -> None:
        with self._lock:
            self._played += 1
            due = self.every_s > 0 and self.clock() - self._last >= self.every_s
        if due:
            self._print(self.status())

    def design_done(self) -> None:
        with self._lock:
            self._name = None

    def iteration_done(self) -> None:
        with self._lock:
            self._done += 1

    def line(self, text: str) -> None:
        self._print(text)

    def status(self) -> str:
        """What is under way: the design being played and its episodes, else the generation."""
        with self._lock:
            now = self.clock()
            if self._name is not None and self._played < self._episodes:
                return (
                    f"...       {self._name}: {self._played}/{self._episodes} episodes, "
                    f"{elapsed(now - self._since)} on it"
                )
            if self._generations and self._done < self._generations:
                return (
                    f"...       generation {self._done + 1} of {self._generations} under way, "
                    f"{elapsed(now - self._last)} since the last line"
                )
            return f"...       working, {elapsed(now - self._last)} since the last line"

    def _heartbeat(self) -> None:
        while not self._quit.wait(min(self.every_s / 4, 5.0)):
            if self.clock() - self._last >= self.every_s:
                self._print(self.status())

    def stop(self) -> None:
        self._quit.set()
        if self._beat is not None:
            self._beat.join(timeout=5)
            self._beat = None


@contextmanager
def showing(progress: SearchProgress, name: str, episodes: int) -> Iterator[None]:
    """Show ``name`` as playing ``episodes`` episodes for the block, and as done after it (a display
    without ``design_done`` is told only the start)."""
    progress.design(name, episodes)
    try:
        yield
    finally:
        done = getattr(progress, "design_done", None)
        if callable(done):
            done()


LineProgress = PlainProgress  # the library's default display, under its earlier name


def default_progress(quiet: bool) -> SearchProgress:
    return SilentProgress() if quiet else PlainProgress()


__all__ = [
    "HEARTBEAT_S",
    "LineProgress",
    "PlainProgress",
    "SearchProgress",
    "SilentProgress",
    "default_progress",
    "elapsed",
    "showing",
]
