"""One genome generation of the search: candidates made by an operator from the parents' genomes,
screened by the advice probe (no LLM), the best few checked with memory from the task agent's own
collection games, and the best of those played by the task agent when its probe beats that of the best
design played so far (``probe_bar``; ``atlas.alma.genome.step`` screens). What the generation measured
goes into its entry's search record (``atlas.alma.state.search_record``)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from random import Random
from typing import Any

from atlas.alma.author.advice_probe import can_probe, unscored_progress, walks_rise
from atlas.alma.author.analysis import parent_analysis
from atlas.alma.author.debug_log import DesignLogs
from atlas.alma.baselines import get_baseline
from atlas.alma.design import Design
from atlas.alma.genome import Genome, ObsKeys
from atlas.alma.genome.bandit import operator_stats, stats_table
from atlas.alma.genome.compile import genome_design
from atlas.alma.genome.screening_report import screening_record
from atlas.alma.genome.step import (
    OWN_GAMES,
    Candidate,
    entry_genome,
    evolve_candidates,
    probe,
    probe_collections,
)
from atlas.alma.sandbox.pool import WorkerPool
from atlas.alma.search.agent_check import (
    OWN_KIND,
    actions_by_task,
    checked_anchors,
    checked_likeness,
    checked_rank,
    scored_games,
    screening_rank,
    to_check,
)
from atlas.alma.search.budget import screening_s
from atlas.alma.search.progress import showing
from atlas.alma.search.record import Recorder, beats
from atlas.alma.search.seeds import NO_MEMORY_NAME
from atlas.alma.state.archive import Archive, ArchiveEntry
from atlas.alma.state.highest import collection_reached, gives_partial_score
from atlas.alma.state.search_record import (
    OperatorStatsRow,
    ProbeKind,
    SearchRecord,
)
from atlas.errors import ArchiveError
from atlas.protocols.embed import Embedder
from atlas.protocols.env import Environment
from atlas.protocols.llm import LLM


def probe_bar(archive: Archive, probes: dict[str, float]) -> float:
    """The probe a candidate must beat to be played: that of the best design played so far
    (``Archive.best``; the highest probe among designs tied with it). A played design that probed higher
    but scored lower shows the probe overrated it, so it sets no bar. A bar of every played design's probe
    rises with each overrated one: in docs/results/history/discovery-depot-played-bar-0.5b.tar.xz, which ran under that bar, the
    last eight generations were screened out below a probe of 0.484 whose design scored +0.095, while the
    best design, +0.156, probed 0.391."""
    best = archive.best()
    if best is None:
        return max(probes.values(), default=0.0)
    ties = [
        e for e in archive.scored() if e.stage == best.stage and e.normalized_score == best.normalized_score
    ]
    return max(probes.get(e.id, 0.0) for e in ties)


#: Generations whose best candidate moved the screening and that the agent check refuted, since the last
#: design played, after which the next such candidate is played anyway. The check probes with memory from
#: the task agent's own collection games, and the probe stops where the advice names nothing; the agent
#: plays on. On ScienceWorld every check probed 0.000 (docs/results/search-scienceworld-own-collection),
#: though the 0.5B with a genome of the same parts, from its own games, beat no memory on the test
#: variations (docs/results/eval-scienceworld-effects-route).
REFUTED_TO_PLAY = 2


def refuted_since_played(archive: Archive) -> int:
    """How many generations since the last design played were screened out by the agent check (an
    ``invalid`` entry whose record holds the check's probe); those the screening itself screened out do
    not count."""
    count = 0
    for entry in reversed(list(archive)):
        if entry.origin != "meta":
            continue
        if entry.status != "invalid":
            break
        count += entry.search is not None and entry.search.agent_probe is not None
    return count


def played_refuted(c: Candidate) -> tuple[float, float, float, int]:
    """The order of the refuted candidates to play: how far the task agent's own games with its advice
    reached, then the screening's order."""
    return (c.collection_reached or 0.0, *screening_rank(c))


class GenomeStep:
    """Makes the child of a genome generation (screening included) and records probe scores."""

    def __init__(
        self,
        rec: Recorder,
        *,
        env: Environment,
        embedder: Embedder,
        pool: WorkerPool,
        meta_llm: LLM | None,
        obs_keys: ObsKeys,
        representation: str,
        operators: list[str],
    ) -> None:
        self.rec = rec
        self.env = env
        self.embedder = embedder
        self.pool = pool
        self.meta_llm = meta_llm
        self.obs_keys = obs_keys
        self.representation = representation
        self.operators = operators
        self._logged: dict[str, list[str]] | None = None
        self._walks_rise: bool | None = None

    def collection_of(self, entry: ArchiveEntry) -> dict[str, list[str]]:
        """The task agent's actions in each collection task as ``entry``'s logs hold them ({} if none)."""
        return self._collection_in(entry.logs_dir, entry.id, entry.model_dump(mode="json"))

    def _collection_in(
        self, logs_dir: str | None, design_id: str, entry: dict[str, Any]
    ) -> dict[str, list[str]]:
        logs = DesignLogs.from_dir(self.rec.run_dir.entry_logs(logs_dir, design_id), entry)
        return actions_by_task(r for r in logs.episodes if r.get("phase") == "collection")

    def logged_collection(self) -> dict[str, list[str]]:
        """The no-memory baseline's collection games (read once): what the screening learns each
        candidate's memory from (``LOGGED_COLLECTIONS``); empty when the baseline left no log, and the
        probe walks instead."""
        if self._logged is None:
            base = self._no_memory()
            self._logged = self.collection_of(base) if base else {}
        return self._logged

    def checked_games(self) -> dict[str, list[str]]:
        """The games of ``scored_games``, per collection task: the screening learns memory from them too."""
        logs_dir = scored_games(self.rec.archive)
        try:  # a logs path that leaves the run folder (ArchiveError): the screening goes without it
            return self._collection_in(logs_dir, logs_dir, {}) if logs_dir else {}
        except ArchiveError:
            return {}

    def _no_memory(self) -> ArchiveEntry | None:
        return next(
            (e for e in self.rec.archive if e.origin == "baseline" and e.name == NO_MEMORY_NAME), None
        )

    def partial_score(self) -> bool:
        """Whether the environment gives a partial score, asked at each generation's start: the task
        agent's episodes so far show it (``gives_partial_score`` over every played design's, the
        baselines' first), an earlier generation's screening did (its best candidate scored on the probe
        and solved nothing), or walks with no model do (``walks_rise``, played once). The probe then
        measures progress by the score alone."""
        archive = self.rec.archive
        if gives_partial_score(t for e in archive for t in e.per_task) or any(
            (r.probe_score or 0) > 0 and r.probe_solved == 0 for r in (e.search for e in archive) if r
        ):
            return True
        if self._walks_rise is None:
            self._walks_rise = walks_rise(self.env, self.rec.collection_tasks)
        return self._walks_rise

    def probe_kind(self) -> ProbeKind:
        """Which collections the screening learns from (``probe_collections``), as recorded."""
        return "logged" if self.logged_collection() else "walks"

    async def probe_of(self, entry: ArchiveEntry) -> float:
        """``entry``'s advice probe with memory from its *own* collection games, as the task agent played
        them with it (``own``; the screening's collections for an entry without logs): measured once and
        kept in its search record, again when it was measured otherwise (a run resumed after a change,
        or a record that does not say how: ``probe_kind`` None)."""
        rec = entry.search or SearchRecord()
        if rec.probe_score is not None and rec.probe_kind == OWN_KIND:
            return rec.probe_score  # its own games do not change: no logs to read
        own = self.collection_of(entry)
        kind = OWN_KIND if own else self.probe_kind()
        if rec.probe_score is not None and rec.probe_kind == kind:
            return rec.probe_score
        design = get_baseline(entry.name) if entry.origin == "host" else entry.design
        result = await (
            self._own_probe(design, own) if own else self._probe(design, self.logged_collection())
        )
        rec.probe_score = score = round(result["probe_score"], 4)
        rec.steered = round(result["steered"], 4)
        rec.probe_kind = kind
        entry.search = rec
        return score

    async def probe_bar(self, archive: Archive) -> float:
        """The probe a candidate must beat to be played (``probe_bar``), each played design's probe
        measured with its own collection games (``probe_of``)."""
        return probe_bar(archive, {e.id: await self.probe_of(e) for e in archive.scored()})

    async def _probe(
        self,
        design: Design,
        logged: dict[str, list[str]],
        collections: tuple[tuple[Any, ...], ...] | None = None,
    ) -> dict[str, Any]:
        return await probe(
            design,
            self.env,
            self.rec.collection_tasks,
            self.rec.deployment_tasks[: self.rec.config.probe_tasks],
            embedder=self.embedder,
            pool=self.pool,
            logged=logged,
            collections=collections,
            partial=self.partial_score(),
        )

    async def _own_probe(self, design: Design, own: dict[str, list[str]]) -> dict[str, Any]:
        """The probe with memory from ``design``'s own collection games alone (``OWN_GAMES``)."""
        return await self._probe(design, own, OWN_GAMES)

    async def agent_check(
        self, screened: list[Candidate], child_id: str, name: str, anchors: Sequence[Genome] = ()
    ) -> list[Candidate]:
        """The candidates ``to_check`` (``agent_checks`` of ``AlmaConfig``): each one's collection played
        by the task agent with it, then its probe with memory from those games (``Candidate.agent_probe``)
        — what the task agent's own collection teaches it, which the baseline's games cannot show when the
        candidate's advice changes how the agent collects."""
        picked = to_check(screened, anchors, self.rec.config.agent_checks, checked_likeness(self.rec.archive))
        slots = asyncio.Semaphore(max(1, self.rec.config.concurrency))  # checks share the agent's slots

        async def check(i: int, c: Candidate) -> None:
            design = genome_design(c.genome, name=f"{name}-check{i}", id=child_id, origin="meta")
            async with slots:
                ev = await self.rec.executor.evaluate(design, self.rec.collection_tasks, [])
            c.collection_reached = collection_reached(ev.collection)
            c.logs = self.rec.write_evaluation_logs(
                f"{child_id}-check{i}",
                {
                    "id": f"{child_id}-check{i}",
                    "name": design.name,
                    "origin": "agent check",
                    "collection_score": ev.collection_score,
                },
                ev,
            )
            if ev.status != "ok":
                c.error = f"its collection with the task agent failed: {'; '.join(ev.errors)}"[:200]
                return
            r = await self._own_probe(design, actions_by_task(e.to_dict() for e in ev.collection))
            c.agent_probe, c.agent_steered, c.agent_solved = r["probe_score"], r["steered"], r["solved"]
            parts = "+".join(u.part for u in c.genome.retrieve)
            self.rec.progress.line(
                f"check     {design.name:28s} screening {c.probe_score:.3f}  with the agent's collection "
                f"{c.agent_probe:.3f} ({c.agent_solved} solved)  {parts}"
            )

        with showing(self.rec.progress, f"{name} agent check", len(self.rec.collection_tasks) * len(picked)):
            await asyncio.gather(*(check(i, c) for i, c in enumerate(picked, start=1)))
        return picked

    async def child(
        self, generation: int, parents: list[ArchiveEntry], operator: str, rng: Random
    ) -> tuple[ArchiveEntry, str]:
        """A genome generation: candidates by ``operator``, screened by the advice probe (no LLM), the
        best few checked with the task agent's own collection; the best of those is played by the task
        agent when its probe beats the best played design's (``probe_bar``). Once the check has refuted the
        best of ``REFUTED_TO_PLAY`` generations since a design was played, a refuted one whose screening
        beat the bar is played anyway (``played_refuted``): the task agent, not the probe, then decides."""
        rec, archive, cfg = self.rec, self.rec.archive, self.rec.config
        child_id = archive.next_id()
        with_genome = [(p, entry_genome(p)) for p in parents]
        briefs = []
        for p, g in with_genome:
            if g is not None:
                logs = DesignLogs.from_dir(
                    rec.run_dir.entry_logs(p.logs_dir, p.id), p.model_dump(mode="json")
                )
                briefs.append((g, p.normalized_score, parent_analysis(logs.episodes)))
        # Probe elites: the genomes whose advice steered the probe furthest so far, even those screened out
        # before any episode (a (mu + lambda) search on the probe between task-agent evaluations).
        probed = [
            (r.steered, e)
            for e in archive
            if (r := e.search) is not None
            and r.steered is not None
            and r.screened_with == self.probe_kind()  # comparable scores only
            and r.agent_probe is None  # not one the agent's own collection refuted
            and entry_genome(e) is not None
        ]
        elites = [e for _, e in sorted(probed, key=lambda t: -t[0])][:2]
        for e in elites:
            g = entry_genome(e)
            if g is not None and all(g.key != b[0].key for b in briefs):
                briefs.append((g, e.normalized_score, ""))
        seen = {g.key for g in (entry_genome(e) for e in archive) if g is not None}
        name = f"{operator}-{child_id}"
        # Cheap first: only a candidate whose probe beats the best design the task agent has played so
        # far (each with memory from its own collection games) is worth deployment episodes. The
        # screening (no LLM) spends its whole budget, stopping early only for a candidate that solves every
        # probe task, and hands its best few to the agent check (``agent_checks``): their collection
        # games with the task agent, and the probe again with memory from those.
        bar = await self.probe_bar(archive)
        probing = can_probe(self.env)
        logged = self.logged_collection()
        games = self.checked_games() if logged else {}
        anchors = checked_anchors(archive) if probing and cfg.agent_checks else []
        sources = len(probe_collections(logged)) + bool(games)
        every = len(rec.deployment_tasks[: cfg.probe_tasks]) * sources  # all solved

        def good_enough(c: Candidate) -> bool:
            if c.error or not probing:
                return not c.error
            # a probe above the bar (>= 0) took the advice somewhere: a solved task, or partial progress
            if c.agent_probe is None:  # unchecked (``--agent-checks 0``): the screening's own score
                return c.probe_score > bar
            return c.agent_probe > bar

        def perfect(c: Candidate) -> bool:
            return not probing or (not c.error and c.solved >= every)

        screened, notes = await evolve_candidates(
            operator,
            briefs,
            self.obs_keys,
            rng,
            budget=cfg.genome_candidates,
            seen=seen,
            env=self.env,
            collection=rec.collection_tasks,
            probe_tasks=rec.deployment_tasks[: cfg.probe_tasks],
            embedder=self.embedder,
            pool=self.pool,
            meta_llm=self.meta_llm,
            name=name,
            good_enough=perfect,
            logged=logged,
            checked=games or None,
            anchors=anchors,
            on_round=rec.progress.line,
            time_box_s=screening_s(cfg),
            partial=self.partial_score(),
        )
        checked = (
            await self.agent_check(screened, child_id, name, anchors) if probing and cfg.agent_checks else []
        )
        ok = [c for c in (checked or screened) if not c.error]
        best: Candidate | None = max(ok, key=checked_rank if checked else screening_rank, default=None)
        record = screening_record(screened, checked, notes)
        record.operator, record.representation = operator, self.representation
        record.probe_bar, record.probe_kind = bar, self.probe_kind()
        for note in notes:
            rec.emit("operator.fallback", generation=generation, note=note)
        refuted = [c for c in checked if not c.error and c.probe_score > bar]
        if (
            best is not None
            and not good_enough(best)
            and refuted
            and refuted_since_played(archive) + 1 >= REFUTED_TO_PLAY
        ):
            best = max(refuted, key=played_refuted)  # the probe cannot tell them apart: the task agent will
            record.played_refuted = True
            rec.progress.line(
                f"{'play':9} {name}: the agent check refuted the best of {REFUTED_TO_PLAY} generations since a design "
                "was played; the task agent plays the refuted one whose own collection went furthest"
            )
        elif best is None or not good_enough(best):
            return self._screened_out(generation, parents, child_id, name, best, bar, len(screened), record)
        design = genome_design(
            best.genome, name=name, id=child_id, parent_ids=[p.id for p in parents], origin="meta"
        )
        record.genome, record.screen_score = best.genome.model_dump(), round(best.probe_score, 4)
        if best.agent_probe is not None:  # checked: what ``probe_of`` measures for a played design
            record.probe_score, record.steered = round(best.agent_probe, 4), round(best.agent_steered, 4)
            record.probe_solved, record.probe_kind = best.agent_solved, OWN_KIND
        else:
            record.probe_score, record.probe_solved = round(best.probe_score, 4), best.solved
        _, entry = await rec.play(design, generation=generation, staged=True, search=record)
        record.beat_parent = beats(entry, parents[0])
        stats = operator_stats([*(e.search for e in archive), record], self.operators)
        record.operator_stats = [OperatorStatsRow(**row) for row in stats_table(stats)]
        entry.search = record
        return entry, design.source

    def _screened_out(
        self,
        generation: int,
        parents: list[ArchiveEntry],
        child_id: str,
        name: str,
        best: Candidate | None,
        bar: float,
        screened: int,
        record: SearchRecord,
    ) -> tuple[ArchiveEntry, str]:
        """The ``invalid`` entry of a generation whose best candidate did not pass the screening."""
        if best is None or best.probe_score <= 0:
            base = self._no_memory()
            why = (
                "no candidate's advice steered the probe to a solved task or a partial score: the screening "
                "found no memory that moves the advice probe here"
            ) + unscored_progress([(t.success, t.score) for t in base.per_task] if base else [])
        elif best.agent_probe is None:
            why = f"best probe {best.probe_score:.3f} does not beat {bar:.3f}, the probe of the best played design"
        else:
            why = (
                f"with the task agent's own collection the best candidate probes {best.agent_probe:.3f} "
                f"(screening {best.probe_score:.3f}), not above {bar:.3f}, the probe of the best played design"
            )
        if best is not None:
            record.genome = best.genome.model_dump()
            record.probe_score, record.steered = round(best.probe_score, 4), round(best.steered, 4)
            record.probe_solved = best.solved
            if best.agent_probe is not None:
                record.agent_probe = round(best.agent_probe, 4)
        record.beat_parent = False
        entry = ArchiveEntry(
            id=child_id,
            name=name,
            origin="meta",
            generation=generation,
            parent_ids=[p.id for p in parents],
            status="invalid",
            errors=[f"screened out by the advice probe: {why} ({screened} candidates)"],
            search=record,
        )
        source = genome_design(best.genome).source if best is not None else "# no candidate\n"
        return entry, source


__all__ = ["GenomeStep", "probe_bar"]
