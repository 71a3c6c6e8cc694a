"""The no-memory baseline, staged like any new design: a search plays no memory on the collection
tasks and the first batch of deployment tasks, and on the later tasks only once a design has played
them all (a design's score over no memory needs every task). New designs are staged against the
first batch as before. A search in which no design gets past its first batch, common on an
environment where memory is hard to find, saves those episodes: 16 of 27 with 3 episodes per seed
and the default ``stage_tasks`` 8 (44 minutes of baseline become 18 on a slow plug-in)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from atlas.alma.author.prompts import fmt
from atlas.alma.baselines import get_baseline
from atlas.alma.evaluate.harness import Evaluation, add_usage
from atlas.alma.search.baseline_cache import baseline_record
from atlas.alma.search.progress import showing
from atlas.alma.state.archive import ArchiveEntry
from atlas.alma.state.run_dir import atomic_write_text
from atlas.alma.state.staging import Verdict
from atlas.alma.state.stats import paired_difference
from atlas.errors import ConfigError

if TYPE_CHECKING:
    from atlas.alma.search.record import Recorder

NO_MEMORY_NAME = "no_memory"
LATER = "no memory plays its later tasks once a design reaches them"


def first_batch_only(_played: list[Any]) -> Verdict:
    """The stage rule of the baseline itself: stop after the first batch."""
    return Verdict(False, LATER)


@dataclass
class FirstBatch:
    """The baseline's first evaluation, kept in memory so that completing it can write its full logs
    and the baseline cache (after a resume it is gone: the later episodes join the entry, not the cache)."""

    evaluation: Evaluation
    cache: Path | None
    key: str


def baseline_row(e: Any) -> dict[str, Any]:
    return {
        "task_id": e.task_id,
        "success": e.success,
        "score": e.score,
        "steps": e.steps,
        "label": e.label,
        "scenario": e.scenario,
        "highest": e.highest,
    }


def played_s(entry: ArchiveEntry) -> float | None:
    """Seconds an entry's evaluation took, the baseline's later tasks included (None: not recorded)."""
    first, later = entry.metadata.get("eval_duration_s"), entry.metadata.get("later_s", 0.0)
    if not isinstance(first, int | float) or not isinstance(later, int | float):
        return None
    return float(first) + float(later)


def baseline_entry(rec: Recorder) -> ArchiveEntry:
    return next(e for e in rec.archive if e.origin == "baseline" and e.name == NO_MEMORY_NAME)


async def complete_baseline(rec: Recorder) -> None:
    """Play no memory on the deployment tasks it has not played yet (nothing when it played them all)."""
    base = rec.archive.baseline
    if not base or not base.get("partial"):
        return
    entry = baseline_entry(rec)
    played = {t.task_id for t in entry.per_task if t.phase == "deployment"}
    later = [t for t in rec.deployment_tasks if t.id not in played]
    design = get_baseline(entry.name).model_copy(
        update={"id": entry.id, "parent_ids": [], "origin": "baseline"}
    )
    t0, before = time.perf_counter(), rec.meter.now()
    with showing(rec.progress, f"{entry.name} (later tasks)", len(later)):
        ev = await rec.executor.evaluate(design, [], later)
    if ev.status != "ok":
        raise ConfigError(f"the no-memory baseline could not run its later tasks: {'; '.join(ev.errors)}")
    for i, episode in enumerate(ev.deployment, len(played) + 1):
        episode.label = f"D{i}"
    base["per_task"] = [*base["per_task"], *(baseline_row(e) for e in ev.deployment)]
    scores = [t["score"] for t in base["per_task"]]
    base["score"] = sum(scores) / len(scores)
    del base["partial"]
    entry.per_task = [*entry.per_task, *ev.per_task()]
    entry.deployment_score = base["score"]
    entry.vs_no_memory = paired_difference(scores, scores).to_dict()  # itself, now on every task
    entry.metadata.pop("staged", None)
    entry.metadata["later_s"] = ev.duration_s  # eval_duration_s stays the first play's (see played_s)
    entry.usage = add_usage(dict(entry.usage or {}), rec.meter.since(before))
    if (first := rec.first_batch) is not None:
        whole = first.evaluation
        whole.deployment = [*whole.deployment, *ev.deployment]
        whole.stage, whole.stop_reason, whole.duration_s = "full", "", whole.duration_s + ev.duration_s
        rec.write_logs(entry, whole)
        if first.cache is not None:
            atomic_write_text(first.cache, baseline_record(first.key, whole))
        rec.first_batch = None
    rec.archive.save()
    rec.emit(
        "baseline.completed",
        score=base["score"],
        played=len(later),
        of=len(rec.deployment_tasks),
        duration_s=round(time.perf_counter() - t0, 3),
    )
    rec.progress.line(
        f"baseline  no_memory      deployment {fmt(base['score'])} over all {len(scores)} tasks "
        f"(played the later {len(later)} once a design reached them)"
    )


__all__ = [
    "LATER",
    "NO_MEMORY_NAME",
    "FirstBatch",
    "baseline_entry",
    "baseline_row",
    "complete_baseline",
    "first_batch_only",
    "played_s",
]
