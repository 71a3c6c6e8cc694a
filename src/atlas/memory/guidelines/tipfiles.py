"""Tips as markdown files a person can read, edit, review in a pull request and delete.

One file per tip in a folder (the Lite tier's default: ``.atlas/tips/`` in the project): a front
matter block of ``key: value`` lines, then the tip's text, which is what is added to a prompt::

    ---
    id: tip-3f2a9c1d0b7e
    kind: strategy
    trigger: tests
    source: cc-1a2b3c4d5e6f7a8b
    created: 2026-11-29T01:02:03Z
    uses: 0
    learner: rules
    ---
    Tests must be run with `make test`, never bare pytest.

The files are the truth: the vector index (``tip_index.TipIndex``) is derived from them and the
hook script (standard library only) parses the same format. Every write is atomic (a temporary
file in the same folder, then ``os.replace``), so a reader never sees half a tip."""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from atlas.core.types import Guideline
from atlas.errors import InvalidInputError

FIELDS = ("id", "kind", "trigger", "source", "created", "uses", "learner")
KINDS = ("strategy", "recovery", "optimization")
MAX_TIP_BYTES = 64_000
_ID = re.compile(r"^[A-Za-z0-9_.-]{1,80}$")


@dataclass
class TipFile:
    """One tip file: its front matter and its text (``content``)."""

    id: str
    content: str
    kind: str = "strategy"
    trigger: str = ""
    source: list[str] = field(default_factory=list)
    created: str = ""
    uses: int = 0
    learner: str = ""
    path: Path | None = None

    def to_text(self) -> str:
        def one_line(value: str) -> str:
            return " ".join(value.split())

        lines = [
            "---",
            f"id: {self.id}",
            f"kind: {self.kind}",
            f"trigger: {one_line(self.trigger)}",
            f"source: {', '.join(self.source)}",
            f"created: {self.created}",
            f"uses: {self.uses}",
            f"learner: {self.learner}",
            "---",
            self.content.strip(),
            "",
        ]
        return "\n".join(lines)

    @classmethod
    def parse(cls, text: str, path: Path | None = None) -> TipFile:
        """A tip from a file's text; InvalidInputError names what is wrong."""
        where = str(path) if path else "tip"
        m = re.match(r"^---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|$)(.*)$", text, re.S)
        if not m:
            raise InvalidInputError(f"{where}: no front matter (the file must start with a --- block)")
        meta: dict[str, str] = {}
        for line in m.group(1).splitlines():
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            key, sep, value = line.partition(":")
            if not sep:
                raise InvalidInputError(f"{where}: front matter line {line!r} is not 'key: value'")
            meta[key.strip().lower()] = value.strip()
        tip_id = meta.get("id", "")
        if not _ID.match(tip_id):
            raise InvalidInputError(
                f"{where}: id must be 1-80 letters, digits, '.', '_' or '-', got {tip_id!r}"
            )
        content = m.group(2).strip()
        if not content:
            raise InvalidInputError(f"{where}: the tip has no text after its front matter")
        kind = meta.get("kind", "strategy") or "strategy"
        if kind not in KINDS:
            raise InvalidInputError(f"{where}: kind must be one of {', '.join(KINDS)}, got {kind!r}")
        try:
            uses = int(meta.get("uses", "0") or 0)
        except ValueError as exc:
            raise InvalidInputError(f"{where}: uses must be a whole number, got {meta['uses']!r}") from exc
        source = [s.strip() for s in meta.get("source", "").split(",") if s.strip()]
        return cls(
            id=tip_id,
            content=content,
            kind=kind,
            trigger=meta.get("trigger", ""),
            source=source,
            created=meta.get("created", ""),
            uses=uses,
            learner=meta.get("learner", ""),
            path=path,
        )

    @classmethod
    def from_guideline(cls, g: Guideline, learner: str = "") -> TipFile:
        steps = "".join(f"\n- {s}" for s in g.implementation_steps)
        return cls(
            id=g.id,
            content=g.content.strip() + steps,
            kind=g.category,
            trigger=g.trigger,
            source=list(g.source_trajectory_ids),
            created=g.created_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            learner=learner or str(g.metadata.get("learner", "")),
        )

    def to_guideline(self) -> Guideline:
        created = _parse_time(self.created)
        return Guideline(
            id=self.id,
            category=self.kind,
            content=self.content,
            trigger=self.trigger,
            source_trajectory_ids=list(self.source),
            metadata={"learner": self.learner, "uses": self.uses, "file": str(self.path or "")},
            **({"created_at": created, "updated_at": created} if created else {}),
        )


def _parse_time(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")) if text else None
    except ValueError:
        return None


def slug(text: str, limit: int = 48) -> str:
    words = re.findall(r"[a-z0-9]+", text.lower())
    out = "-".join(words)[:limit].strip("-")
    return out or "tip"


def file_name(tip: TipFile) -> str:
    return f"{slug(tip.content)}--{tip.id}.md"


def atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that a reader sees the old file or the new one, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def tip_paths(folder: Path) -> list[Path]:
    """The tip files of a folder (``*.md``, not hidden), by name."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob("*.md") if not p.name.startswith(".") and p.is_file())


def read_tips(folder: Path) -> tuple[list[TipFile], list[str]]:
    """Every readable tip in ``folder`` and one line per file that could not be read (why). A tip
    whose id another file already has is reported and left out."""
    return read_tip_files(tip_paths(folder))


def read_tip_file(path: Path) -> TipFile:
    """One tip file; InvalidInputError (or OSError) says why it cannot be read."""
    if path.stat().st_size > MAX_TIP_BYTES:
        raise InvalidInputError(f"{path}: over {MAX_TIP_BYTES} bytes")
    return TipFile.parse(path.read_text(encoding="utf-8"), path)


def read_tip_files(paths: list[Path]) -> tuple[list[TipFile], list[str]]:
    """The tips of ``paths`` (``read_tips`` of a folder's files)."""
    tips, problems, seen = [], [], set()
    for path in paths:
        try:
            tip = read_tip_file(path)
        except (OSError, UnicodeDecodeError, InvalidInputError) as exc:
            problems.append(str(exc))
            continue
        if tip.id in seen:
            problems.append(f"{path}: id {tip.id} is used by another tip file; skipped")
            continue
        seen.add(tip.id)
        tips.append(tip)
    return tips, problems


def find_tip(folder: Path, key: str) -> TipFile:
    """The tip whose id is ``key`` (or starts with it, if only one does), or whose file name is
    ``key``; InvalidInputError when there is none or more than one."""
    tips, _ = read_tips(folder)
    exact = [t for t in tips if t.id == key or (t.path is not None and t.path.name == key)]
    if exact:
        return exact[0]
    prefix = [t for t in tips if t.id.startswith(key)]
    if len(prefix) == 1:
        return prefix[0]
    if not prefix:
        raise InvalidInputError(f"no tip {key!r} in {folder}")
    raise InvalidInputError(f"{key!r} matches {len(prefix)} tips in {folder}; give more of the id")


def write_tip(folder: Path, tip: TipFile, *, overwrite: bool = False) -> Path | None:
    """Write one tip file atomically. A tip whose id already has a file is left as it is (the
    person may have edited it), and one removed with ``remove_tip`` is not written again; None is
    returned then, unless ``overwrite``."""
    existing = next((t for t in read_tips(folder)[0] if t.id == tip.id), None)
    if (existing is not None or tip.id in forgotten(folder)) and not overwrite:
        return None
    path = existing.path if existing and existing.path else folder / file_name(tip)
    atomic_write(path, tip.to_text())
    return path


FORGOTTEN = ".forgotten"  # ids removed with `atlas tips rm`: not written again when learned again


def forgotten(folder: Path) -> set[str]:
    try:
        return set((folder / FORGOTTEN).read_text(encoding="utf-8").split())
    except OSError:
        return set()


def remove_tip(folder: Path, key: str, *, forget: bool = True) -> TipFile:
    """Delete a tip's file; with ``forget`` its id is remembered so that learning the same lesson
    again does not bring it back."""
    tip = find_tip(folder, key)
    assert tip.path is not None
    if forget:
        atomic_write(folder / FORGOTTEN, "\n".join(sorted(forgotten(folder) | {tip.id})) + "\n")
    tip.path.unlink()
    return tip


def count_use(tip: TipFile, n: int = 1) -> None:
    """Add ``n`` to a tip file's ``uses``, unless the file's text changed since it was read, or the
    file changed or went away while the count was being written (a person's edit or deletion wins)."""
    if tip.path is None:
        return
    try:
        before = tip.path.stat()
        current = TipFile.parse(tip.path.read_text(encoding="utf-8"), tip.path)
    except (OSError, UnicodeDecodeError, InvalidInputError):
        return
    if current.content != tip.content:
        return
    text = replace(current, uses=current.uses + n).to_text()
    try:
        now = tip.path.stat()
    except OSError:
        return
    if (now.st_ino, now.st_mtime_ns, now.st_size) != (before.st_ino, before.st_mtime_ns, before.st_size):
        return
    atomic_write(tip.path, text)


def now_text() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


__all__ = [
    "FIELDS",
    "TipFile",
    "atomic_write",
    "count_use",
    "find_tip",
    "forgotten",
    "read_tip_file",
    "read_tip_files",
    "read_tips",
    "remove_tip",
    "tip_paths",
    "write_tip",
]
