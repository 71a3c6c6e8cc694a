"""A design's learned memory beside the archive: ``memory/<id>.json``, written atomically, read back
with a clear error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from atlas.alma.state.run_dir import atomic_write_text, confined
from atlas.errors import ArchiveError, InvalidInputError
from atlas.infra.safe_read import read_json

if TYPE_CHECKING:
    from atlas.alma.state.archive import ArchiveEntry

MAX_LEARNED_BYTES = 64_000_000  # a design's learned memory larger than this is not saved (the entry says so)


def save_learned(root: Path, entry: ArchiveEntry) -> None:
    """Write ``entry.learned`` to ``memory/<id>.json`` (atomic); over the cap it is not written and
    ``metadata['learned_memory']`` says why."""
    try:
        text = json.dumps(entry.learned, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:  # a host adapter's state that is not plain JSON
        entry.metadata["learned_memory"] = f"not saved: not JSON-serializable ({exc})"
        return
    if len(text) > MAX_LEARNED_BYTES:
        entry.metadata["learned_memory"] = (
            f"not saved: {len(text):,} bytes of JSON, over the cap of {MAX_LEARNED_BYTES:,}"
        )
        return
    rel = f"memory/{entry.id}.json"
    atomic_write_text(confined(root, rel, under="memory", what=f"memory of {entry.id}"), text + "\n")
    entry.memory_path = rel


def read_learned(path: Path, design_id: str = "") -> dict[str, Any]:
    """A learned-memory file written by ``Archive.save`` (a clear ``ArchiveError`` when unreadable)."""
    who = f" of {design_id}" if design_id else ""
    what = f"the learned memory{who}"
    try:  # a plain file within the cap (never a FIFO or a link to a device), JSON within limits
        data = read_json(path, max_bytes=MAX_LEARNED_BYTES + 1, what=what)
    except InvalidInputError as exc:
        raise ArchiveError(f"cannot read {what} at {path}: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("memory"), dict):
        raise ArchiveError(f"{path} is not a learned memory (no 'memory' object)")
    return data


__all__ = ["MAX_LEARNED_BYTES", "read_learned", "save_learned"]
