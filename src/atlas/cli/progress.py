"""Progress for `atlas run`, `atlas eval` and `atlas headroom`: rich progress bars and one line per
design on a terminal; plain, timestamped lines when the output is not a terminal (a log file,
``nohup``, CI, a notebook), as ``atlas.alma.search.progress.PlainProgress`` prints them; silent when
quiet."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any, TextIO

from atlas.alma.search.progress import HEARTBEAT_S, PlainProgress, elapsed

if TYPE_CHECKING:
    from rich.console import Console


def plain_stream(stdout_ok: bool = True) -> TextIO | None:
    """Where plain progress lines go, or None when both outputs are terminals (rich bars then).
    Redirected standard output (``atlas run ... > log``) gets them, so the log shows the run as it
    goes, unless it must hold one JSON object (``stdout_ok=False``): then standard error."""
    if sys.stdout.isatty() and sys.stderr.isatty():
        return None
    return sys.stdout if stdout_ok and not sys.stdout.isatty() else sys.stderr


class RichProgress:
    """Rich progress bars (iterations, episodes) and per-design lines on a terminal, plain lines
    elsewhere (``PlainProgress``); silent when quiet."""

    def __init__(self, quiet: bool, console: Console | None = None, *, stdout_ok: bool = True) -> None:
        self.quiet = quiet
        self._bar: Any = None
        self._it: Any = None
        self._ep: Any = None
        self.console = console
        self.plain: PlainProgress | None = None
        if quiet:
            return
        stream = plain_stream(stdout_ok) if console is None else None
        if stream is not None:
            self.plain = PlainProgress(stream)
            return
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
        from rich.progress import Progress as Bars

        self.console = console or Console(stderr=True)
        self._bar = Bars(
            TextColumn("{task.description:<28}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=self.console,
            transient=True,
        )

    def start(self, iterations: int) -> None:
        if self.plain is not None:
            return self.plain.start(iterations)
        if self._bar is None:
            return
        self._bar.start()
        self._it = self._bar.add_task("iterations", total=max(iterations, 1))
        self._ep = self._bar.add_task("episodes", total=1)

    def design(self, name: str, episodes: int) -> None:
        if self.plain is not None:
            return self.plain.design(name, episodes)
        if self._bar is not None:
            self._bar.update(self._ep, description=f"episodes · {name[:17]}", total=episodes, completed=0)

    def episode(self, _rec: Any = None) -> None:
        if self.plain is not None:
            return self.plain.episode(_rec)
        if self._bar is not None:
            self._bar.advance(self._ep)

    def design_done(self) -> None:
        if self.plain is not None:
            self.plain.design_done()

    def iteration_done(self) -> None:
        if self.plain is not None:
            return self.plain.iteration_done()
        if self._bar is not None:
            self._bar.advance(self._it)

    def line(self, text: str) -> None:
        if self.plain is not None:
            return self.plain.line(text)
        if self.quiet or self.console is None:
            return
        self.console.print(text, highlight=False, markup=False, soft_wrap=True)

    def stop(self) -> None:
        if self.plain is not None:
            return self.plain.stop()
        if self._bar is not None:
            self._bar.stop()


def episode_progress(console: Console, total: int, *, quiet: bool = False, stdout_ok: bool = True) -> Any:
    """Progress over ``total`` episodes (``advance(episode=None)``): a rich bar on a terminal, plain
    lines elsewhere (one per episode: its condition, task, score and time; a line a minute while
    none ends), nothing when ``quiet``."""
    stream = None if quiet else plain_stream(stdout_ok)
    if stream is not None:
        return _PlainEpisodes(stream, total)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    class _Bar:
        def __init__(self) -> None:
            self.bar = Progress(
                TextColumn("episodes"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=console,
                disable=quiet,
                transient=False,
            )
            self.task = self.bar.add_task("episodes", total=total)

        def __enter__(self) -> _Bar:
            self.bar.__enter__()
            return self

        def __exit__(self, *exc: Any) -> None:
            self.bar.__exit__(*exc)

        def advance(self, _episode: Any = None) -> None:
            self.bar.advance(self.task)

    return _Bar()


class _PlainEpisodes:
    """``episode_progress`` when the output is not a terminal."""

    def __init__(self, stream: TextIO, total: int, every_s: float = HEARTBEAT_S) -> None:
        self.progress = PlainProgress(stream, every_s=every_s)
        self.total = total
        self.done = 0
        self.t0 = time.monotonic()

    def __enter__(self) -> _PlainEpisodes:
        self.progress.start(0)
        self.progress.design("all conditions", self.total)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.progress.line(
            f"played    {self.done}/{self.total} episodes in {elapsed(time.monotonic() - self.t0)}"
        )
        self.progress.stop()

    def advance(self, episode: Any = None) -> None:
        self.done += 1
        self.progress.episode(episode)
        if episode is None:
            return
        what = " ".join(
            str(v)
            for v in (getattr(episode, "condition", None), getattr(episode, "task_id", None))
            if v is not None
        )
        score = getattr(episode, "score", None)
        took = getattr(episode, "duration_s", None)
        self.progress.line(
            f"episode   {self.done}/{self.total} {what}"
            + (f"  score {score:.3f}" if isinstance(score, float) else "")
            + (f"  {elapsed(took)}" if isinstance(took, int | float) else "")
        )


__all__ = ["RichProgress", "episode_progress", "plain_stream"]
