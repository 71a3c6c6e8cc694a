"""One code generation of the search: the DebugAgent reads the parents' runtime logs, the MetaAgent
writes (or edits, or crosses over) a design module, and a module that passes its checks is played."""

from __future__ import annotations

from typing import Any

from atlas.alma.author.advice_use import departure_lines
from atlas.alma.author.analysis import parent_analysis
from atlas.alma.author.debug_agent import DebugAgent
from atlas.alma.author.debug_log import DebugLog, DesignLogs
from atlas.alma.author.meta_agent import MetaAgent
from atlas.alma.design import Design
from atlas.alma.sandbox.pool import WorkerPool
from atlas.alma.search.record import Recorder, beats
from atlas.alma.state.archive import ArchiveEntry
from atlas.alma.state.search_record import SearchRecord
from atlas.envs.registry import spec_of
from atlas.errors import ConfigError
from atlas.infra.llm.client import LLMClient
from atlas.protocols.embed import Embedder
from atlas.protocols.env import Environment
from atlas.protocols.llm import LLM


def brief(e: ArchiveEntry, with_source: bool) -> dict[str, Any]:
    """What the agents are shown of a parent (its source and outcomes with ``with_source``)."""
    d: dict[str, Any] = {
        "id": e.id,
        "name": e.name,
        "origin": e.origin,
        "collection_score": e.collection_score,
        "deployment_score": e.deployment_score,
        "normalized_score": e.normalized_score,
    }
    if with_source:
        d["source"] = e.source
        col = [t for t in e.per_task if t.phase == "collection"]
        dep = [t for t in e.per_task if t.phase == "deployment"]
        d["outcomes"] = (
            f"collection {sum(t.success for t in col)}/{len(col)} solved, "
            f"deployment {sum(t.success for t in dep)}/{len(dep)} solved, "
            f"mean deployment steps {sum(t.steps for t in dep) / max(1, len(dep)):.1f}"
        )
    return d


class CodeStep:
    """Makes the child of a code generation: critique, then a module by the MetaAgent, then its play."""

    def __init__(
        self,
        rec: Recorder,
        *,
        env: Environment,
        embedder: Embedder,
        pool: WorkerPool,
        meta_llm: LLM,
        debug_llm: LLMClient,
    ) -> None:
        self.rec = rec
        self.env = env
        self.embedder = embedder
        self.pool = pool
        self.meta_llm = meta_llm
        self.debug_llm = debug_llm

    def advice_example(self) -> str | None:
        """The headroom's *learnable* advice for the first collection task (never the full oracle):
        the kind of advice that lets this agent succeed; None when the environment has no oracle."""
        if not self.rec.collection_tasks:
            return None
        task = self.rec.collection_tasks[0]
        try:
            advice = spec_of(self.env).oracle_advice(self.env, task, "learnable")
        except ConfigError:  # the environment has no oracle
            return None
        return f"Task: {self.env.format_goal(task)}\nAdvice:\n{advice}" if advice else None

    async def child(
        self, generation: int, parents: list[ArchiveEntry], operator: str
    ) -> tuple[ArchiveEntry, str, bool]:
        """The generation's entry, its source, and whether the critique was skipped."""
        rec, cfg = self.rec, self.rec.config
        parent_ids = [p.id for p in parents]
        logs = [
            DesignLogs.from_dir(rec.run_dir.entry_logs(p.logs_dir, p.id), p.model_dump(mode="json"))
            for p in parents
        ]
        dlog = DebugLog.build(logs)
        debug = await DebugAgent(self.debug_llm, max_turns=cfg.debug_turns).analyze(
            dlog.text,
            [brief(p, False) for p in parents],
            informative=dlog.informative,
            advice_vs_actions=departure_lines([ep for lg in logs for ep in lg.episodes]),
        )
        critique = debug.text

        child_id = rec.archive.next_id()
        briefs = [
            {**brief(p, True), "analysis": parent_analysis(lg.episodes)}
            for p, lg in zip(parents, logs, strict=True)
        ]
        agent = MetaAgent(
            self.meta_llm,
            env=self.env,
            embedder=self.embedder,
            pool=self.pool,
            max_turns=cfg.meta_turns,
            smoke_episodes=cfg.smoke_episodes,
            probe_retry=cfg.probe_retry,
        )
        crossed = None
        if operator == "crossover" and len(briefs) >= 2:
            crossed = await agent.crossover(briefs, generation=generation, design_id=child_id)
        if crossed is not None and crossed.status == "ok":
            meta = crossed
        else:  # write (or edit); a crossover whose child fails the check falls back to writing
            meta = await agent.generate(
                briefs,
                critique,
                generation=generation,
                baseline=(rec.archive.baseline or {}).get("score"),
                design_id=child_id,
                mode="edit" if operator == "edit" else "write",
                example=self.advice_example(),
            )
            operator = "edit" if operator == "edit" else "write"
        meta_info: dict[str, Any] = {
            "meta_turns": meta.turns,
            "meta_attempts": meta.attempts,
            "debug": {
                "skipped": debug.skipped,
                "reason": debug.reason,
                "turns": debug.turns,
                "tool_calls": debug.tool_calls,
            },
        }
        if crossed is not None and crossed.status != "ok":
            meta_info["crossover_errors"] = crossed.errors
        if meta.status == "ok" and meta.source is not None:
            design = Design(
                id=child_id, name=meta.name, source=meta.source, parent_ids=parent_ids, origin="meta"
            )
            ev = await rec.evaluate(design, staged=True)
            if meta.errors:
                meta_info["meta_errors"] = meta.errors
            entry = rec.entry(ev, design=design, generation=generation, critique=critique, metadata=meta_info)
            source = meta.source
        else:
            entry = ArchiveEntry(
                id=child_id,
                name=meta.name,
                origin="meta",
                generation=generation,
                parent_ids=parent_ids,
                status="error" if meta.status == "error" else "invalid",
                errors=meta.errors,
                critique=critique,
                metadata=meta_info,
            )
            source = meta.source or "# The MetaAgent produced no code.\n"
        entry.search = SearchRecord(operator=operator, beat_parent=beats(entry, parents[0]))
        return entry, source, debug.skipped


__all__ = ["CodeStep", "brief"]
