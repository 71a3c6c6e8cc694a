"""Export one design of a run as a self-contained folder, and read such a folder back.

    DIR/design.py      the design's source
    DIR/memory.json    what it learned in collection (memory dict, vector items with their
                       embeddings, graph; the embedder that made the vectors)
    DIR/advice.jsonl   one line per deployment task of the run: {"task": <the task view recall
                       received>, "advice": <what recall returned>}
    DIR/design.json    manifest: the design, the embedder it needs, environment and settings,
                       scores with 95% intervals, and the SHA-256 of every file above
    DIR/README.md      a short human summary

Loading needs nothing from the run folder; ``load_export`` checks every file against the manifest
so a corrupted or hand-edited export is a clear ``ArchiveError``, never a wrong answer.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from atlas.alma.deploy.manifest import EXPORT_FORMAT, EXPORT_VERSION, FILES, parse_manifest
from atlas.alma.state.archive import MAX_LEARNED_BYTES, Archive, ArchiveEntry
from atlas.alma.state.goal_completion import goal_completion
from atlas.alma.state.run_dir import RunDir, atomic_write_text, read_jsonl
from atlas.core import jsonsafe
from atlas.core.safetext import safe_data
from atlas.errors import ArchiveError, InvalidInputError
from atlas.infra.safe_read import read_limited

if TYPE_CHECKING:
    from atlas.alma.design import Design

# one export's files, each read with a cap (a link, FIFO or device is refused: atlas.infra.safe_read)
MAX_FILE_BYTES = {
    "design.json": 1_000_000,
    "design.py": 1_000_000,
    "memory.json": MAX_LEARNED_BYTES,
    "advice.jsonl": 64_000_000,
}


@dataclass
class ExportedDesign:
    """A loaded export: the manifest, the source, the learned memory and the recorded advice."""

    path: Path
    manifest: dict[str, Any]
    source: str
    learned: dict[str, Any]
    advice: list[dict[str, Any]]

    @property
    def embedder_name(self) -> str | None:
        return self.manifest["embedder"]["name"]

    def design(self) -> Design:
        """The ``Design`` object of the exported source."""
        from atlas.alma.design import Design

        d = self.manifest["design"]
        return Design(
            id=d["id"],
            name=d["name"],
            source=self.source,
            origin=d["origin"],
            parent_ids=list(d["parent_ids"]),
            metadata={"generation": d["generation"]},
        )


def mean_interval(xs: list[float], *, level: float = 0.95, resamples: int = 2000) -> dict[str, Any] | None:
    """Mean and a percentile-bootstrap interval (fixed seed, so an export is reproducible)."""
    if not xs:
        return None
    rng = random.Random(0)
    n = len(xs)
    means = sorted(sum(rng.choice(xs) for _ in range(n)) / n for _ in range(resamples))
    lo, hi = means[int((1 - level) / 2 * resamples)], means[int((1 + level) / 2 * resamples) - 1]
    return {
        "mean": round(sum(xs) / n, 6),
        "low": round(lo, 6),
        "high": round(hi, 6),
        "n": n,
        "level": level,
        "method": "percentile bootstrap over tasks",
    }


def _scores(entry: ArchiveEntry, baseline: dict[str, Any] | None) -> dict[str, Any]:
    col = [t.score for t in entry.per_task if t.phase == "collection"]
    dep = [t.score for t in entry.per_task if t.phase == "deployment"]
    base = [float(p["score"]) for p in (baseline or {}).get("per_task") or [] if "score" in p]
    return {
        "collection": mean_interval(col),
        "deployment": mean_interval(dep),
        "baseline_deployment": mean_interval(base),
        "normalized": entry.normalized_score,
        "solved": {
            "collection": f"{sum(t.success for t in entry.per_task if t.phase == 'collection')}/{len(col)}",
            "deployment": f"{sum(t.success for t in entry.per_task if t.phase == 'deployment')}/{len(dep)}",
        },
        "goal_completion": goal_completion([t for t in entry.per_task if t.phase == "deployment"]).to_dict(),
    }


def _advice_lines(run: Path, entry: ArchiveEntry) -> list[dict[str, Any]]:
    """Deployment tasks in order with the task view recall received and what it returned (the full
    return value from calls.jsonl; "" when the call failed, as the agent saw it)."""
    rd = RunDir(run)
    episodes_file = rd.entry_log_file(entry.logs_dir, entry.id, "episodes.jsonl")
    calls_file = rd.entry_log_file(entry.logs_dir, entry.id, "calls.jsonl")
    episodes = [e for e in read_jsonl(episodes_file) if e.get("phase") == "deployment"]
    recalls = {c.get("episode"): c for c in read_jsonl(calls_file) if c.get("phase") == "recall"}
    out = []
    for ep in episodes:
        if not isinstance(ep.get("task"), dict):
            raise ArchiveError(
                f"{episodes_file} does not record the task view of {ep.get('label')} "
                "(a run made before exports existed): re-run the search to export this design"
            )
        call = recalls.get(ep.get("label"), {})
        advice = (call.get("return_value") or "") if call.get("error") is None else ""
        line = {"task": ep["task"], "advice": advice}
        if call.get("error") is not None:
            line["error"] = call["error"]
        out.append(line)
    return out


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def pick_entry(archive: Archive, design_id: str | None) -> ArchiveEntry:
    """``design_id``'s entry, or the best scored one."""
    if design_id is not None:
        try:
            return archive.get(design_id)
        except KeyError:
            raise ArchiveError(
                f"no design {design_id!r} in {archive.path}; ids: {', '.join(e.id for e in archive)}"
            ) from None
    best = archive.best()
    if best is None:
        raise ArchiveError(f"{archive.path} has no scored design to export")
    return best


def export_design(run_dir: str | Path, out: str | Path, *, design_id: str | None = None) -> Path:
    """Write ``out/`` for one design of ``run_dir`` (the best when ``design_id`` is None)."""
    run = Path(run_dir)
    archive = Archive.load(run)
    run = archive.path.parent if archive.path else run
    entry = pick_entry(archive, design_id)
    if entry.status != "ok":
        raise ArchiveError(f"{entry.id} ({entry.name}) did not run ({entry.status}): nothing to export")
    archive.hydrate([entry.id])
    if entry.learned is None:
        why = entry.metadata.get("learned_memory") or (
            "the run was made before learned memory was kept: `atlas archive relearn RUN_DIR` rebuilds it by "
            "replaying the recorded episodes where it can, or re-run the search with this version"
        )
        raise ArchiveError(f"{entry.id} ({entry.name}) in {run} has no learned memory: {why}")
    host = entry.learned.get("host")
    if isinstance(host, dict) and host.get("supported") is False:
        raise ArchiveError(
            f"{entry.id} ({entry.name}) is a host-side adapter whose memory lives in its own stores "
            f"({host.get('reason', 'not in the snapshot')}): it cannot be exported"
        )
    out_dir = Path(out)
    if out_dir.exists() and any(out_dir.iterdir()) and not (out_dir / "design.json").exists():
        raise ArchiveError(f"{out_dir} exists and is not an export: choose an empty or new folder")
    config = RunDir(run).read_config() if (run / "config.json").exists() else {}
    texts = {
        "design.py": entry.source or "",
        "memory.json": json.dumps(entry.learned, separators=(",", ":"), ensure_ascii=False) + "\n",
        "advice.jsonl": "".join(json.dumps(a, ensure_ascii=False) + "\n" for a in _advice_lines(run, entry)),
    }
    from atlas.alma.sandbox.pool import SandboxLimits

    embedder = entry.learned.get("embedder") or config.get("embedder")
    manifest = {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "exported_at": datetime.now(UTC).isoformat(),
        "from_run": str(run),
        "design": {
            "id": entry.id,
            "name": entry.name,
            "origin": entry.origin,
            "generation": entry.generation,
            "parent_ids": entry.parent_ids,
            "source_sha256": _sha(texts["design.py"]),
        },
        "embedder": {"name": embedder, "dims": _dims(entry.learned)},
        "environment": {
            **(config.get("env_params") or {}),  # the environment's own parameters (rooms, ...)
            **{
                k: config.get(k)
                for k in (
                    "env",
                    "env_params",
                    "rooms",
                    "episodes",
                    "seed",
                    "family",
                    "use_family",
                    "deploy_seeds",
                    "max_turns",
                )
                if k in config
            },
        },
        "models": {
            "task_model": config.get("task_model"),
            "tools_llm": config.get("task_model"),  # the run backs summarize/analyze with the task model
            "meta_model": config.get("meta_model_resolved"),
        },
        "sandbox_limits": SandboxLimits().to_dict(),
        "scores": _scores(entry, archive.baseline),
        "files": {
            name: {"sha256": _sha(text), "bytes": len(text.encode("utf-8"))} for name, text in texts.items()
        },
    }
    texts["design.json"] = json.dumps(manifest, indent=2, ensure_ascii=False, default=str) + "\n"
    texts["README.md"] = _readme(manifest, entry, len(texts["advice.jsonl"].splitlines()))
    for name, text in texts.items():
        atomic_write_text(out_dir / name, text)
    return out_dir


def _dims(learned: dict[str, Any]) -> list[int]:
    vectors = (learned.get("tools") or {}).get("vectors") or {}
    return sorted({int(v["dim"]) for v in vectors.values() if isinstance(v, dict) and v.get("dim")})


def _fmt_iv(iv: dict[str, Any] | None) -> str:
    return "—" if not iv else f"{iv['mean']:.3f} [{iv['low']:.3f}, {iv['high']:.3f}] (n={iv['n']})"


def _readme(m: dict[str, Any], entry: ArchiveEntry, n_advice: int) -> str:
    s, d = m["scores"], m["design"]
    norm = "—" if s["normalized"] is None else f"{s['normalized']:+.3f}"
    return (
        f"# {d['name']} ({d['id']})\n\nA memory design exported by ATLAS from `{m['from_run']}` "
        f"({d['origin']}, generation {d['generation']}).\n\n"
        f"| | mean [95% interval] |\n|---|---|\n| collection | {_fmt_iv(s['collection'])} |\n"
        f"| deployment | {_fmt_iv(s['deployment'])} |\n| no-memory baseline | {_fmt_iv(s['baseline_deployment'])} |\n"
        f"| normalized (deployment − baseline) | {norm} |\n\n"
        f"Environment: {', '.join(f'{k} {v}' for k, v in m['environment'].items() if v not in (None, {}))}. "
        f"Task model: {m['models']['task_model']}. "
        f"Embedder: {m['embedder']['name']}.\n\n"
        "Files: `design.py` (source), `memory.json` (what it learned), `advice.jsonl` "
        f"({n_advice} deployment tasks with the advice it gave), `design.json` (manifest).\n\n"
        "Use it:\n\n```bash\natlas mcp --design .            # MCP tools recall / update / memory_info\n```\n\n"
        "```python\nfrom atlas.alma.deploy.served import ServedDesign\n"
        "with ServedDesign.open('.') as memory:\n    print(memory.recall({'goal': '...', 'observation': {}}))\n```\n"
    )


def _read(root: Path, name: str) -> bytes:
    try:
        return read_limited(root / name, max_bytes=MAX_FILE_BYTES[name], what=f"the export's {name}")
    except InvalidInputError as exc:
        raise ArchiveError(f"{exc}; export the design again") from exc


def load_export(path: str | Path) -> ExportedDesign:
    """Read and verify an export folder: each file a plain file within its cap (no links), the
    manifest valid against its schema (``manifest.py``), every file matching its checksum."""
    root = Path(path)
    manifest_path = root / "design.json"
    if not manifest_path.is_file():
        raise ArchiveError(
            f"{root} is not a design export (no design.json): make one with "
            "`atlas archive export RUN_DIR --best --out DIR`"
        )
    try:
        raw = jsonsafe.loads(_read(root, "design.json"), what=str(manifest_path))
    except InvalidInputError as exc:
        raise ArchiveError(f"{manifest_path} is corrupt ({exc}): export the design again") from exc
    manifest = parse_manifest(raw, str(manifest_path))
    texts: dict[str, str] = {}
    for name in FILES:
        data = _read(root, name)
        if manifest["files"][name]["sha256"] != hashlib.sha256(data).hexdigest():
            raise ArchiveError(
                f"{root / name} does not match its checksum in design.json (corrupted or edited): "
                "export the design again"
            )
        try:
            texts[name] = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ArchiveError(
                f"{root / name} is not UTF-8 text ({exc.reason}): export the design again"
            ) from exc
    try:
        # JSON escapes may spell lone surrogates ("\\ud800"), which no UTF-8 writer accepts: they
        # become U+FFFD here, so what is served, shown or saved later always encodes
        learned = safe_data(jsonsafe.loads(texts["memory.json"], what=str(root / "memory.json")))
        advice = [
            safe_data(jsonsafe.loads(line, what=str(root / "advice.jsonl")))
            for line in texts["advice.jsonl"].splitlines()
            if line.strip()
        ]
    except InvalidInputError as exc:  # only reachable when the manifest was rewritten to match
        raise ArchiveError(f"{root}: corrupt JSON in the export ({exc})") from exc
    if not isinstance(learned, dict) or not isinstance(learned.get("memory"), dict):
        raise ArchiveError(f"{root / 'memory.json'} is not a learned memory (no 'memory' object)")
    if not all(isinstance(a, dict) and isinstance(a.get("task"), dict) for a in advice):
        raise ArchiveError(f"{root / 'advice.jsonl'}: every line must be an object with a 'task' object")
    return ExportedDesign(
        path=root, manifest=manifest, source=texts["design.py"], learned=learned, advice=advice
    )


__all__ = [
    "EXPORT_FORMAT",
    "EXPORT_VERSION",
    "ExportedDesign",
    "export_design",
    "load_export",
    "mean_interval",
    "pick_entry",
]
