"""One genome generation of the search: candidates made by an operator from the parents' genomes,
screened by the advice probe (no LLM), the best few checked with memory from the task agent's own
collection games, and the best of those played by the task agent when its probe beats every design
played so far (see ``atlas.alma.genome.step`` for the screening itself)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from random import Random
from typing import Any

from atlas.alma.author.advice_probe import can_probe
from atlas.alma.author.analysis import parent_analysis
from atlas.alma.author.debug_log import DesignLogs
from atlas.alma.baselines import get_baseline
from atlas.alma.design import Design
from atlas.alma.genome import Genome, ObsKeys
from atlas.alma.genome.bandit import operator_stats, stats_table
from atlas.alma.genome.compile import genome_design
from atlas.alma.genome.step import (
    OWN_GAMES,
    Candidate,
    entry_genome,
    evolve_candidates,
    probe,
    probe_collections,
    read_genome,
)
from atlas.alma.sandbox.pool import WorkerPool
from atlas.alma.search.record import Recorder, beats
from atlas.alma.search.seeds import NO_MEMORY_NAME
from atlas.alma.state.archive import Archive, ArchiveEntry
from atlas.protocols.embed import Embedder
from atlas.protocols.env import Environment
from atlas.protocols.llm import LLM

# The agent check (``AlmaConfig.agent_checks``, 6): the screening's best few candidates have their
# collection games played by the task agent before one is chosen. The
# screening learns a candidate from the baseline's games and from walks; a candidate whose advice changes
# how the agent collects learns something else. Measured on each committed run's played genomes (the
# probe with memory from the baseline's games, then from the design's own; the agent's gain over no
# memory in brackets; ``scripts/probe_genomes.py RUN G.json=DESIGN_ID``): TextWorld fetch, the sighted
# route [+0.342] 0.412 -> 0.879, the two searched genomes [-0.258, -0.498] 0.325 -> 0.178 and 0.462 ->
# 0.000; GraphWorld's found genome [+0.377] 0.603 -> 0.422; the demo's [+0.708] 0.812 -> 0.708; the
# depot's [+0.294] 0.410 -> 0.391 (its other, [+0.195], 0.309 -> 0.000 on the first two tasks). A check
# costs the agent's collection games (the first, with empty memory, is usually the baseline's, replayed
# from the LLM reply cache; the chosen one's are replayed when it is played), two at once.
OWN_KIND = "own games"  # ``probe_kind`` of a probe with memory from a design's own collection games
# The climb learns from the check: the genomes that probed best with the agent's own collection in earlier
# generations (played or not; ``anchors``) stay sources of the screening's climb, and the best-screened
# candidate made from each takes one of the check's slots (at most half of them), so the search climbs on
# the score the agent's games give while the screening only filters each one's neighbours. Without it the
# climb followed the screening alone, which ranks fetch's genomes the wrong way round (see above).
ANCHORS = 2


def actions_by_task(rows: Iterable[dict[str, Any]]) -> dict[str, list[str]]:
    """``{task id: [action, ...]}`` of logged episodes (``EpisodeRecord.to_dict()`` rows)."""
    out: dict[str, list[str]] = {}
    for row in rows:
        if row.get("task_id"):
            steps = row.get("actions") or []
            out[str(row["task_id"])] = [str(a.get("text") or "") for a in steps if isinstance(a, dict)]
    return out


def _number(x: Any) -> float:
    return float(x) if isinstance(x, int | float) and not isinstance(x, bool) else 0.0


def _checked_rows(entries: Iterable[ArchiveEntry]) -> list[dict[str, Any]]:
    """Every genome the agent check has measured: the rows of ``metadata["checked"]`` (played or not)
    and played genomes measured so (runs from before ``checked`` was kept)."""
    rows: list[dict[str, Any]] = []
    for e in entries:
        rows += [r for r in e.metadata.get("checked") or [] if isinstance(r, dict)]
        if e.status == "ok" and e.metadata.get("probe_kind") == OWN_KIND:
            rows.append(
                {
                    "genome": e.metadata.get("genome"),
                    "agent_probe": e.metadata.get("probe_score"),
                    "agent_steered": e.metadata.get("steered"),
                }
            )
    return rows


def checked_anchors(entries: Iterable[ArchiveEntry], n: int = ANCHORS) -> list[Genome]:
    """The ``n`` genomes whose probe with the task agent's own collection games was best (``_checked_rows``),
    best first; none that probed 0, each once."""
    best: dict[str, tuple[float, float, Genome]] = {}
    for row in _checked_rows(entries):
        g = read_genome(row.get("genome"))
        score, steered = _number(row.get("agent_probe")), _number(row.get("agent_steered"))
        if g is not None and score > 0 and (score, steered) > best.get(g.key, (0.0, 0.0, g))[:2]:
            best[g.key] = (score, steered, g)
    ranked = sorted(best.values(), key=lambda t: (t[0], t[1]), reverse=True)
    return [g for _, _, g in ranked[:n]]


def _rank(c: Candidate) -> tuple[float, float, int]:
    """The screening's order: probe score, then how far the advice steered, then fewer retrieve parts."""
    return (c.probe_score, c.steered, -len(c.genome.retrieve))


def _checked_rank(c: Candidate) -> tuple[float, float, float, float]:
    """After the agent check: the probe with the agent's own collection first, then the screening's."""
    return (c.agent_probe or 0.0, c.agent_steered, c.probe_score, c.steered)


def _likeness(genome: Genome, screen_score: float) -> tuple[tuple[str, ...], float]:
    """What a near copy shares with its original: the retrieve parts and the screening's score (a copy
    with its parts reordered, or a parameter changed that the memory never reaches, screens the same)."""
    return tuple(sorted({r.part for r in genome.retrieve})), round(round(screen_score, 4), 3)  # rows keep 4


def checked_likeness(entries: Iterable[ArchiveEntry]) -> set[tuple[tuple[str, ...], float]]:
    """``_likeness`` of every genome the agent check measured in earlier generations."""
    out = set()
    for row in _checked_rows(entries):
        g, score = read_genome(row.get("genome")), row.get("screen_score")
        if g is not None and isinstance(score, int | float) and not isinstance(score, bool):
            out.add(_likeness(g, float(score)))
    return out


def to_check(
    screened: list[Candidate],
    anchors: Sequence[Genome],
    limit: int,
    checked: Iterable[tuple[tuple[str, ...], float]] = (),
) -> list[Candidate]:
    """Up to ``limit`` candidates for the agent check, of those whose probe scored (a solved task or a
    partial score): first, for each
    of ``anchors`` (at most half of ``limit``), the best-screened candidate the climb made from it; then
    the screening's best, each the best of its set of retrieve parts (a family of near copies is
    checked once). None is a near copy (``_likeness``) of another pick or of a genome ``checked`` before:
    such a copy spends the agent's games to measure what is known (in one fetch generation all six
    checks were the anchors again, parts reordered)."""
    ranked = sorted((c for c in screened if not c.error and c.probe_score > 0), key=_rank, reverse=True)
    known = set(checked)
    picked: list[Candidate] = []

    def take(c: Candidate) -> None:
        known.add(_likeness(c.genome, c.probe_score))
        picked.append(c)

    def new(c: Candidate) -> bool:
        return _likeness(c.genome, c.probe_score) not in known and all(c is not p for p in picked)

    for a in anchors[: limit // 2]:
        near = next((c for c in ranked if c.anchor == a.key and new(c)), None)
        if near is not None:
            take(near)
    kinds: set[tuple[str, ...]] = set()
    for c in ranked:
        kind = _likeness(c.genome, 0.0)[0]
        if kind not in kinds and new(c) and len(picked) < limit:
            kinds.add(kind)
            take(c)
    return picked


def probe_bar(archive: Archive, probes: dict[str, float]) -> float:
    """The probe a candidate must beat to be played: that of the best design played so far
    (``Archive.best``; the highest probe among designs tied with it). A played design that probed higher
    but scored lower shows the probe overrated it, so it sets no bar: a bar of every played design's probe
    rose with each overrated one and screened out every later generation (the depot search of session 20:
    eight in a row below a probe of 0.484 whose design scored +0.095, while its best, +0.156, probed 0.391)."""
    best = archive.best()
    if best is None:
        return max(probes.values(), default=0.0)
    ties = [
        e for e in archive.scored() if e.stage == best.stage and e.normalized_score == best.normalized_score
    ]
    return max(probes.get(e.id, 0.0) for e in ties)


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

    def collection_of(self, entry: ArchiveEntry) -> dict[str, list[str]]:
        """The task agent's actions in each collection task as ``entry``'s logs hold them ({} if none)."""
        logs = DesignLogs.from_dir(
            self.rec.run_dir.entry_logs(entry.logs_dir, entry.id), entry.model_dump(mode="json")
        )
        return actions_by_task(r for r in logs.episodes if r.get("phase") == "collection")

    def logged_collection(self) -> dict[str, list[str]]:
        """The no-memory baseline's collection games (read once): what the screening learns each
        candidate's memory from (``LOGGED_COLLECTIONS``); empty when the baseline left no log, and the
        probe walks instead."""
        if self._logged is None:
            base = [e for e in self.rec.archive if e.origin == "baseline" and e.name == NO_MEMORY_NAME]
            self._logged = self.collection_of(base[0]) if base else {}
        return self._logged

    def probe_kind(self) -> str:
        """Which collections the screening learns from (``probe_collections``), as recorded."""
        return "logged" if self.logged_collection() else "walks"

    async def probe_of(self, entry: ArchiveEntry) -> float:
        """``entry``'s advice probe with memory from its *own* collection games, as the task agent played
        them with it (``own``; the screening's collections for an entry without logs): measured once and
        kept in its metadata, again when it was measured otherwise (a run resumed after a change)."""
        if entry.metadata.get("probe_kind") == OWN_KIND and entry.metadata.get("probe_score") is not None:
            return float(entry.metadata["probe_score"])  # its own games do not change: no logs to read
        own = self.collection_of(entry)
        kind = OWN_KIND if own else self.probe_kind()
        if entry.metadata.get("probe_score") is None or entry.metadata.get("probe_kind") != kind:
            design = get_baseline(entry.name) if entry.origin == "host" else entry.design
            result = await (
                self._own_probe(design, own) if own else self._probe(design, self.logged_collection())
            )
            entry.metadata["probe_score"] = round(result["probe_score"], 4)
            entry.metadata["steered"] = round(result["steered"], 4)
            entry.metadata["probe_kind"] = kind
        return float(entry.metadata["probe_score"])

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
        self.rec.progress.design(f"{name} agent check", len(self.rec.collection_tasks) * len(picked))
        slots = asyncio.Semaphore(max(1, self.rec.config.concurrency))  # checks share the agent's slots

        async def check(i: int, c: Candidate) -> None:
            design = genome_design(c.genome, name=f"{name}-check{i}", id=child_id, origin="meta")
            async with slots:
                ev = await self.rec.executor.evaluate(design, self.rec.collection_tasks, [])
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

        await asyncio.gather(*(check(i, c) for i, c in enumerate(picked, start=1)))
        return picked

    async def child(
        self, generation: int, parents: list[ArchiveEntry], operator: str, rng: Random
    ) -> tuple[ArchiveEntry, str]:
        """A genome generation: candidates by ``operator``, screened by the advice probe (no LLM), the
        best few checked with the task agent's own collection; the best of those is played by the task
        agent when its probe beats the best played design's (``probe_bar``)."""
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
        elites = sorted(
            (
                e
                for e in archive
                if e.metadata.get("steered") is not None
                and e.metadata.get("probe_kind", "walks") == self.probe_kind()  # comparable scores only
                and e.metadata.get("agent_probe") is None  # not one the agent's own collection refuted
                and entry_genome(e) is not None
            ),
            key=lambda e: -float(e.metadata["steered"]),
        )[:2]
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
        anchors = checked_anchors(archive) if probing and cfg.agent_checks else []
        every = len(rec.deployment_tasks[: cfg.probe_tasks]) * len(probe_collections(logged))  # all solved

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
            anchors=anchors,
        )
        checked = (
            await self.agent_check(screened, child_id, name, anchors) if probing and cfg.agent_checks else []
        )
        ok = [c for c in (checked or screened) if not c.error]
        best: Candidate | None = max(ok, key=_checked_rank if checked else _rank, default=None)
        meta: dict[str, Any] = {
            "operator": operator,
            "representation": self.representation,
            "candidates": [
                {
                    "key": c.genome.key,
                    "probe_score": round(c.probe_score, 4),
                    "steered": round(c.steered, 4),
                    "solved": c.solved,
                    "error": c.error,
                    **({} if c.agent_probe is None else {"agent_probe": round(c.agent_probe, 4)}),
                }
                for c in screened
            ],
            "checked": [
                {
                    "genome": c.genome.model_dump(),
                    "agent_probe": round(c.agent_probe, 4),
                    "agent_steered": round(c.agent_steered, 4),
                    "agent_solved": c.agent_solved,
                    "screen_score": round(c.probe_score, 4),
                    **({"anchor": c.anchor} if c.anchor else {}),
                }
                for c in checked
                if c.agent_probe is not None
            ],
            "operator_notes": notes,
            "probe_bar": bar,
            "probe_kind": self.probe_kind(),
        }
        for note in notes:
            rec.emit("operator.fallback", generation=generation, note=note)
        if best is None or not good_enough(best):
            return self._screened_out(generation, parents, child_id, name, best, bar, len(screened), meta)
        design = genome_design(
            best.genome, name=name, id=child_id, parent_ids=[p.id for p in parents], origin="meta"
        )
        meta.update(
            genome=best.genome.model_dump(),
            screen_score=round(best.probe_score, 4),
        )
        if best.agent_probe is not None:  # checked: what ``probe_of`` measures for a played design
            meta.update(
                probe_score=round(best.agent_probe, 4),
                steered=round(best.agent_steered, 4),
                probe_solved=best.agent_solved,
                probe_kind=OWN_KIND,
            )
        else:
            meta.update(probe_score=round(best.probe_score, 4), probe_solved=best.solved)
        _, entry = await rec.play(design, generation=generation, staged=True, metadata=meta)
        entry.metadata["beat_parent"] = beats(entry, parents[0])
        entry.metadata["operator_stats"] = stats_table(operator_stats([*archive, entry], self.operators))
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
        meta: dict[str, Any],
    ) -> tuple[ArchiveEntry, str]:
        """The ``invalid`` entry of a generation whose best candidate did not pass the screening."""
        if best is None or best.probe_score <= 0:
            why = (
                "no candidate's advice steered the probe to a solved task or a partial score: the screening "
                "found no memory that moves the advice probe here"
            )
        elif best.agent_probe is None:
            why = f"best probe {best.probe_score:.3f} does not beat {bar:.3f}, the probe of the best played design"
        else:
            why = (
                f"with the task agent's own collection the best candidate probes {best.agent_probe:.3f} "
                f"(screening {best.probe_score:.3f}), not above {bar:.3f}, the probe of the best played design"
            )
        if best is not None:
            meta["genome"] = best.genome.model_dump()
            meta["probe_score"] = round(best.probe_score, 4)
            meta["steered"] = round(best.steered, 4)
            if best.agent_probe is not None:
                meta["agent_probe"] = round(best.agent_probe, 4)
        meta["beat_parent"] = False
        entry = ArchiveEntry(
            id=child_id,
            name=name,
            origin="meta",
            generation=generation,
            parent_ids=[p.id for p in parents],
            status="invalid",
            errors=[f"screened out by the advice probe: {why} ({screened} candidates)"],
            metadata=meta,
        )
        source = genome_design(best.genome).source if best is not None else "# no candidate\n"
        return entry, source


__all__ = [
    "ANCHORS",
    "OWN_KIND",
    "GenomeStep",
    "actions_by_task",
    "checked_anchors",
    "checked_likeness",
    "probe_bar",
    "to_check",
]
