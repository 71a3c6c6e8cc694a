"""The episodes of a headroom measurement as a JSON-lines file, one line written as each episode
ends: a measurement that is killed keeps what it played, and a resumed one plays only the rest."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
from pathlib import Path

from atlas.alma.evaluate.advice_headroom import HeadroomEpisode
from atlas.errors import InvalidInputError

_FIELDS = {f.name for f in dataclasses.fields(HeadroomEpisode)}
_REQUIRED = {
    f.name
    for f in dataclasses.fields(HeadroomEpisode)
    if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
}


def _episode(line: str, where: str) -> HeadroomEpisode:
    try:
        value = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"{where}: not JSON ({exc.msg})") from exc
    if not isinstance(value, dict) or not value.keys() >= _REQUIRED:
        missing = sorted(_REQUIRED - value.keys()) if isinstance(value, dict) else ["(an object)"]
        raise InvalidInputError(f"{where}: not a headroom episode (missing {', '.join(missing)})")
    try:
        return HeadroomEpisode(**{k: v for k, v in value.items() if k in _FIELDS})
    except TypeError as exc:
        raise InvalidInputError(f"{where}: not a headroom episode ({exc})") from exc


def read_episodes(path: Path) -> list[HeadroomEpisode]:
    """The episodes in ``path`` ([] if it does not exist). A last line cut short (the process was
    killed while writing it) is left out; any other line that is not an episode is an error naming it."""
    if not path.exists():
        return []
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInputError(f"{path}: not a text file of headroom episodes ({exc.reason})") from exc
    lines = text.split("\n")
    torn = lines[-1] if not text.endswith("\n") else ""
    episodes = []
    for number, line in enumerate(lines[:-1], 1):
        if line.strip():
            episodes.append(_episode(line, f"{path}, line {number}"))
    if torn.strip():
        with contextlib.suppress(InvalidInputError):  # cut short by a kill: that episode is played again
            episodes.append(_episode(torn, f"{path}, line {len(lines)}"))
    return episodes


def start(path: Path, kept: list[HeadroomEpisode]) -> None:
    """Begin the file anew with the episodes ``kept`` (atomically: a kill leaves the old file or the new)."""
    from atlas.alma.state.run_dir import atomic_write_text

    atomic_write_text(path, "".join(json.dumps(dataclasses.asdict(e)) + "\n" for e in kept))


def append_episode(path: Path, episode: HeadroomEpisode) -> None:
    """Add one line and push it to disk before the next episode starts."""
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(dataclasses.asdict(episode)) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


__all__ = ["append_episode", "read_episodes", "start"]
