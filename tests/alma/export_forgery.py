"""Exports as a careless or hostile person hands them over: a real export of the scripted run,
then files replaced and the manifest's checksums rewritten to match (anyone can do that), so the
loader's own checks pass and what follows is what the export's content does."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any


def forge_export(
    real: Path,
    out: Path,
    *,
    source: str | None = None,
    manifest: dict[str, Any] | None = None,
    memory: str | None = None,
) -> Path:
    """A copy of the export ``real`` at ``out`` with ``design.py`` replaced by ``source``,
    ``memory.json`` by ``memory`` and top-level manifest keys replaced by ``manifest``; the checksums
    are rewritten so the files match the manifest."""
    shutil.copytree(real, out)
    if source is not None:
        (out / "design.py").write_text(source)
    if memory is not None:
        (out / "memory.json").write_text(memory)
    elif source is not None:  # the forger makes the memory claim the new design too
        learned = json.loads((out / "memory.json").read_text())
        learned["design_hash"] = hashlib.sha256(source.encode()).hexdigest()
        (out / "memory.json").write_text(json.dumps(learned))
    m = json.loads((out / "design.json").read_text())
    for name, entry in (m.get("files") or {}).items():
        if isinstance(entry, dict) and (out / name).is_file():
            entry["sha256"] = hashlib.sha256((out / name).read_bytes()).hexdigest()
    if source is not None:
        m["design"]["source_sha256"] = hashlib.sha256(source.encode()).hexdigest()
    m.update(manifest or {})
    (out / "design.json").write_text(json.dumps(m))
    return out
