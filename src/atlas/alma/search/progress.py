"""What a search shows while it runs: a ``SearchProgress`` receives the run's steps (a design
starts, an episode ends, an iteration ends, a line of text). The library prints the lines only
(``LineProgress``) or nothing (``SilentProgress``, with ``quiet``); the ``atlas`` command passes
its rich progress bars (``atlas.cli.progress.RichProgress``)."""

from __future__ import annotations

import sys
from typing import Any, Protocol, TextIO


class SearchProgress(Protocol):
    """The progress display a ``Search`` drives."""

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

    def iteration_done(self) -> None:
        return None

    def line(self, text: str) -> None:
        return None

    def stop(self) -> None:
        return None


class LineProgress(SilentProgress):
    """The per-design lines as plain text (standard error by default), no bars."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream

    def line(self, text: str) -> None:
        print(text, file=self.stream or sys.stderr, flush=True)


def default_progress(quiet: bool) -> SearchProgress:
    return SilentProgress() if quiet else LineProgress()


__all__ = ["LineProgress", "SearchProgress", "SilentProgress", "default_progress"]
