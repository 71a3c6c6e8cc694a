"""Generation 0: the no-memory baseline (cached across runs by evaluation key) and the seed designs
(the environment's own and the hand-built baselines), played and recorded before the search."""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

from atlas.alma.author.prompts import fmt
from atlas.alma.baselines import get_baseline, list_baselines
from atlas.alma.design import Design
from atlas.alma.evaluate.harness import Evaluation
from atlas.alma.genome import BASELINE_GENOMES, baseline_genome
from atlas.alma.search.baseline_cache import baseline_record, read_baseline
from atlas.alma.search.baseline_stages import (
    NO_MEMORY_NAME,
    FirstBatch,
    baseline_row,
    first_batch_only,
    played_s,
)
from atlas.alma.search.budget import (
    no_room,
    over_seed_share,
    pace_note,
    seed_out_of_time,
    staged_s,
    test_phase_s,
)
from atlas.alma.search.progress import showing
from atlas.alma.search.record import Check, Recorder, paired_vs_baseline
from atlas.alma.state.archive import Archive
from atlas.alma.state.config import AlmaConfig
from atlas.alma.state.run_dir import atomic_write_text
from atlas.alma.state.search_record import SearchRecord
from atlas.alma.state.staging import Verdict
from atlas.envs.registry import spec_of
from atlas.errors import ConfigError
from atlas.infra.fs import cache_dir
from atlas.protocols.env import Environment


def default_cache_dir() -> Path:
    """Where no-memory baselines are cached across runs (replays sit beside it)."""
    return cache_dir("baselines")


def no_memory_design(archive: Archive) -> Design:
    base = get_baseline(NO_MEMORY_NAME)
    return base.model_copy(update={"id": archive.next_id(), "parent_ids": [], "origin": "baseline"})


def seed_designs(env: Environment, config: AlmaConfig) -> list[Design]:
    """The environment's seed design (unless ``env_seed`` is off) and the library baselines (except
    no_memory), in order."""
    out: list[Design] = []
    seed_src = spec_of(env).seed_design(env) if config.env_seed else None
    if seed_src:
        out.append(Design(name=f"{env.name}_seed", source=seed_src, origin="seed"))
    wanted = config.baselines
    for name in list_baselines(env=env.name):
        if name == NO_MEMORY_NAME or (wanted is not None and name not in wanted):
            continue
        out.append(get_baseline(name))
    return out


async def play_first_batch(rec: Recorder, design: Design) -> Evaluation:
    """No memory on the collection tasks and, under staged evaluation, the first batch of deployment
    tasks only (see ``baseline_stages``)."""
    staged = 0 < rec.config.stage_tasks < len(rec.deployment_tasks)
    first = rec.config.stage_tasks if staged else len(rec.deployment_tasks)
    with showing(rec.progress, design.name, len(rec.collection_tasks) + first):
        return await rec.executor.evaluate(
            design,
            rec.collection_tasks,
            rec.deployment_tasks,
            stage_tasks=rec.config.stage_tasks,
            go_on=first_batch_only if staged else None,
        )


async def play_baseline(rec: Recorder, *, cache: Path | None, key: str) -> None:
    """Play (or read from ``cache``) the no-memory baseline and record it as the archive's baseline
    and its first entry; a baseline that cannot run stops the search (``ConfigError``)."""
    archive = rec.archive
    if archive.baseline is not None:
        return
    design = no_memory_design(archive)
    t0 = time.perf_counter()
    before = rec.meter.now()
    ev: Evaluation | None = None
    cached = False
    state = "off"  # what the cache did: off | miss | hit | refused (the trace counts them)
    if cache is not None:  # a sealed entry valid for these tasks is used; anything else is played again
        ev, refused = read_baseline(
            cache, key, [t.id for t in rec.collection_tasks], [t.id for t in rec.deployment_tasks]
        )
        state = "hit" if ev is not None else "refused" if refused else "miss"
        if ev is not None:
            ev.design_id, ev.name = design.id, design.name
            cached = True
    if ev is None:
        ev = await play_first_batch(rec, design)
        if ev.status != "ok":
            raise ConfigError(f"the no-memory baseline could not run: {'; '.join(ev.errors)}")
        if ev.stage == "minibatch":
            rec.first_batch = FirstBatch(ev, cache, key)
        elif cache is not None:
            atomic_write_text(cache, baseline_record(key, ev))
    archive.baseline = {
        "score": ev.deployment_score,
        "collection_score": ev.collection_score,
        "per_task": [baseline_row(e) for e in ev.deployment],
        "cached": cached,
        "cache": state,
        "key": key,
        **(
            {"partial": {"played": len(ev.deployment), "of": ev.deployment_total}}
            if ev.stage == "minibatch"
            else {}
        ),
    }
    entry = rec.entry(ev, design=design, generation=0, metadata={"baseline_cached": cached})
    entry.normalized_score = 0.0
    if ev.stage == "minibatch":  # the reference the first batch of every design is staged against
        entry.stage, entry.vs_no_memory = "full", paired_vs_baseline(ev, archive.baseline)
        entry.metadata["staged"].pop("vs_no_memory_partial", None)
    rec.keep(entry, design.source, usage=rec.meter.since(before), announce=False)
    rec.emit(
        "baseline.done",
        score=ev.deployment_score,
        collection_score=ev.collection_score,
        cached=cached,
        cache=state,
        duration_s=round(time.perf_counter() - t0, 3),
    )
    rec.announce(entry)
    rec.progress.line(
        f"baseline  no_memory      deployment {fmt(ev.deployment_score)}  "
        f"collection {fmt(ev.collection_score)}{'  (cached)' if cached else ''}"
    )
    per, n_deploy = per_episode_s(archive), len(rec.deployment_tasks)
    if note := pace_note(per, rec.config, n_deploy, archive.clock.run_time_s()):
        rec.emit("budget.pace", note=note)
        rec.progress.line(note)


# How many of the latest played evaluations the run's pace is the median of: the load on the machine
# changes (a ScienceWorld baseline played while a test suite shared the cores took 159 s an episode,
# the search's later probes about 31), and one slow evaluation should not decide alone.
PACE_OF = 3


def per_episode_s(archive: Archive) -> float:
    """The run's pace: the median seconds per episode of its latest ``PACE_OF`` evaluations played in
    this run (a cached baseline's, played elsewhere, only while nothing else was); 0 before any."""
    timed = [
        (e, seconds / len(e.per_task))
        for e in archive
        if e.per_task and (seconds := played_s(e)) is not None and seconds > 0
    ]
    here = [per for e, per in timed if not e.metadata.get("baseline_cached")]
    latest = (here or [per for _, per in timed])[-PACE_OF:]
    return statistics.median(latest) if latest else 0.0


def seeds_spent_s(archive: Archive) -> float:
    """Seconds the hand-built designs of this run took (no memory, the baseline, aside)."""
    return sum(
        played_s(e) or 0.0
        for e in archive
        if e.generation == 0 and e.name != NO_MEMORY_NAME and not e.metadata.get("baseline_cached")
    )


def learns_with_model(design: Design) -> bool:
    """Whether a hand-built design calls the model in ``update`` (host adapters, LLM-using genomes)."""
    if design.origin == "host":
        return True
    return design.name in BASELINE_GENOMES and baseline_genome(design.name).uses_llm()


def costly_seeds_due(archive: Archive, generation: int, generations: int, max_minutes: float | None) -> bool:
    """Whether a genome search plays the hand-built designs that learn with the model before
    ``generation``. Under ``--max-minutes``, never: they are the comparison, not the search, and play in
    the time the search cannot use (when the next generation would not end in time, or after the last;
    on ``greenhouse``, played once a found design beat no memory, four took 20 of 120 minutes and left
    one generation). Without a time cap, once a design the search found beats no memory over every
    deployment task (they are staged against it and stop early when they cannot win), or half-way
    through the generations."""
    if max_minutes is not None:
        return False
    found = any(
        e.origin == "meta" and e.scored and e.stage == "full" and (e.normalized_score or 0.0) > 0
        for e in archive
    )
    return found or generation > generations // 2


def in_time(rec: Recorder, test_s: float) -> Check:
    """The check that stops a hand-built design after a batch once the rest of its tasks, at its own
    pace since it started, would leave no time for the test phase (``test_s``) under ``--max-minutes``."""
    started, run_s = time.perf_counter(), rec.archive.clock.run_time_s()
    collection = len(rec.collection_tasks)

    def check(recs: list[Any]) -> Verdict:
        spent = time.perf_counter() - started
        per = spent / max(1, collection + len(recs))
        left = len(rec.deployment_tasks) - len(recs)
        why = seed_out_of_time(rec.config, run_s + spent, per, left, test_s)
        return Verdict(why is None, why or "")

    return check


async def play_seeds(rec: Recorder, designs: list[Design], *, skip_costly: bool = False) -> None:
    """The environment's seed design plays every task; the hand-built baselines are staged against
    the best so far like any new design (a baseline that cannot win stops early, marked minibatch).
    ``skip_costly``: leave out the designs that call the model while they learn (host adapters,
    cheatsheet, reasoning_bank): a genome search plays them once it has a design to stage them
    against, so that one that cannot win stops after its first batch."""
    for design in designs:
        if any(e.generation == 0 and e.name == design.name for e in rec.archive):
            continue  # already evaluated (resume)
        if (skip_costly and learns_with_model(design)) or design.name in rec.seeds_skipped:
            continue
        per = per_episode_s(rec.archive)  # the latest pace: each design played updates it
        why = no_room(per, rec.config, len(rec.deployment_tasks), rec.archive.clock.run_time_s())
        next_s = staged_s(per, rec.config, len(rec.deployment_tasks))
        if why := why or over_seed_share(seeds_spent_s(rec.archive), rec.config, next_s):
            rec.seeds_skipped.add(design.name)
            rec.emit("seed.skipped", name=design.name, reason=why)
            rec.progress.line(f"seed      {design.name:14s} {why}")
            continue
        design = design.model_copy(update={"id": rec.archive.next_id(), "parent_ids": []})
        before = rec.meter.now()
        genome = baseline_genome(design.name) if design.name in BASELINE_GENOMES else None
        search = SearchRecord(genome=genome.model_dump()) if genome is not None else None
        staged = design.origin != "seed"
        within = in_time(rec, test_phase_s(per, rec.config)) if staged else None
        _, entry = await rec.play(design, generation=0, staged=staged, within=within, search=search)
        rec.keep(entry, design.source, usage=rec.meter.since(before))
        rec.progress.line(rec.design_line("seed", entry))


__all__ = [
    "NO_MEMORY_NAME",
    "costly_seeds_due",
    "default_cache_dir",
    "learns_with_model",
    "no_memory_design",
    "per_episode_s",
    "play_baseline",
    "play_seeds",
    "seed_designs",
]
