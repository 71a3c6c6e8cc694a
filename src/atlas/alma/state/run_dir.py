"""The run folder: where a search keeps everything (the viewer reads exactly these files).

runs/<name>/config.json        settings + resolved model names
runs/<name>/archive.json       the archive, written atomically after every change
runs/<name>/trace.jsonl        telemetry events
runs/<name>/run_clock.json     the run's time, ticked while it runs (a killed run resumes with it)
runs/<name>/designs/<id>.py    each design's source
runs/<name>/logs/<id>/         debug_log.txt, calls.jsonl, episodes.jsonl
runs/<name>/logs/<id>-check<n>/  the same for a genome the agent check measured: its collection games
runs/<name>/logs/<id>-test/    the same for a design's games on the held-out test tasks (no-memory-test: no memory's)
"""

from __future__ import annotations

import json
import os
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from atlas.core import jsonsafe
from atlas.errors import ArchiveError, InvalidInputError
from atlas.infra.safe_read import read_limited

CLOCK_FILE = "run_clock.json"


def _umask() -> int:
    umask = os.umask(0o022)  # os.umask sets and returns; there is no getter
    os.umask(umask)
    return umask


_UMASK = _umask()  # read once, at import: setting it later would race with other threads' files


def _mode_for(path: Path) -> int:
    """The file mode ``path`` keeps: its own where it exists, else what a plain ``open`` would give
    under the umask (a temporary file is 0600, which made run folders unreadable to others)."""
    try:
        return path.stat().st_mode & 0o777
    except OSError:
        return 0o666 & ~_UMASK


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that a reader (or a kill) sees the old file or the new one,
    never half of one; the file keeps its mode (a new one gets the umask's)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = _mode_for(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, mode)
        # backslashreplace: a lone surrogate (from a model's reply) is written as the JSON escape
        # \udXXX instead of failing the write; valid text is unchanged
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def confined(root: str | Path, rel: Any, *, under: str = "", what: str = "path") -> Path:
    """``root/rel`` resolved, if it stays inside ``root/under`` (symlinks followed); else
    ``ArchiveError``. Paths read from a run folder (archive.json, config.json, logs) are data a
    user may have downloaded: they must never reach a file outside that folder."""
    top = Path(root).resolve()
    base = (top / under).resolve()
    if not isinstance(rel, str) or not rel or "\x00" in rel or Path(rel).is_absolute():
        raise ArchiveError(
            f"{what} {rel!r} is not a relative path inside {base}: a run folder may only "
            "point at its own files; fix or remove that entry"
        )
    try:
        path = (Path(root) / rel).resolve()
    except (OSError, RuntimeError, ValueError) as exc:
        raise ArchiveError(f"{what} {rel!r} cannot be resolved: {exc}") from exc
    if not (path.is_relative_to(base) and base.is_relative_to(top)):
        raise ArchiveError(
            f"{what} {rel!r} points outside {base} (to {path}): a run folder may only point at "
            "its own files; fix or remove that entry"
        )
    return path


def default_run_name(env: str) -> str:
    return f"{env}-{datetime.now(UTC).strftime('%Y%m%d-%H%M%S')}"


class RunDir:
    """Paths and writers of one run folder."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    @classmethod
    def create(cls, path: str | Path | None = None, *, env: str = "run", root: str | Path = "runs") -> RunDir:
        """A new run folder (``root/<env>-<timestamp>`` when no path is given). A folder that already
        holds a run is refused (``ArchiveError``): only ``RunDir.open`` (``--resume``) continues one."""
        if path is None:
            base = Path(root) / default_run_name(env)
            path, n = base, 1
            while path.exists():
                n += 1
                path = base.with_name(f"{base.name}-{n}")
        rd = cls(path)
        if rd.path.exists() and not rd.path.is_dir():
            raise ArchiveError(f"{rd.path} is a file, not a folder: give --run-dir a new folder")
        held = [n for n in ("config.json", "archive.json", "archive.json.bak") if (rd.path / n).exists()]
        if held:  # a new run would overwrite another run's archive: never without --resume
            raise ArchiveError(
                f"{rd.path} already holds a run ({', '.join(held)}): continue it with "
                f"`atlas run --resume {rd.path}`, or give --run-dir a new folder"
            )
        rd.path.mkdir(parents=True, exist_ok=True)
        rd.designs_dir.mkdir(exist_ok=True)
        rd.logs_root.mkdir(exist_ok=True)
        return rd

    @classmethod
    def open(cls, path: str | Path) -> RunDir:
        """An existing run folder (must hold config.json)."""
        rd = cls(path)
        if not rd.config_path.exists():
            if rd.archive_path.exists():
                raise ArchiveError(
                    f"{rd.path} has lost its config.json (the run's settings): restore it to resume; "
                    "the archive stays readable with `atlas archive show`"
                )
            raise ArchiveError(
                f"{rd.path} is not a run folder (no config.json): give the folder `atlas run` "
                "created (runs/<name>)"
            )
        for d in (rd.designs_dir, rd.logs_root):
            if d.is_symlink() or (d.exists() and not d.is_dir()):
                raise ArchiveError(
                    f"{d} must be a folder inside the run (it is a file or a link); restore it"
                )
            d.mkdir(exist_ok=True)
        return rd

    # ---- paths ---------------------------------------------------------------------------------
    @property
    def config_path(self) -> Path:
        return self.path / "config.json"

    @property
    def archive_path(self) -> Path:
        return self.path / "archive.json"

    @property
    def clock_path(self) -> Path:
        return self.path / CLOCK_FILE

    @property
    def trace_path(self) -> Path:
        return self.path / "trace.jsonl"

    @property
    def designs_dir(self) -> Path:
        return self.path / "designs"

    @property
    def logs_root(self) -> Path:
        return self.path / "logs"

    def logs_dir(self, design_id: str) -> Path:
        return self.logs_root / design_id

    def entry_logs(self, logs_dir: str | None, design_id: str) -> Path:
        """An archive entry's logs folder, confined to ``logs/`` (ArchiveError if it points elsewhere)."""
        return confined(
            self.path, logs_dir or f"logs/{design_id}", under="logs", what=f"logs_dir of {design_id}"
        )

    def entry_log_file(self, logs_dir: str | None, design_id: str, name: str) -> Path:
        """One file of an entry's logs, confined to ``logs/`` (ArchiveError if it, its folder or a
        link on the way points elsewhere: a run folder may be someone else's)."""
        rel = f"{logs_dir or f'logs/{design_id}'}/{name}"
        return confined(self.path, rel, under="logs", what=f"{name} of {design_id}")

    def design_path(self, design_id: str) -> Path:
        return self.designs_dir / f"{design_id}.py"

    # ---- recovery ------------------------------------------------------------------------------
    def remove_stale_tmp(self) -> list[Path]:
        """Delete the temporary files of writes a kill interrupted (``.<name>.*.tmp``); only call
        while no process writes to this run."""
        dirs = [self.path, self.designs_dir, *(p for p in self.logs_root.glob("*") if p.is_dir())]
        stale = [f for d in dirs for f in d.glob(".*.tmp") if f.is_file() and not f.is_symlink()]
        for f in stale:
            f.unlink(missing_ok=True)
        return stale

    def never_saved(self) -> bool:
        """True when no archive.json was ever completed here: no archive, no ``.bak``, and at most the
        one design source a first save writes before its archive.json (a kill between the two)."""
        bak = self.archive_path.with_name(self.archive_path.name + ".bak")
        return (
            not self.archive_path.exists()
            and not bak.exists()
            and len(list(self.designs_dir.glob("*.py"))) <= 1
        )

    # ---- writers -------------------------------------------------------------------------------
    def write_config(self, config: dict[str, Any]) -> None:
        atomic_write_text(self.config_path, json.dumps(config, indent=2, default=str) + "\n")

    def read_config(self) -> dict[str, Any]:
        try:
            raw = read_limited(self.config_path, max_bytes=1_000_000, what="config file", follow_links=True)
            data = jsonsafe.loads(raw, what=str(self.config_path))
        except (OSError, InvalidInputError) as exc:
            raise ArchiveError(
                f"cannot read {self.config_path}: {exc}; restore it (or start a new run)"
            ) from exc
        if not isinstance(data, dict):
            raise ArchiveError(f"{self.config_path} is not a JSON object; restore it (or start a new run)")
        return data

    def write_design(self, design_id: str, source: str) -> str:
        """Write a design's source; returns its path relative to the run folder."""
        atomic_write_text(
            confined(self.path, f"designs/{design_id}.py", under="designs", what="design file"), source
        )
        return f"designs/{design_id}.py"

    def write_logs(
        self,
        design_id: str,
        *,
        calls: list[dict[str, Any]],
        episodes: list[dict[str, Any]],
        debug_log: str,
        extra: dict[str, Any] | None = None,
    ) -> str:
        """Write a design's runtime logs; returns the logs folder relative to the run folder."""
        d = confined(self.path, f"logs/{design_id}", under="logs", what="logs folder")  # never through a link
        d.mkdir(parents=True, exist_ok=True)
        atomic_write_text(d / "calls.jsonl", "".join(json.dumps(c, default=str) + "\n" for c in calls))
        atomic_write_text(d / "episodes.jsonl", "".join(json.dumps(e, default=str) + "\n" for e in episodes))
        atomic_write_text(d / "debug_log.txt", debug_log)
        if extra is not None:
            atomic_write_text(d / "evaluation.json", json.dumps(extra, indent=2, default=str) + "\n")
        return f"logs/{design_id}"


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Read a JSONL file written by ``RunDir`` (missing file → [])."""
    if not path.exists():
        return []
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ArchiveError(f"{path}: corrupt line: {exc}") from exc
    return rows


__all__ = ["RunDir", "atomic_write_text", "default_run_name", "read_jsonl"]
