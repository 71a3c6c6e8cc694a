"""Read an ALMA run folder (``runs/<name>/``) for the viewer and the report.

The folder is the one ``atlas.alma.state.run_dir.RunDir`` writes: ``config.json``, ``archive.json`` (atomic),
``trace.jsonl``, ``designs/<id>.py`` and ``logs/<id>/{debug_log.txt,calls.jsonl}``.

A run may still be going while it is read, so the reader is tolerant of what a live run looks
like: files not written yet, a half-written last line in a JSONL file, an entry whose source or
logs are not there yet. Those become ``warnings`` on the snapshot, never exceptions. What is
really broken (no folder, nothing that looks like a run, an ``archive.json`` that is not the
archive) raises :class:`~atlas.errors.ArchiveError` with a message a person can act on.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import math
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from atlas.alma.author.debug_log import episode_block
from atlas.alma.evaluate.runlog import CallLog
from atlas.alma.genome.bandit import operator_stats, stats_table
from atlas.alma.genome.model import parse_genome
from atlas.alma.genome.representation import CODE_OPERATORS, GENOME_OPERATORS
from atlas.alma.state.search_record import SearchRecord, raw_search
from atlas.core import jsonsafe
from atlas.core.safetext import safe_data, safe_text
from atlas.errors import ArchiveError, InvalidInputError
from atlas.infra.safe_read import read_limited
from atlas.viewer.lineage import lineage_layout

RUN_FILES = ("config.json", "archive.json", "trace.jsonl")
#: Design ids are used to build paths; anything else is refused (no path traversal).
_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
#: Origins of hand-built designs (the table's "baselines" group); "meta" designs are evolved.
HAND_BUILT_ORIGINS = frozenset({"seed", "baseline", "host"})
_USAGE_KEYS = ("prompt_tokens", "completion_tokens", "total_tokens", "cost_usd", "calls")
MAX_LOG_LINES = 20000
MAX_READ_BYTES = 512_000_000  # one run file the viewer reads (the archive's own cap)
#: A run with no ``run.stop`` and no trace event for this long is shown as stalled (killed?).
STALL_AFTER_S = 15 * 60
#: Entry fields only the design panel shows (``/api/design/<id>``), left out of ``/api/run``.
_DETAIL_ONLY = frozenset({"per_task", "genome", "genome_lines", "candidates", "checked"})


@dataclass
class RunSnapshot:
    """Everything the viewer's summary and the report need, read at one moment."""

    run_dir: Path
    name: str
    config: dict[str, Any]
    baseline: dict[str, Any] | None
    entries: list[dict[str, Any]]
    iterations: list[dict[str, Any]]
    events: list[dict[str, Any]]
    stamp: str
    warnings: list[str] = field(default_factory=list)
    run_time_s: float | None = None  # the run's own time, resumed parts included (archives that keep it)
    held_out: dict[str, Any] | None = None  # the run's result on held-out test tasks (search.held_out)

    # ------------------------------------------------------------------ derived views
    def entry(self, design_id: str) -> dict[str, Any] | None:
        """The archive entry with this id, or None."""
        return next((e for e in self.entries if e["id"] == design_id), None)

    @property
    def baseline_score(self) -> float | None:
        if not self.baseline:
            return None
        return _num(self.baseline.get("score"))

    @property
    def state(self) -> str:
        """``finished``, ``stopped`` (by a limit: --resume continues it), ``running``, ``stalled``
        or ``unknown`` (no trace), from the trace.

        The last of ``run.start`` / ``run.resume`` / ``run.stop`` / ``run.stopped`` decides; a run
        with no stop whose last event is older than :data:`STALL_AFTER_S` was most likely killed."""
        last = None
        for e in self.events:
            if e.get("event") in ("run.start", "run.resume", "run.stop", "run.stopped"):
                last = e["event"]
        if last == "run.stop":
            return "finished"
        if last == "run.stopped":
            return "stopped"
        if last is None:
            return "unknown"
        ts = _parse_ts(self.events[-1].get("ts"))
        if ts is not None and (datetime.now(UTC) - ts).total_seconds() > STALL_AFTER_S:
            return "stalled"
        return "running"

    def best(self) -> dict[str, Any] | None:
        """The scored entry with the highest deployment score (deployment is fitness); a design
        stopped after a minibatch of staged evaluation is the best only when no design played
        every task (a few lucky tasks are not a claim)."""
        scored = [e for e in self.entries if e["deployment_score"] is not None]
        if not scored:
            return None
        scored = [e for e in scored if e["stage"] == "full"] or scored
        return max(scored, key=lambda e: (e["deployment_score"], e["collection_score"] or 0.0))

    def generations(self) -> list[dict[str, Any]]:
        """One row per generation: the best design of that generation (by deployment score), its
        three scores and the best deployment score so far. A generation whose designs all failed
        has ``design_id`` None and None scores (it still counts its designs and failures)."""
        by_gen: dict[int, list[dict[str, Any]]] = {}
        for e in self.entries:
            by_gen.setdefault(e["generation"], []).append(e)
        rows: list[dict[str, Any]] = []
        best_so_far: float | None = None
        for gen in sorted(by_gen):
            scored = [e for e in by_gen[gen] if e["deployment_score"] is not None]
            top = max(scored, key=lambda e: e["deployment_score"]) if scored else None
            if top is not None:
                dep = top["deployment_score"]
                best_so_far = dep if best_so_far is None else max(best_so_far, dep)
            rows.append(
                {
                    "generation": gen,
                    "design_id": top["id"] if top else None,
                    "design_name": top["name"] if top else None,
                    "collection": top["collection_score"] if top else None,
                    "deployment": top["deployment_score"] if top else None,
                    "normalized": top["normalized_score"] if top else None,
                    "best_so_far": best_so_far,
                    "designs": len(by_gen[gen]),
                    "failed": sum(1 for e in by_gen[gen] if e["status"] != "ok"),
                }
            )
        return rows

    def usage_rows(self) -> list[dict[str, Any]]:
        """Tokens and cost per iteration, in iteration order."""
        rows = []
        for i, it in enumerate(self.iterations, start=1):
            usage = _usage(it.get("usage"))
            rows.append(
                {
                    "iteration": i,
                    "generation": it.get("generation"),
                    "child_id": it.get("child_id"),
                    "status": it.get("status"),
                    "duration_s": _num(it.get("duration_s")),
                    **usage,
                }
            )
        return rows

    def usage_total(self) -> dict[str, float]:
        """Sum of the iterations' usage (what the search itself cost)."""
        total = dict.fromkeys(_USAGE_KEYS, 0.0)
        for row in self.usage_rows():
            for k in _USAGE_KEYS:
                total[k] += row[k]
        return total

    def operator_names(self) -> list[str]:
        """The operators of the search's bandit, in its order (``run.start`` / ``run.resume`` in the
        trace), plus any other known operator an entry was made with; empty when no entry was made
        by a genome operator (a code-only run has no bandit: its operators take turns)."""
        seen = {e["operator"] for e in self.entries if e["operator"]}
        if not seen & set(GENOME_OPERATORS):
            return []
        names: list[str] = []
        for event in self.events:
            if event.get("event") in ("run.start", "run.resume") and isinstance(event.get("operators"), list):
                names = [safe_text(op) for op in event["operators"] if isinstance(op, str)]
        for op in (*GENOME_OPERATORS, *CODE_OPERATORS):
            if op in seen and op not in names:
                names.append(op)
        return names

    def operators(self) -> dict[str, Any]:
        """Per operator: tries, children that beat their parent and the rate (the search's own
        bandit, :func:`atlas.alma.genome.bandit.operator_stats`), candidates screened by the advice
        probe, evaluated children (those with a deployment score) and candidates per evaluated child,
        fallback notes; with a total row and every note. ``rows`` is empty in a run without genome
        operators."""
        names = self.operator_names()
        table = stats_table(
            operator_stats(
                (SearchRecord(operator=e["operator"], beat_parent=e["beat_parent"]) for e in self.entries),
                names,
            )
        )
        rows: list[dict[str, Any]] = []
        for row in table:
            mine = [e for e in self.entries if e["operator"] == row["operator"]]
            screened = sum(len(e["candidates"]) for e in mine)
            evaluated = sum(1 for e in mine if e["deployment_score"] is not None)
            rows.append(
                {
                    **row,
                    "candidates": screened,
                    "evaluated": evaluated,
                    "candidates_per_child": round(screened / evaluated, 2) if evaluated else None,
                    "fallbacks": sum(len(e["operator_notes"]) for e in mine),
                }
            )
        tries = sum(r["tries"] for r in rows)
        wins = sum(r["wins"] for r in rows)
        screened = sum(r["candidates"] for r in rows)
        evaluated = sum(r["evaluated"] for r in rows)
        total = {
            "operator": "total",
            "tries": tries,
            "wins": wins,
            "rate": round(wins / tries, 3) if tries else 0.0,
            "candidates": screened,
            "evaluated": evaluated,
            "candidates_per_child": round(screened / evaluated, 2) if evaluated else None,
            "fallbacks": sum(r["fallbacks"] for r in rows),
        }
        notes = [
            {"id": e["id"], "operator": e["operator"], "note": note}
            for e in self.entries
            if e["operator"] in names
            for note in e["operator_notes"]
        ]
        return {"rows": rows, "total": total, "notes": notes}

    @property
    def representation(self) -> str | None:
        """How designs were written (``genome``, ``code`` or ``both``): the resolved setting when the
        run recorded it, else the setting itself (None in runs from before genomes)."""
        for key in ("representation_resolved", "representation"):
            value = self.config.get(key)
            if isinstance(value, str) and value:
                return value
        return None

    @property
    def executor(self) -> dict[str, Any]:
        """Which executor played the run (``local`` in runs from before executors) and how many work
        units it played again after losing a worker."""
        name, address = self.config.get("executor"), self.config.get("ray_address")
        return {
            "name": safe_text(name) if isinstance(name, str) and name else "local",
            "address": safe_text(address) if isinstance(address, str) and address else None,
            "retries": sum(e["retries"] for e in self.entries),
        }

    def summary(self) -> dict[str, Any]:
        """JSON-safe summary for the viewer's ``/api/run`` (no sources, no logs, no genomes)."""

        best = self.best()
        return {
            "name": self.name,
            "run_dir": str(self.run_dir),
            "stamp": self.stamp,
            "state": self.state,
            "config": self.config,
            "baseline": self.baseline,
            "baseline_score": self.baseline_score,
            "best_id": best["id"] if best else None,
            "held_out": self.held_out,
            "representation": self.representation,
            "executor": self.executor,
            "entries": [{k: v for k, v in e.items() if k not in _DETAIL_ONLY} for e in self.entries],
            "iterations": self.iterations,
            "generations": self.generations(),
            "usage": self.usage_rows(),
            "usage_total": self.usage_total(),
            "operators": self.operators(),
            "lineage": lineage_layout(self.entries),
            "warnings": self.warnings,
        }


# ---------------------------------------------------------------------- reading


def fingerprint(run_dir: str | Path) -> str:
    """A cheap change stamp for a run folder: sizes and mtimes of the files a run rewrites.

    The viewer polls this and re-reads the run only when it changes."""
    root = Path(run_dir)
    parts = []
    for rel in (*RUN_FILES, "designs", "logs"):
        p = root / rel
        try:
            st = p.stat()
        except OSError:
            parts.append(f"{rel}:-")
            continue
        parts.append(f"{rel}:{st.st_mtime_ns}:{st.st_size}")
    return hashlib.sha1("|".join(parts).encode(), usedforsecurity=False).hexdigest()[:16]


def check_run_dir(run_dir: str | Path) -> Path:
    """Return the folder as a Path if it looks like a run folder, else raise ArchiveError."""
    root = Path(run_dir).expanduser()
    if not root.exists():
        raise ArchiveError(f"run folder not found: {root}")
    if not root.is_dir():
        raise ArchiveError(f"not a folder: {root} (expected a run folder such as runs/<name>/)")
    if not any((root / f).exists() for f in RUN_FILES):
        raise ArchiveError(
            f"{root} is not an ALMA run folder: none of {', '.join(RUN_FILES)} is there "
            "(start one with `atlas run --run-dir ...`)"
        )
    return root


def read_run(run_dir: str | Path) -> RunSnapshot:
    """Read a run folder. Tolerates a run in progress; raises ArchiveError if it is not a run
    folder or ``archive.json`` / ``config.json`` cannot be understood."""
    root = check_run_dir(run_dir)
    stamp = fingerprint(root)
    warnings: list[str] = []

    config = _read_json_file(root / "config.json", warnings, required=False)
    if config is not None and not isinstance(config, dict):
        raise ArchiveError(f"{root / 'config.json'}: expected a JSON object, got {type(config).__name__}")

    archive = _read_json_file(root / "archive.json", warnings, required=False)
    if archive is None:
        archive = {}
        warnings.append("archive.json is not written yet (the first iteration has not finished)")
    if not isinstance(archive, dict):
        raise ArchiveError(f"{root / 'archive.json'}: expected a JSON object, got {type(archive).__name__}")
    raw_entries = archive.get("entries", [])
    if not isinstance(raw_entries, list):
        raise ArchiveError(f"{root / 'archive.json'}: 'entries' must be a list")

    entries = []
    seen: set[str] = set()
    for i, raw in enumerate(raw_entries):
        if not isinstance(raw, dict) or not isinstance(raw.get("id"), str) or not _ID_RE.fullmatch(raw["id"]):
            warnings.append(f"archive.json: entry {i} has no valid id; skipped")
            continue
        if raw["id"] in seen:
            warnings.append(f"archive.json: duplicate entry {raw['id']}; kept the first")
            continue
        seen.add(raw["id"])
        entries.append(_normalize_entry(raw, root, warnings))

    raw_iterations = archive.get("iterations")
    iterations = (
        [safe_data(it) for it in raw_iterations or [] if isinstance(it, dict)]
        if isinstance(raw_iterations, list)
        else []
    )
    baseline = safe_data(archive["baseline"]) if isinstance(archive.get("baseline"), dict) else None
    events = [safe_data(e) for e in read_jsonl(root / "trace.jsonl", warnings)]
    config = safe_data(config or {})

    return RunSnapshot(
        run_dir=root,
        name=safe_text(config.get("name") or root.name),
        config=config,
        baseline=baseline,
        entries=entries,
        iterations=iterations,
        events=events,
        stamp=stamp,
        warnings=warnings,
        run_time_s=_num(archive.get("run_time_s")),
        held_out=safe_data(archive["held_out"]) if isinstance(archive.get("held_out"), dict) else None,
    )


def read_jsonl(path: Path, warnings: list[str] | None = None) -> list[dict[str, Any]]:
    """Read a JSONL file written by a live process: a half-written last line is skipped
    silently (it will be complete on the next read); a bad line elsewhere is reported."""
    if not path.exists():
        return []
    text = _read_limited(path).decode("utf-8", errors="replace")
    lines = text.split("\n")
    out: list[dict[str, Any]] = []
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):  # not JSON, a huge number, or nested past the parser
            is_last = n == len(lines)  # no newline after it: still being written
            if not is_last and warnings is not None:
                warnings.append(f"{path.name}: line {n} is not JSON; skipped")
            continue
        if isinstance(obj, dict):
            out.append(obj)
    return out


def _read_limited(path: Path) -> bytes:
    """A run file's bytes: a regular file within the cap (a FIFO or a link to a device is refused)."""
    try:
        return read_limited(path, max_bytes=MAX_READ_BYTES, what=path.name, follow_links=True)
    except InvalidInputError as exc:
        raise ArchiveError(str(exc)) from exc


def _read_json_file(path: Path, warnings: list[str], *, required: bool) -> Any:
    if not path.exists():
        if required:
            raise ArchiveError(f"missing {path}")
        return None
    data = _read_limited(path)
    if not data.strip():
        warnings.append(f"{path.name} is empty")
        return None
    try:
        return jsonsafe.loads(data, what=str(path))
    except InvalidInputError as exc:
        raise ArchiveError(f"{path} is corrupt: {exc}") from exc


def _parse_ts(v: Any) -> datetime | None:
    """An aware datetime from an ISO timestamp, or None if it is not one."""
    if not isinstance(v, str):
        return None
    try:
        ts = datetime.fromisoformat(v)
    except ValueError:
        return None
    return ts if ts.tzinfo is not None else ts.replace(tzinfo=UTC)


def _num(v: Any) -> float | None:
    """A finite float or None (JSON null, NaN, strings and the like become None)."""
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    f = float(v)
    return f if math.isfinite(f) else None


def _usage(raw: Any) -> dict[str, float]:
    raw = raw if isinstance(raw, dict) else {}
    return {k: _num(raw.get(k)) or 0.0 for k in _USAGE_KEYS}


def _normalize_entry(raw: dict[str, Any], root: Path, warnings: list[str]) -> dict[str, Any]:
    """Fill defaults so the viewer and the report never meet a missing key, a wrong type or text
    that cannot be shown (a run folder is data: its strings pass ``safe_text``)."""
    did = raw["id"]
    gen = raw.get("generation")
    parents = [safe_text(p) for p in raw.get("parent_ids") or [] if isinstance(p, str)]
    source_path = safe_text(raw.get("source_path") or f"designs/{did}.py")
    logs_dir = safe_text(raw.get("logs_dir") or f"logs/{did}")
    origin = safe_text(raw.get("origin") or "meta")
    sampled = raw.get("times_sampled")
    errors = raw.get("errors")
    raw_meta = raw.get("metadata")
    meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
    search = raw_search(raw)  # the search record (kept in metadata by older runs), as written
    operator = search.get("operator")
    candidates = search.get("candidates")
    notes = search.get("operator_notes")
    beat = search.get("beat_parent")
    retries = meta.get("retries")
    return {
        "id": did,
        "name": safe_text(raw.get("name") or did),
        "origin": origin,
        "kind": "baseline" if origin in HAND_BUILT_ORIGINS else "evolved",
        "generation": gen if isinstance(gen, int) and not isinstance(gen, bool) else 0,
        "parent_ids": parents,
        "source_path": source_path,
        "has_source": (f := _inside(root, source_path)) is not None and f.is_file(),
        "status": safe_text(raw.get("status") or "ok"),
        "errors": [safe_text(e) for e in errors] if isinstance(errors, list) else [],
        "collection_score": _num(raw.get("collection_score")),
        "deployment_score": _num(raw.get("deployment_score")),
        "normalized_score": _num(raw.get("normalized_score")),
        "stage": "minibatch" if raw.get("stage") == "minibatch" else "full",
        "per_task": [safe_data(t) for t in raw.get("per_task") or [] if isinstance(t, dict)],
        "novelty": _num(raw.get("novelty")),
        "times_sampled": sampled if isinstance(sampled, int) and not isinstance(sampled, bool) else 0,
        "critique": safe_text(raw["critique"]) if isinstance(raw.get("critique"), str) else None,
        "logs_dir": logs_dir,
        "usage": _usage(raw.get("usage")),
        # Work units played again after a cluster worker was lost (--executor ray).
        "retries": len(retries) if isinstance(retries, list) else 0,
        "played_s": _num(meta.get("eval_duration_s")),  # its collection and deployment, in seconds
        "baseline_cached": meta.get("baseline_cached") is True,
        "created_at": raw.get("created_at") if isinstance(raw.get("created_at"), str) else None,
        # What the genome search recorded (None / empty for designs written as code).
        "operator": safe_text(operator) if isinstance(operator, str) and operator else None,
        "beat_parent": beat if isinstance(beat, bool) else None,
        "probe_score": _num(search.get("probe_score")),
        "steered": _num(search.get("steered")),
        "probe_bar": _num(search.get("probe_bar")),
        # played though the agent check refuted it (``genome_step.REFUTED_TO_PLAY``)
        "played_refuted": search.get("played_refuted") is True,
        "candidates": [safe_data(c) for c in candidates if isinstance(c, dict)]
        if isinstance(candidates, list)
        else [],
        "operator_notes": [safe_text(n) for n in notes if isinstance(n, str)]
        if isinstance(notes, list)
        else [],
        "checked": _checked_view(search.get("checked")),
        **_genome_view(search.get("genome")),
    }


def _checked_view(rows: Any) -> list[dict[str, Any]]:
    """The genomes the agent check measured, as the design panel lists them: their retrieve parts, the
    screening's probe, the probe with memory from the agent's own games, how far those games got, and
    the id their logs are served under (``logs/<id>-check<n>``; None when the row names none)."""
    out = []
    for row in rows if isinstance(rows, list) else []:
        if not isinstance(row, dict):
            continue
        genome, logs = row.get("genome"), row.get("logs")
        retrieve = genome.get("retrieve") if isinstance(genome, dict) else None
        parts = [u.get("part") for u in retrieve if isinstance(u, dict)] if isinstance(retrieve, list) else []
        logs_id = logs.removeprefix("logs/") if isinstance(logs, str) and logs.startswith("logs/") else ""
        out.append(
            {
                "parts": [safe_text(p) for p in parts if isinstance(p, str)],
                "screen_score": _num(row.get("screen_score")),
                "agent_probe": _num(row.get("agent_probe")),
                "collection_reached": _num(row.get("collection_reached")),
                "logs_id": logs_id if _ID_RE.fullmatch(logs_id) else None,
            }
        )
    return out


def _genome_view(data: Any) -> dict[str, Any]:
    """An entry's genome for showing: the JSON as recorded, its ``describe()`` lines, and why it does
    not load when it does not (a genome from another version, or a damaged archive)."""
    if not isinstance(data, dict):
        return {"genome": None, "genome_lines": None, "genome_error": None}
    try:
        lines: list[str] | None = [safe_text(line) for line in parse_genome(data).describe()]
        error = None
    except (InvalidInputError, ValueError, TypeError, RecursionError) as exc:
        lines, error = None, safe_text(exc)
    return {"genome": safe_data(data), "genome_lines": lines, "genome_error": error}


def _inside(root: Path, rel: str) -> Path | None:
    """``root/rel`` if it stays inside root (archive paths are data, not trusted)."""
    try:
        p = (root / rel).resolve()
        p.relative_to(root.resolve())
    except (ValueError, OSError):
        return None
    return p


# ---------------------------------------------------------------------- one design


def read_source(run: RunSnapshot, design_id: str) -> str | None:
    """A design's source text, or None when it is not (yet) on disk."""
    entry = run.entry(design_id)
    if entry is None:
        return None
    path = _inside(run.run_dir, entry["source_path"])
    if path is None or not path.is_file():
        return None
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise ArchiveError(f"cannot read {path}: {exc}") from exc


def unified_diff(parent_source: str, child_source: str, parent_id: str, child_id: str) -> str:
    """A unified diff (difflib) from the parent's source to the child's."""
    return "".join(
        difflib.unified_diff(
            parent_source.splitlines(keepends=True),
            child_source.splitlines(keepends=True),
            fromfile=f"{parent_id}.py",
            tofile=f"{child_id}.py",
            n=3,
        )
    )


def deployment_completion(entry: dict[str, Any]) -> dict[str, Any] | None:
    """Task and scenario goal completion of an entry's deployment episodes, with their intervals
    (``atlas.alma.state.goal_completion``); None when it has none."""
    from atlas.alma.state.goal_completion import goal_completion

    deployed = [t for t in entry.get("per_task") or [] if t.get("phase", "deployment") == "deployment"]
    return goal_completion(deployed).to_dict() if deployed else None


def design_detail(run: RunSnapshot, design_id: str, parent_id: str | None = None) -> dict[str, Any] | None:
    """Everything the design panel shows: entry, source, diff against a parent (the first one
    unless ``parent_id`` names another), critique, per-task results. None if no such design."""
    entry = run.entry(design_id)
    if entry is None:
        return None
    source = read_source(run, design_id)
    parents = entry["parent_ids"]
    chosen = parent_id if parent_id in parents else (parents[0] if parents else None)
    diff = None
    if chosen is not None and source is not None:
        parent_source = read_source(run, chosen)
        if parent_source is not None:
            diff = unified_diff(parent_source, source, chosen, design_id)
    children = [e["id"] for e in run.entries if design_id in e["parent_ids"]]
    return {
        **entry,
        "goal_completion": deployment_completion(entry),
        "source": source,
        "diff_parent": chosen,
        "diff": diff,
        "children": children,
        "has_logs": bool(_log_files(run, entry)),
    }


def _log_files(run: RunSnapshot, entry: dict[str, Any]) -> dict[str, Path]:
    d = _inside(run.run_dir, entry["logs_dir"])
    if d is None or not d.is_dir():
        return {}
    names = ("calls.jsonl", "episodes.jsonl", "debug_log.txt")
    files = {name: _inside(d, name) for name in names}  # a symlink out of the folder is not followed
    return {name: f for name, f in files.items() if f is not None and f.is_file()}


def call_lines(call: dict[str, Any], label: str, warnings: list[str]) -> list[str]:
    """Greppable lines of one CallLog dict, exactly as the DebugAgent sees them
    (``CallLog.format_lines``: ``[C1:recall] TOOL find_similar: k=3 query="flask" -> []``).
    A record that is not a CallLog becomes one raw line and a warning, so nothing is hidden."""
    try:
        return CallLog.from_dict(call).format_lines(label)
    except (KeyError, TypeError, ValueError) as exc:
        warnings.append(f"calls.jsonl: a record of episode {label} is not a CallLog ({exc!r}); shown raw")
        return [f"[{label}:?] RECORD {json.dumps(call, ensure_ascii=False, default=str)[:500]}"]


def episode_lines(episode: dict[str, Any], calls: list[dict[str, Any]], warnings: list[str]) -> list[str]:
    """One episode as the DebugLog renders it: the ``--- EPISODE C1: ... ---`` header, the design's
    call lines, then the agent's actions (``[C1:agent] move_to(...)``)."""
    head_and_actions = episode_block(episode, [])
    body = [line for call in calls for line in call_lines(call, episode["label"], warnings)]
    return head_and_actions[:1] + body + head_and_actions[1:]


def read_logs(run: RunSnapshot, design_id: str) -> dict[str, Any] | None:
    """A design's runtime logs: one block of lines per episode (``episodes.jsonl`` for outcomes and
    actions, ``calls.jsonl`` for the design's calls, in episode order) and the DebugLog text
    (``debug_log.txt``). None if no such design; empty lists while nothing is written yet."""
    entry = run.entry(design_id) or _check_of(run, design_id) or _test_of(run, design_id)
    if entry is None:
        return None
    files = _log_files(run, entry)
    warnings: list[str] = []
    calls = read_jsonl(files["calls.jsonl"], warnings) if "calls.jsonl" in files else []
    episodes = read_jsonl(files["episodes.jsonl"], warnings) if "episodes.jsonl" in files else []
    by_label: dict[str, list[dict[str, Any]]] = {}
    for call in calls:
        by_label.setdefault(str(call.get("episode") or "?"), []).append(call)

    blocks: dict[str, list[str]] = {}
    for ep in episodes:
        if not isinstance(ep.get("label"), str):
            continue
        blocks[ep["label"]] = episode_lines(ep, by_label.get(ep["label"], []), warnings)
    for label, label_calls in by_label.items():  # calls of an episode with no record (yet)
        if label not in blocks:
            blocks[label] = [line for c in label_calls for line in call_lines(c, label, warnings)]

    debug_lines: list[str] = []
    if "debug_log.txt" in files:
        try:
            debug_lines = files["debug_log.txt"].read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError as exc:
            raise ArchiveError(f"cannot read {files['debug_log.txt']}: {exc}") from exc

    truncated = False
    total = 0
    for label in list(blocks):
        room = max(MAX_LOG_LINES - total, 0)
        if len(blocks[label]) > room:
            blocks[label], truncated = blocks[label][:room], True
        total += len(blocks[label])
    if len(debug_lines) > MAX_LOG_LINES:
        debug_lines, truncated = debug_lines[:MAX_LOG_LINES], True
    return {
        "id": design_id,
        "episodes": [{"label": k, "lines": v} for k, v in blocks.items()],
        "debug_log": debug_lines,
        "truncated": truncated,
        "warnings": warnings,
    }


def _check_of(run: RunSnapshot, logs_id: str) -> dict[str, Any] | None:
    """The logs folder of a genome the agent check measured (``logs/<id>-check<n>``), as an entry's."""
    named = any(c["logs_id"] == logs_id for e in run.entries for c in e.get("checked") or [])
    return {"logs_dir": f"logs/{logs_id}"} if named else None


def _test_of(run: RunSnapshot, logs_id: str) -> dict[str, Any] | None:
    """The logs folder of games on the held-out test tasks (``logs/<id>-test``, ``logs/no-memory-test``)
    that the run's test phase names, as an entry's."""
    held = run.held_out or {}
    named = [d.get("logs") for d in held.get("designs") or [] if isinstance(d, dict)]
    named.append(held.get("no_memory_logs"))
    return {"logs_dir": f"logs/{logs_id}"} if f"logs/{logs_id}" in named else None


def valid_design_id(design_id: str) -> bool:
    """True if the string is shaped like a design id (used before touching the filesystem)."""
    return bool(_ID_RE.fullmatch(design_id))
