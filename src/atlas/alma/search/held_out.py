"""The run's result on tasks no choice saw.

The genome screening probes the first deployment tasks and the search picks its best design on all of
them, so the pick's score there is the best of many noisy scores and overstates it (the winner's curse).
After the search, the pick, the next best designs and the best hand-built one are played on held-out
test tasks (the benchmark's ``test`` split, or tasks from seeds no other part of the run used), each
with the memory it learns from the same collection tasks, and compared with no memory on the same test
tasks. That comparison, not the deployment score, is the run's result (``Archive.held_out``).
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from atlas.alma.baselines import get_baseline
from atlas.alma.design import Design
from atlas.alma.evaluate.harness import Evaluation, held_out_tasks
from atlas.alma.search.baseline_stages import played_s
from atlas.alma.search.budget import generation_s, no_time_to_test, over_time
from atlas.alma.search.progress import showing
from atlas.alma.search.record import Recorder
from atlas.alma.search.seeds import NO_MEMORY_NAME, no_memory_design
from atlas.alma.state.archive import Archive, ArchiveEntry
from atlas.alma.state.config import AlmaConfig
from atlas.alma.state.stats import paired_difference
from atlas.core.types import Task
from atlas.protocols.env import Environment

HAND_BUILT = ("baseline", "host", "seed")  # origins of designs written by hand


class TestedDesign(BaseModel):
    """One design played on the test tasks. ``validation`` is its paired difference with no memory on
    the deployment tasks it was chosen on; ``vs_no_memory`` the same on the test tasks."""

    id: str
    name: str
    origin: str
    chosen: bool = False  # the search's pick: its best design on the deployment tasks
    validation: dict[str, Any] | None = None
    test_score: float | None = None
    vs_no_memory: dict[str, Any] | None = None
    per_task: dict[str, float] = Field(default_factory=dict)
    status: str = "ok"  # "skipped": not played under --max-minutes (``errors`` says why)
    errors: list[str] = Field(default_factory=list)
    logs: str | None = None  # its games on the test tasks, under the run folder (``logs/<id>-test``)


class HeldOut(BaseModel):
    """The test phase of a run: where its tasks come from, no memory's scores, each tested design."""

    source: str
    tasks: list[str]
    no_memory: dict[str, float]
    designs: list[TestedDesign]
    archive_size: int  # the archive it was measured on: a resumed run that adds designs measures again
    duration_s: float = 0.0
    no_memory_logs: str | None = None  # no memory's games on the test tasks (``logs/no-memory-test``)

    @property
    def no_memory_score(self) -> float:
        return statistics.fmean(self.no_memory.values()) if self.no_memory else 0.0

    def chosen(self) -> TestedDesign | None:
        return next((d for d in self.designs if d.chosen), None)

    def lines(self) -> list[str]:
        """One line per tested design, the pick first: its gain over no memory on the test tasks."""
        out = [
            f"held-out test: {len(self.tasks)} tasks ({self.source}); no memory {self.no_memory_score:.3f}"
        ]
        for d in self.designs:
            out.append(
                f"  {'pick ' if d.chosen else '     '}{d.id} {d.name:28s} {_vs(d)}   (chosen on: {_ci(d.validation)})"
            )
        return out


def _ci(v: dict[str, Any] | None) -> str:
    if not v:
        return "n/a"
    lo, hi = v["ci95"]
    return f"{v['mean']:+.3f} [{lo:+.3f}, {hi:+.3f}]"


def _vs(d: TestedDesign) -> str:
    if d.status == "skipped":
        return "; ".join(d.errors)
    if d.status != "ok":
        return f"failed: {'; '.join(d.errors)[:120]}"
    return f"test {d.test_score:.3f}, vs no memory {_ci(d.vs_no_memory)}"


def _above_no_memory(archive: Archive, n: int) -> tuple[list[ArchiveEntry], list[ArchiveEntry]]:
    """The ``n`` best fully played designs that scored above no memory, and all of them ranked."""
    ranked = sorted(
        (e for e in archive.scored() if e.stage == "full" and e.name != NO_MEMORY_NAME),
        key=lambda e: (e.normalized_score or 0.0, e.deployment_score or 0.0),
        reverse=True,
    )
    return [e for e in ranked[:n] if (e.normalized_score or 0.0) > 0], ranked


def to_test(archive: Archive, n: int) -> list[ArchiveEntry]:
    """The designs the test phase plays: the ``n`` best on the deployment tasks that scored above no
    memory there (fully played; the first is the search's pick) and the best hand-built design when
    none of them is. None when no design scored above no memory: a test would confirm nothing, and its
    time goes to the search."""
    picked, ranked = _above_no_memory(archive, n)
    if picked and not any(e.origin in HAND_BUILT for e in picked):
        picked += [e for e in ranked if e.origin in HAND_BUILT][:1]
    return picked


def design_of(entry: ArchiveEntry) -> Design:
    """The design an entry played (a host-side adapter is rebuilt by name)."""
    return get_baseline(entry.name) if entry.origin == "host" else entry.design


def estimate_s(archive: Archive, n_designs: int, test: int, deployment: int) -> float:
    """Seconds the test phase may take, scaled from the deployment tasks to the test tasks: no memory at
    its own measured time, each of ``n_designs`` at the designs' (the median over full evaluations, or
    the latest where it was slower: a machine that got busier since the first). No memory plays at a
    pace of its own: on ``greenhouse`` it took 179 s where the design took 1,146, on TextWorld ``fetch``
    845 s where the design took 460. 0 before anything was measured."""
    full = [
        (e.name == NO_MEMORY_NAME, seconds)
        for e in archive.scored()
        if e.stage == "full"
        and not e.metadata.get("staged", {}).get("saved")
        and (seconds := played_s(e)) is not None
    ]
    base = [s for is_base, s in full if is_base]
    times = [s for is_base, s in full if not is_base] or base
    if not times or deployment <= 0:
        return 0.0
    pace = max(statistics.median(times), times[-1])
    return (pace * n_designs + (base[-1] if base else pace)) * test / deployment


def reserve_s(archive: Archive, cfg: AlmaConfig, deployment: int) -> float:
    """Run time a search keeps for its test phase (``estimate_s``) when it has a time cap: for no memory
    and the pick, the designs after it playing only in the time left then (``no_time_to_test``); none
    before a design scored above no memory (on a slow environment no memory's evaluation alone, times
    every design the phase may test, used to exceed the cap, and the search stopped before its first
    generation; on ScienceWorld, keeping time for two designs, 54 minutes were kept and 20 taken)."""
    if not (cfg.test_count and cfg.max_minutes) or not to_test(archive, cfg.test_designs):
        return 0.0
    return estimate_s(archive, 1, cfg.test_count, deployment)


def too_late(
    archive: Archive, cfg: AlmaConfig, generation: int, deployment: int, run_dir: Path
) -> str | None:
    """Why ``generation`` is not started under ``--max-minutes`` (None: it is): it would not end before
    the time the test phase needs (``reserve_s``), at the pace of the run's generations so far."""
    reserve, elapsed = reserve_s(archive, cfg, deployment), archive.clock.run_time_s()
    return over_time(generation, elapsed, cfg.max_minutes, run_dir, reserve, generation_s(archive))


async def measure_held_out(rec: Recorder, env: Environment, seen: list[Task]) -> HeldOut | None:
    """The test phase of a search (none with ``test_seeds`` 0): measured once per archive (a resumed
    run that added designs measures again), saved in ``archive.held_out``, its lines shown."""
    cfg, archive = rec.config, rec.archive
    if not cfg.test_count:
        return None
    if archive.held_out and archive.held_out.get("archive_size") == len(archive):
        return HeldOut.model_validate(archive.held_out)
    if not to_test(archive, cfg.test_designs):
        rec.progress.line(
            "held-out  no fully played design scored above no memory on the deployment tasks: "
            "there is no gain to confirm on test tasks, and the time went to the search"
        )
        return None
    tasks, source = held_out_tasks(cfg, env, seen)
    result = await score_on_test(rec, tasks, source, cfg.test_designs)
    archive.held_out = result.model_dump(mode="json")
    archive.save()
    for line in result.lines():
        rec.progress.line(line)
    return result


def _scores(ev: Evaluation) -> dict[str, float]:
    return {r.task_id: float(r.score) for r in ev.deployment}


def _write_test_logs(rec: Recorder, logs_id: str, name: str, origin: str, ev: Evaluation) -> str:
    """A design's games on the test tasks, kept like those it was chosen on (``logs/<logs_id>/``), so
    what the agent did there can be read back."""
    entry = {"id": logs_id, "name": name, "origin": origin, "phase": "test tasks"}
    return rec.write_evaluation_logs(logs_id, entry, ev)


async def score_on_test(rec: Recorder, tasks: list[Task], source: str, n: int) -> HeldOut:
    """Play no memory and ``to_test(rec.archive, n)`` on ``tasks`` (each design's memory learned from
    the run's collection tasks, replayed from the model's cache where the run played them) and compare."""
    t0 = time.perf_counter()
    entries = to_test(rec.archive, n)
    rec.emit("held_out.start", source=source, tasks=[t.id for t in tasks], designs=[e.id for e in entries])
    rec.progress.line(
        f"held-out  playing {len(entries)} design{'s' * (len(entries) != 1)} and no memory on {len(tasks)} "
        f"test tasks ({source})"
    )
    with showing(rec.progress, "no memory (test tasks)", len(tasks)):
        base_ev = await rec.executor.evaluate(no_memory_design(rec.archive), [], tasks)
    base = _scores(base_ev)
    no_memory_logs = _write_test_logs(rec, "no-memory-test", "no_memory", "no memory", base_ev)
    chosen = entries[0].id if entries else None
    tested: list[TestedDesign] = []
    pick_s = 0.0
    for e in entries:
        if tested and (why := no_time_to_test(rec.config, rec.archive.clock.run_time_s(), pick_s)):
            row = TestedDesign(
                id=e.id,
                name=e.name,
                origin=e.origin,
                validation=e.vs_no_memory,
                status="skipped",
                errors=[why],
            )
            tested.append(row)
            rec.progress.line(f"held-out  {e.id} {e.name}: {why}")
            continue
        t_design = time.perf_counter()
        with showing(rec.progress, f"{e.name} (test tasks)", len(rec.collection_tasks) + len(tasks)):
            ev = await rec.executor.evaluate(design_of(e), rec.collection_tasks, tasks)
        pick_s = pick_s or time.perf_counter() - t_design
        row = TestedDesign(
            id=e.id,
            name=e.name,
            origin=e.origin,
            chosen=e.id == chosen,
            validation=e.vs_no_memory,
            logs=_write_test_logs(rec, f"{e.id}-test", e.name, e.origin, ev),
        )
        if ev.status == "ok":
            got = _scores(ev)
            common = [t for t in got if t in base]
            row.per_task = got
            row.test_score = statistics.fmean(got.values()) if got else 0.0
            row.vs_no_memory = paired_difference(
                [got[t] for t in common], [base[t] for t in common]
            ).to_dict()
        else:
            row.status, row.errors = ev.status, list(ev.errors)
        tested.append(row)
        rec.progress.line(f"held-out  {e.id} {e.name}: {_vs(row)}")
    result = HeldOut(
        source=source,
        tasks=[t.id for t in tasks],
        no_memory=base,
        designs=tested,
        archive_size=len(rec.archive),
        duration_s=round(time.perf_counter() - t0, 3),
        no_memory_logs=no_memory_logs,
    )
    rec.emit(
        "held_out.stop",
        source=source,
        tasks=len(tasks),
        no_memory_score=result.no_memory_score,
        designs=[d.model_dump(exclude={"per_task"}) for d in tested],
    )
    return result


__all__ = [
    "HAND_BUILT",
    "HeldOut",
    "TestedDesign",
    "design_of",
    "estimate_s",
    "measure_held_out",
    "reserve_s",
    "score_on_test",
    "to_test",
    "too_late",
]
