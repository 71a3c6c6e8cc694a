"""Rich progress bars for `atlas run` and `atlas eval`: iterations, episodes and one line per
design (an ``atlas.alma.search.progress.SearchProgress``); silent when quiet."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console


class RichProgress:
    """Rich progress bars (iterations, episodes) and per-design lines; silent when quiet."""

    def __init__(self, quiet: bool, console: Console | None = None) -> None:
        self.quiet = quiet
        self._bar: Any = None
        self._it: Any = None
        self._ep: Any = None
        self.console = console
        if quiet:
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
        if self._bar is None:
            return
        self._bar.start()
        self._it = self._bar.add_task("iterations", total=max(iterations, 1))
        self._ep = self._bar.add_task("episodes", total=1)

    def design(self, name: str, episodes: int) -> None:
        if self._bar is not None:
            self._bar.update(self._ep, description=f"episodes · {name[:17]}", total=episodes, completed=0)

    def episode(self, _rec: Any = None) -> None:
        if self._bar is not None:
            self._bar.advance(self._ep)

    def iteration_done(self) -> None:
        if self._bar is not None:
            self._bar.advance(self._it)

    def line(self, text: str) -> None:
        if self.quiet or self.console is None:
            return
        self.console.print(text, highlight=False, markup=False, soft_wrap=True)

    def stop(self) -> None:
        if self._bar is not None:
            self._bar.stop()


def episode_progress(console: Console, total: int, *, quiet: bool) -> Any:
    """A rich progress bar over episodes (``advance()``), silent when ``quiet``."""
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

        def advance(self) -> None:
            self.bar.advance(self.task)

    return _Bar()


__all__ = ["RichProgress", "episode_progress"]
