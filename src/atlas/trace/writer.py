"""JSONL trace writer: one JSON object per line, each with ``ts`` (ISO, UTC) and ``event``.

The trace is the run's telemetry on disk (the viewer tails it while a run is going), so every
``emit`` is flushed at once and writes from several threads never interleave.
"""

from __future__ import annotations

import json
import os
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from atlas.errors import ArchiveError


def _default(value: Any) -> Any:
    """JSON fallback for values the trace may carry (paths, datetimes, sets, pydantic models)."""
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, set | frozenset):
        return sorted(value)
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if hasattr(value, "to_dict"):
        return value.to_dict()
    return repr(value)


class TraceWriter:
    """Appends events to a JSONL file. ``emit("iteration.stop", generation=2, ...)``."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        try:  # never through a symlink: a run folder someone shared could point trace.jsonl anywhere
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        except OSError as exc:
            raise ArchiveError(
                f"cannot write the trace {self.path}: {exc.strerror or exc} (a trace is never "
                "written through a symbolic link; remove the link)"
            ) from exc
        self._fh: TextIO | None = os.fdopen(fd, "a", encoding="utf-8", errors="backslashreplace")

    def emit(self, event: str, **fields: Any) -> dict[str, Any]:
        """Write one event and return the record written (``ts`` and ``event`` come first)."""
        record: dict[str, Any] = {"ts": datetime.now(UTC).isoformat(), "event": event}
        record.update(fields)
        line = json.dumps(record, default=_default, ensure_ascii=False)
        with self._lock:
            if self._fh is None:
                raise ValueError(f"trace {self.path} is closed")
            self._fh.write(line + "\n")
            self._fh.flush()
        return record

    def close(self) -> None:
        with self._lock:
            if self._fh is not None:
                self._fh.close()
                self._fh = None

    def __enter__(self) -> TraceWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_trace(path: str | Path) -> list[dict[str, Any]]:
    """Read a trace back; a torn last line (a killed run) is skipped, any other bad line raises."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    events: list[dict[str, Any]] = []
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:
            if i == len(lines) - 1:
                break
            raise
    return events


__all__ = ["TraceWriter", "read_trace"]
