"""The evolutionary archive: every design tried, with its scores, lineage and where its logs are.

Persistence is the run folder's ``archive.json`` (its format: the models below; the run folder:
docs/design.md, "Files a run writes"), written atomically; the previous good version is kept as
``archive.json.bak``. Sources live beside it in ``designs/<id>.py`` (``source_path``); ``load``
reads the scores, ``hydrate`` reads the sources back and rebuilds each ``Design``. ``export`` writes one self-contained JSON with sources inline,
which ``load`` also accepts. What a design learned in collection (its memory dict, vector items and
graph: ``entry.learned``) is saved beside it in ``memory/<id>.json`` (``memory_path``), atomically
and only under ``MAX_LEARNED_BYTES``; ``hydrate`` reads it back too.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from atlas.alma.state.learned import MAX_LEARNED_BYTES, read_learned, save_learned
from atlas.alma.state.novelty import novelty_scores
from atlas.alma.state.run_clock import RunClock, earlier_time, ticked_time
from atlas.alma.state.run_dir import atomic_write_text, confined
from atlas.alma.state.search_record import SearchRecord, migrate_entry
from atlas.core import jsonsafe
from atlas.errors import ArchiveError, InvalidInputError
from atlas.infra.safe_read import read_limited

if TYPE_CHECKING:
    from atlas.alma.design import Design

ARCHIVE_VERSION = 1
MAX_ARCHIVE_BYTES = 512_000_000  # an archive.json bigger than this is damaged, not read
Origin = Literal["seed", "baseline", "meta", "host"]
Status = Literal["ok", "invalid", "error"]


_ID = re.compile(r"d-(\d+)")
_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")  # an id names files: no separators, no leading dot


def _now() -> str:
    return datetime.now(UTC).isoformat()


def empty_usage() -> dict[str, Any]:
    return {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0, "cost_usd": 0.0, "calls": 0}


class TaskResult(BaseModel):
    """One episode's outcome, as the archive keeps it."""

    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)

    task_id: str
    phase: Literal["collection", "deployment"] = "deployment"
    success: bool = False
    score: float = 0.0
    steps: int = 0
    label: str | None = None  # C1 / D3: the episode's tag in the runtime logs
    scenario: str | None = None  # the task's scenario (family): see atlas.alma.state.goal_completion
    # the highest score the episode reached on its way (a task advanced, then ruined, ends lower); None
    # where it was not recorded, and then left out when written (an older archive reads and writes as it was)
    highest: float | None = Field(default=None, exclude_if=lambda v: v is None)


class ArchiveEntry(BaseModel):
    """One design in the archive. Scores are None for designs that never ran (status != "ok")."""

    model_config = ConfigDict(extra="ignore", validate_assignment=True, allow_inf_nan=False)

    id: str
    name: str
    origin: Origin = "meta"
    generation: int = 0
    parent_ids: list[str] = Field(default_factory=list)
    source_path: str | None = None
    # SHA-256 of the source that was evaluated: a design file edited or swapped after the run is
    # refused by ``hydrate`` (it would be exported, served or resumed under another design's scores).
    source_sha256: str | None = None
    memory_path: str | None = None  # the learned memory (``memory/<id>.json``), when saved
    status: Status = "ok"
    errors: list[str] = Field(default_factory=list)
    collection_score: float | None = None
    deployment_score: float | None = None
    normalized_score: float | None = None
    # Paired difference with no memory over the same deployment tasks: {"mean", "ci95": [lo, hi], "n"}.
    vs_no_memory: dict[str, Any] | None = None
    # "full": played every deployment task; "minibatch": staged evaluation stopped it early (it could
    # no longer beat the best design), so its scores cover only the tasks it played and claim nothing.
    stage: Literal["full", "minibatch"] = "full"
    per_task: list[TaskResult] = Field(default_factory=list)
    novelty: float | None = None
    times_sampled: int = 0
    critique: str | None = None
    logs_dir: str | None = None
    usage: dict[str, Any] = Field(default_factory=empty_usage)
    created_at: str = Field(default_factory=_now)
    # How the search made and screened it (operator, genome, probe scores): ``search_record.py``.
    search: SearchRecord | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)  # evaluation facts: eval_duration_s, staged, ...

    _source: str | None = PrivateAttr(default=None)
    _design: Any = PrivateAttr(default=None)
    _learned: dict[str, Any] | None = PrivateAttr(default=None)

    @property
    def learned(self) -> dict[str, Any] | None:
        """The design's stores after collection (a ``DesignRunner.snapshot()`` plus ``embedder``),
        once known (set by the search, or read back by ``hydrate``)."""
        return self._learned

    @learned.setter
    def learned(self, value: dict[str, Any] | None) -> None:
        self._learned = value

    @model_validator(mode="before")
    @classmethod
    def _search_from_metadata(cls, data: Any, info: ValidationInfo) -> Any:
        """Archives written before ``search`` kept its fields in ``metadata``: moved on read (not
        when one field is assigned: pydantic then passes the whole entry with that field's value)."""
        return data if info.field_name is not None else migrate_entry(data)

    @field_validator("id")
    @classmethod
    def _safe_id(cls, v: str) -> str:
        if not _SAFE_ID.fullmatch(v):
            raise ValueError(
                "an id is 1-100 letters, digits, '.', '_' or '-' (it names files in the run folder)"
            )
        return v

    @field_validator("source_path", "logs_dir", "memory_path")
    @classmethod
    def _relative_path(cls, v: str | None) -> str | None:
        if v is not None and (
            not v or "\x00" in v or v.startswith(("/", "\\")) or ".." in re.split(r"[/\\]", v)
        ):
            raise ValueError("must be a relative path inside the run folder (no '..', not absolute)")
        return v

    @property
    def source(self) -> str | None:
        """The design's source, once known (set at creation, or read back by ``hydrate``)."""
        return self._source

    @source.setter
    def source(self, value: str | None) -> None:
        self._source = value
        self._design = None

    @property
    def design(self) -> Design:
        """The ``Design`` object (needs the source: call ``Archive.hydrate`` after ``load``)."""
        if self._design is None:
            if self._source is None:
                raise ArchiveError(f"entry {self.id} has no source loaded: call Archive.hydrate() first")
            from atlas.alma.design import Design

            self._design = Design(
                id=self.id,
                name=self.name,
                source=self._source,
                parent_ids=list(self.parent_ids),
                origin=self.origin,
                metadata={"generation": self.generation},
            )
        return self._design

    @property
    def scored(self) -> bool:
        return self.status == "ok" and self.normalized_score is not None

    def to_json_dict(self, *, with_source: bool = False) -> dict[str, Any]:
        d = self.model_dump(mode="json")
        if with_source:
            d["source"] = self._source
        return d


class Archive:
    """Designs tried so far, the no-memory baseline and the iteration records."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path: Path | None = Path(path) if path is not None else None
        self.entries: list[ArchiveEntry] = []
        self.baseline: dict[str, Any] | None = None
        self.iterations: list[dict[str, Any]] = []
        self.held_out: dict[str, Any] | None = None  # the run's result on test tasks (search.held_out)
        self.clock = RunClock()  # the run's own time, resumed parts included

    # ---- collection-like ------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.entries)

    def __iter__(self) -> Iterator[ArchiveEntry]:
        return iter(self.entries)

    def __contains__(self, design_id: object) -> bool:
        return any(e.id == design_id for e in self.entries)

    def get(self, design_id: str) -> ArchiveEntry:
        for e in self.entries:
            if e.id == design_id:
                return e
        raise KeyError(design_id)

    def find(self, *, name: str | None = None, origin: str | None = None) -> list[ArchiveEntry]:
        return [
            e
            for e in self.entries
            if (name is None or e.name == name) and (origin is None or e.origin == origin)
        ]

    def next_id(self) -> str:
        """``d-0001``, ``d-0002``, … in insertion order (deterministic, so resumed runs match).
        Never an id already taken, even when an edited archive has gaps."""
        taken = [int(m.group(1)) for e in self.entries if (m := _ID.fullmatch(e.id))]
        return f"d-{max([len(self.entries), *taken]) + 1:04d}"

    def add(self, entry: ArchiveEntry, source: str | None = None) -> ArchiveEntry:
        if entry.id in self:
            raise ArchiveError(f"duplicate archive entry {entry.id}")
        if source is not None:
            entry.source = source
        self.entries.append(entry)
        self.refresh_novelty()
        return entry

    # ---- selection ------------------------------------------------------------------------------
    def scored(self) -> list[ArchiveEntry]:
        """Entries with scores: the ones that can be parents."""
        return [e for e in self.entries if e.scored]

    def best(self, *, origin: str | None = None) -> ArchiveEntry | None:
        """Highest normalized score among fully evaluated designs (ties: higher deployment score,
        then the earlier entry). Designs stopped after a minibatch are never the best."""
        cands = [e for e in self.scored() if e.stage == "full" and (origin is None or e.origin == origin)]
        if not cands:
            return None
        order = {e.id: i for i, e in enumerate(self.entries)}
        return max(cands, key=lambda e: (e.normalized_score, e.deployment_score or 0.0, -order[e.id]))

    def episodes_saved(self) -> int:
        """Deployment episodes that staged evaluation did not play (designs stopped early)."""
        return sum(int(e.metadata.get("staged", {}).get("saved", 0)) for e in self.entries)

    def refresh_novelty(self) -> None:
        """Recompute every entry's novelty against the others (entries whose source is known)."""
        sources = {e.id: e.source for e in self.entries if e.source is not None and e.status != "invalid"}
        for eid, nov in novelty_scores(sources).items():
            self.get(eid).novelty = round(nov, 6)

    # ---- persistence ----------------------------------------------------------------------------
    def to_dict(self, *, with_sources: bool = False) -> dict[str, Any]:
        return {
            "version": ARCHIVE_VERSION,
            "baseline": self.baseline,
            "entries": [e.to_json_dict(with_source=with_sources) for e in self.entries],
            "iterations": self.iterations,
            "run_time_s": round(self.clock.run_time_s(), 3),
            **({"held_out": self.held_out} if self.held_out is not None else {}),
        }

    def save(self, path: str | Path | None = None) -> Path:
        """Write archive.json atomically (the old one is kept as ``.bak``) and any design source
        not yet on disk under ``designs/``."""
        target = Path(path) if path is not None else self.path
        if target is None:
            raise ArchiveError("Archive.save needs a path (none given and none loaded)")
        self.path = target
        root = target.parent
        for e in self.entries:
            if e.source is None:
                continue
            e.source_sha256 = _sha(e.source)
            if e.source_path is None:
                e.source_path = f"designs/{e.id}.py"
            src_file = confined(root, e.source_path, under="designs", what=f"source_path of {e.id}")
            if not src_file.exists() or src_file.read_text(encoding="utf-8") != e.source:
                atomic_write_text(src_file, e.source)
        for e in self.entries:
            if e.learned is not None and e.memory_path is None:
                save_learned(root, e)
        text = json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n"
        if target.exists():  # the previous good version, itself written atomically
            atomic_write_text(target.with_name(target.name + ".bak"), target.read_text(encoding="utf-8"))
        atomic_write_text(target, text)
        return target

    def export(self, path: str | Path) -> Path:
        """One self-contained JSON with every source inline (needs hydrated sources)."""
        missing = [e.id for e in self.entries if e.source is None and e.source_path]
        if missing:
            self.hydrate()
        target = Path(path)
        atomic_write_text(
            target, json.dumps(self.to_dict(with_sources=True), indent=2, ensure_ascii=False) + "\n"
        )
        return target

    @classmethod
    def from_dict(cls, data: Any, *, path: Path | None = None) -> Archive:
        where = str(path) if path else "archive data"
        hint = _recovery_hint(path)
        if not isinstance(data, dict) or "entries" not in data:
            raise ArchiveError(f"{where} is not an ALMA archive (no 'entries'){hint}")
        if data.get("version") != ARCHIVE_VERSION:
            raise ArchiveError(f"{where}: unsupported archive version {data.get('version')!r}{hint}")
        entries, baseline, iterations = data["entries"], data.get("baseline"), data.get("iterations") or []
        if not isinstance(entries, list):
            raise ArchiveError(f"{where}: 'entries' must be a list, not {type(entries).__name__}{hint}")
        if baseline is not None and not isinstance(baseline, dict):
            raise ArchiveError(
                f"{where}: 'baseline' must be an object or null, not {type(baseline).__name__}{hint}"
            )
        score = (baseline or {}).get("score")
        if score is not None and (
            isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score)
        ):
            raise ArchiveError(
                f"{where}: the baseline score must be a finite number or null, not {score!r}{hint}"
            )
        if not isinstance(iterations, list) or not all(
            isinstance(it, dict) and isinstance(it.get("generation"), int) for it in iterations
        ):
            raise ArchiveError(
                f"{where}: 'iterations' must be a list of objects with an integer 'generation'{hint}"
            )
        arch = cls(path)
        arch.baseline = baseline
        arch.iterations = list(iterations)
        arch.held_out = data["held_out"] if isinstance(data.get("held_out"), dict) else None
        saved_s = earlier_time(data.get("run_time_s"), arch.iterations, where, hint)
        arch.clock = RunClock(max(saved_s, ticked_time(path.parent)) if path is not None else saved_s)
        for i, raw in enumerate(entries):
            try:
                entry = ArchiveEntry.model_validate(raw)
            except ValidationError as exc:
                label = (
                    raw.get("id") if isinstance(raw, dict) and isinstance(raw.get("id"), str) else f"#{i + 1}"
                )
                raise ArchiveError(f"{where}: invalid entry {label}: {_problems(exc)}{hint}") from exc
            if isinstance(raw, dict) and isinstance(raw.get("source"), str):
                entry.source = raw["source"]
            arch.entries.append(entry)
        counts = Counter(e.id for e in arch.entries)  # linear: 20,000 entries load in about a second
        dups = sorted(i for i, n in counts.items() if n > 1)
        if dups:
            raise ArchiveError(f"{where}: duplicate entry ids {', '.join(dups)}{hint}")
        return arch

    @classmethod
    def load(cls, path: str | Path) -> Archive:
        """Read an archive.json (or a run folder holding one, or an export file)."""
        p = Path(path)
        if p.is_dir():
            p = p / "archive.json"
        if not p.exists():
            raise ArchiveError(
                f"no archive at {p}{_recovery_hint(p) if p.with_name(p.name + '.bak').exists() else ''}"
            )
        try:  # a regular file within the cap: a FIFO or a link to a device is refused, not read
            raw = read_limited(p, max_bytes=MAX_ARCHIVE_BYTES, what="archive", follow_links=True)
        except InvalidInputError as exc:
            raise ArchiveError(f"{exc}{_recovery_hint(p)}") from exc
        try:
            data = jsonsafe.loads(raw, what=str(p), max_bytes=MAX_ARCHIVE_BYTES)
        except InvalidInputError as exc:
            raise ArchiveError(f"{p} is corrupt ({exc}){_recovery_hint(p)}") from exc
        return cls.from_dict(data, path=p)

    def hydrate(self, ids: Iterable[str] | None = None) -> Archive:
        """Read every entry's source back (from ``designs/<id>.py``; only ``ids`` when given) so
        ``entry.design`` works and novelty can be computed; returns self."""
        root = self.path.parent if self.path is not None else Path(".")
        wanted = None if ids is None else set(ids)
        for e in self.entries:
            if e.source is not None or e.source_path is None or (wanted is not None and e.id not in wanted):
                continue
            f = confined(root, e.source_path, under="designs", what=f"source_path of {e.id}")
            try:
                e.source = f.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise ArchiveError(
                    f"cannot read the source of {e.id} ({e.name}) at {f}: {exc}; restore that file (an "
                    "`atlas archive export` file holds every source inline) and try again"
                ) from exc
        for e in self.entries:
            if e.learned is None and e.memory_path and (wanted is None or e.id in wanted):
                try:
                    e.learned = read_learned(
                        confined(root, e.memory_path, under="memory", what=f"memory_path of {e.id}"), e.id
                    )
                except ArchiveError as exc:
                    raise ArchiveError(
                        f"{exc}; restore that file, or remove it and the entry's memory_path to go "
                        "on without it (scores and sources do not depend on it)"
                    ) from exc
        for e in self.entries:
            if wanted is None or e.id in wanted:
                _verify_source(e)
        self.refresh_novelty()
        return self

    # ---- presentation ---------------------------------------------------------------------------
    def table(self) -> list[dict[str, Any]]:
        """Rows for a results table, in archive order."""
        return [
            {
                "id": e.id,
                "name": e.name,
                "origin": e.origin,
                "generation": e.generation,
                "status": e.status,
                "collection": e.collection_score,
                "deployment": e.deployment_score,
                "normalized": e.normalized_score,
                "stage": e.stage,
                "novelty": e.novelty,
                "sampled": e.times_sampled,
            }
            for e in self.entries
        ]

    def extend(self, entries: Iterable[ArchiveEntry]) -> None:
        for e in entries:
            self.add(e)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _verify_source(e: ArchiveEntry) -> None:
    """The source read back is the one the run evaluated (its recorded hash), and the learned memory
    belongs to it (its ``design_hash``); else ``ArchiveError``."""
    if e.source is None:
        return
    got = _sha(e.source)
    learned_hash = (e.learned or {}).get("design_hash") if isinstance(e.learned, dict) else None
    where = e.source_path or f"designs/{e.id}.py"
    if e.source_sha256 is not None and got != e.source_sha256:
        raise ArchiveError(
            f"{where} is not the design {e.id} ({e.name}) the run evaluated (its SHA-256 differs from "
            "archive.json's source_sha256: edited or swapped after the run); restore the original file "
            "— the scores belong to it — or evaluate the new source with `atlas eval`"
        )
    if isinstance(learned_hash, str) and learned_hash != got:
        raise ArchiveError(
            f"{where} is not the design whose learned memory is {e.memory_path} (design_hash differs: "
            "edited or swapped after the run); restore the original file, or evaluate the new source "
            "with `atlas eval`"
        )


def _recovery_hint(path: Path | None) -> str:
    """How to get a good archive back: the ``.bak`` beside it, when there is one."""
    if path is None:
        return ""
    bak = path.with_name(path.name + ".bak")
    if bak.exists():
        return f"; the previous good version is kept at {bak} (copy it over {path.name} to recover)"
    return "; no backup (.bak) exists: fix the file by hand or start a new run"


def _problems(exc: ValidationError) -> str:
    """Pydantic's errors in one short line: ``name: Field required; status: Input should be ...``."""
    return "; ".join(f"{'.'.join(str(x) for x in e['loc']) or 'entry'}: {e['msg']}" for e in exc.errors()[:5])


__all__ = [
    "ARCHIVE_VERSION",
    "MAX_LEARNED_BYTES",
    "Archive",
    "ArchiveEntry",
    "TaskResult",
    "empty_usage",
    "read_learned",
]
