"""One genome generation of the search: candidates made by an operator from the parents' genomes,
screened by the advice probe (no LLM), and the best one played by the task agent when its probe
beats every design played so far (see ``atlas.alma.genome.step`` for the screening itself)."""

from __future__ import annotations

from random import Random
from typing import Any

from atlas.alma.author.advice_probe import can_probe
from atlas.alma.author.analysis import parent_analysis
from atlas.alma.author.debug_log import DesignLogs
from atlas.alma.baselines import get_baseline
from atlas.alma.genome import ObsKeys
from atlas.alma.genome.bandit import operator_stats, stats_table
from atlas.alma.genome.compile import genome_design
from atlas.alma.genome.step import PROBE_COLLECTIONS, Candidate, entry_genome, evolve_candidates, probe
from atlas.alma.sandbox.pool import WorkerPool
from atlas.alma.search.record import Recorder, beats
from atlas.alma.state.archive import ArchiveEntry
from atlas.protocols.embed import Embedder
from atlas.protocols.env import Environment
from atlas.protocols.llm import LLM


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

    async def probe_of(self, entry: ArchiveEntry) -> float:
        """``entry``'s advice-probe score on this search's tasks, measured once and kept in its metadata."""
        if entry.metadata.get("probe_score") is None:
            design = get_baseline(entry.name) if entry.origin == "host" else entry.design
            result = await probe(
                design,
                self.env,
                self.rec.collection_tasks,
                self.rec.deployment_tasks[: self.rec.config.probe_tasks],
                embedder=self.embedder,
                pool=self.pool,
            )
            entry.metadata["probe_score"] = round(result["probe_score"], 4)
            entry.metadata["steered"] = round(result["steered"], 4)
        return float(entry.metadata["probe_score"])

    async def child(
        self, generation: int, parents: list[ArchiveEntry], operator: str, rng: Random
    ) -> tuple[ArchiveEntry, str]:
        """A genome generation: candidates by ``operator``, screened by the advice probe (no LLM); the
        best is played by the task agent when its probe does at least as well as its parent's."""
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
            (e for e in archive if e.metadata.get("steered") is not None and entry_genome(e) is not None),
            key=lambda e: -float(e.metadata["steered"]),
        )[:2]
        for e in elites:
            g = entry_genome(e)
            if g is not None and all(g.key != b[0].key for b in briefs):
                briefs.append((g, e.normalized_score, ""))
        seen = {g.key for g in (entry_genome(e) for e in archive) if g is not None}
        name = f"{operator}-{child_id}"
        # Cheap first: only a candidate whose probe beats every design the task agent has played (and
        # its parent) is worth episodes. The screening spends its whole budget and hands on the best
        # (the probe's walks are not the task agent, so it flatters: the first candidate past the bar
        # is often a marginal one), stopping early only for one that solves every probe task.
        bar = max([await self.probe_of(parents[0])] + [await self.probe_of(e) for e in archive.scored()])
        probing = can_probe(self.env)
        every = len(rec.deployment_tasks[: cfg.probe_tasks]) * len(PROBE_COLLECTIONS)  # solved in each

        def good_enough(c: Candidate) -> bool:
            return not c.error and (not probing or (c.solved > 0 and c.probe_score > bar))

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
        )
        ok = [c for c in screened if not c.error]
        best: Candidate | None = max(
            ok, key=lambda c: (c.probe_score, c.steered, -len(c.genome.retrieve)), default=None
        )
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
                }
                for c in screened
            ],
            "operator_notes": notes,
            "probe_bar": bar,
        }
        for note in notes:
            rec.emit("operator.fallback", generation=generation, note=note)
        if best is None or not good_enough(best):
            return self._screened_out(generation, parents, child_id, name, best, bar, len(screened), meta)
        design = genome_design(
            best.genome, name=name, id=child_id, parent_ids=[p.id for p in parents], origin="meta"
        )
        meta.update(
            genome=best.genome.model_dump(), probe_score=round(best.probe_score, 4), probe_solved=best.solved
        )
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
        why = (
            "no candidate's advice steered the probe to a solved task"
            if best is None or best.solved == 0
            else f"best probe {best.probe_score:.3f} does not beat {bar:.3f}, the best probe of a played design"
        )
        if best is not None:
            meta["genome"] = best.genome.model_dump()
            meta["probe_score"] = round(best.probe_score, 4)
            meta["steered"] = round(best.steered, 4)
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


__all__ = ["GenomeStep"]
