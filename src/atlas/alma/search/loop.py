"""The ALMA loop: baseline → seeds → iterations (sample parents → debug → generate → collect →
deploy → archive), with telemetry, progress and a run folder that can be resumed.

Determinism for resume: each iteration's randomness is a pure function of (seed, generation), the
archive (with ``times_sampled``) is saved atomically after every design, and the DebugAgent reads
the parents' logs from the run folder — so a run killed between iterations and resumed produces
the same archive as one that never stopped (given deterministic models). A run killed in the
middle of an iteration loses only that unfinished iteration: nothing of it is in archive.json, and
the resumed run redoes it under the same id.

Model failures: a model that still fails after its client's retries (timeout, rate limit, endpoint
down) is recorded on the iteration's entry (``status="error"``, the reason in ``errors``) and the
search goes on — a short outage costs one iteration, not the run. After ``MAX_FAILED_ITERATIONS``
such iterations in a row the search stops with ``SearchStopped``: the archive is saved, and
``atlas run --resume RUN_DIR`` continues with the next generation once the model is back.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from atlas.alma.author.advice_probe import can_probe
from atlas.alma.author.advice_use import departure_lines
from atlas.alma.author.analysis import parent_analysis
from atlas.alma.author.debug_agent import DebugAgent
from atlas.alma.author.debug_log import DebugLog, DesignLogs, render_design
from atlas.alma.author.meta_agent import MetaAgent
from atlas.alma.author.prompts import fmt
from atlas.alma.baselines import get_baseline, list_baselines
from atlas.alma.design import Design
from atlas.alma.evaluate.harness import Evaluation, Harness, add_usage, make_tasks
from atlas.alma.genome import BASELINE_GENOMES, baseline_genome
from atlas.alma.genome.bandit import choose_operator, operator_stats, stats_table
from atlas.alma.genome.compile import genome_design
from atlas.alma.genome.operators import env_observation_keys
from atlas.alma.genome.step import (
    GENOME_OPERATORS,
    Candidate,
    entry_genome,
    evolve_candidates,
    operators_for,
    probe,
    resolve_representation,
)
from atlas.alma.state.archive import Archive, ArchiveEntry, empty_usage
from atlas.alma.state.config import AlmaConfig
from atlas.alma.state.replay import use_replay_cache
from atlas.alma.state.run_dir import RunDir, atomic_write_text
from atlas.alma.state.sampling import sample_parents, seeded_rng
from atlas.alma.state.staging import Verdict, can_still_beat
from atlas.envs.registry import DEFAULT_ENV, spec_of
from atlas.errors import ArchiveError, ConfigError, SearchStopped
from atlas.infra.fs import cache_dir
from atlas.trace.writer import TraceWriter

Callback = Callable[[str, dict[str, Any]], Any]

DEFAULT_GENERATIONS = {"code": 5, "genome": 20, "both": 20}
MAX_FAILED_ITERATIONS = 2  # iterations in a row whose models or sandbox failed before the search stops


NO_MEMORY_NAME = "no_memory"


def _usage_of(client: Any) -> dict[str, Any]:
    u = getattr(client, "usage", None)
    return u.to_dict() if u is not None and hasattr(u, "to_dict") else empty_usage()


def _delta(after: dict[str, Any], before: dict[str, Any]) -> dict[str, Any]:
    out = {
        k: after.get(k, 0) - before.get(k, 0)
        for k in ("prompt_tokens", "completion_tokens", "total_tokens", "calls")
    }
    out["cost_usd"] = round(float(after.get("cost_usd", 0.0)) - float(before.get("cost_usd", 0.0)), 6)
    return out


def default_cache_dir() -> Path:
    """Where no-memory baselines are cached across runs (replays sit beside it)."""
    return cache_dir("baselines")


class Progress:
    """Rich progress bars (iterations, episodes) and per-design lines; silent when quiet."""

    def __init__(self, quiet: bool, console: Any = None) -> None:
        self.quiet = quiet
        self._bar: Any = None
        self._it: Any = None
        self._ep: Any = None
        self.console = console
        if quiet:
            return
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
        from rich.progress import Progress as RichProgress

        self.console = console or Console(stderr=True)
        self._bar = RichProgress(
            TextColumn("{task.description:<28}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=self.console,
            transient=True,
        )

    def start(self, iterations: int) -> None:
        if self._bar is None:
            return
        self._bar.start()
        self._it = self._bar.add_task("iterations", total=max(iterations, 1))
        self._ep = self._bar.add_task("episodes", total=1)

    def design(self, name: str, episodes: int) -> None:
        if self._bar is not None:
            self._bar.update(self._ep, description=f"episodes · {name[:17]}", total=episodes, completed=0)

    def episode(self, _rec: Any = None) -> None:
        if self._bar is not None:
            self._bar.advance(self._ep)

    def iteration_done(self) -> None:
        if self._bar is not None:
            self._bar.advance(self._it)

    def line(self, text: str) -> None:
        if self.quiet or self.console is None:
            return
        self.console.print(text, highlight=False, markup=False, soft_wrap=True)

    def stop(self) -> None:
        if self._bar is not None:
            self._bar.stop()


class Search:
    """One ALMA search over a run folder. Build with collaborators, then ``await arun()``.

    ``llm`` plays the tasks (and backs designs' summarize/analyze tools); ``meta_llm`` writes
    designs; ``debug_llm`` (default ``meta_llm``) analyzes logs. ``callbacks`` receive every
    telemetry event ``(event, fields)``; an exception raised by one stops the run (the archive is
    already saved, so ``--resume`` continues from there).
    """

    def __init__(
        self,
        config: AlmaConfig,
        *,
        llm: Any,
        meta_llm: Any = None,
        debug_llm: Any = None,
        run_dir: RunDir,
        env: Any = None,
        embedder: Any = None,
        agent: Any = None,
        trace: bool | str | Path = True,
        callbacks: list[Callback] | None = None,
        console: Any = None,
        pool: Any = None,
        limits: Any = None,
        baseline_cache: Path | bool | None = None,
        run_facts: dict[str, Any] | None = None,
    ) -> None:
        self.config = config
        self.llm = llm
        self.meta_llm = meta_llm or llm
        self.debug_llm = debug_llm or self.meta_llm
        self.run_dir = run_dir
        self.env = env
        self.embedder = embedder
        self.agent = agent
        self.callbacks = list(callbacks or [])
        self.pool = pool
        self._owns_pool = pool is None
        self.limits = limits
        self.progress = Progress(config.quiet, console)
        self.run_facts = dict(run_facts or {})
        if trace is True:
            self.trace_path: Path | None = run_dir.trace_path
        elif trace:
            self.trace_path = Path(trace)
        else:
            self.trace_path = None
        self._trace: TraceWriter | None = None
        if baseline_cache is False:
            self.baseline_cache: Path | None = None
        elif baseline_cache is None or baseline_cache is True:
            # A model known by name only is cacheable; a client whose behaviour is in code is not.
            self.baseline_cache = default_cache_dir() if getattr(llm, "reusable_results", True) else None
        else:
            self.baseline_cache = Path(baseline_cache)
        self.archive = Archive(run_dir.archive_path)
        self.collection_tasks: list[Any] = []
        self.deployment_tasks: list[Any] = []
        self.harness: Harness | None = None

    # ---- telemetry -----------------------------------------------------------------------------
    def emit(self, event: str, **fields: Any) -> None:
        if self._trace is not None:
            self._trace.emit(event, **fields)
        for cb in self.callbacks:
            cb(event, dict(fields))

    def _clients(self) -> list[Any]:
        seen: dict[int, Any] = {}
        for c in (self.llm, self.meta_llm, self.debug_llm):
            if c is not None:
                seen.setdefault(id(c), c)
        return list(seen.values())

    def _usage_now(self) -> dict[str, Any]:
        total = empty_usage()
        for c in self._clients():
            add_usage(total, _usage_of(c))
        return total

    # ---- setup ---------------------------------------------------------------------------------
    def _setup(self, resume: bool) -> None:
        cfg = self.config
        if self.env is None:
            from atlas.envs.registry import get_env

            try:
                self.env = get_env(cfg.env, **cfg.env_kwargs())
            except (TypeError, ValueError) as exc:  # env_params from a (maybe edited) config.json
                raise ConfigError(
                    f"cannot build the environment {cfg.env!r} from the run's settings "
                    f"{cfg.env_kwargs()}: {exc}; fix env_params/rooms in config.json"
                ) from exc
        if self.embedder is None:
            from atlas.infra.embeddings import make_embedder

            self.embedder = make_embedder(cfg.embedder_name)
        if self.agent is None:
            from atlas.agent import TaskAgent

            self.agent = TaskAgent(self.llm, max_turns=cfg.max_turns)
        if self.pool is None:
            from atlas.alma.sandbox.pool import SandboxLimits, WorkerPool

            # One pool for the whole search. Recalls take milliseconds while episodes wait on the
            # LLM, so a few warm workers serve many concurrent episodes; spawning one per episode
            # would cost more than it saves on a small machine.
            workers = max(2, min(cfg.concurrency, os.cpu_count() or 2))
            self.pool = WorkerPool(self.limits or SandboxLimits(), max_workers=workers)
        if cfg.replay_cache and self.baseline_cache is not None:
            use_replay_cache(self.llm, self.baseline_cache.parent / "replay")
        self.collection_tasks, self.deployment_tasks = make_tasks(
            self.env,
            episodes=cfg.episodes,
            seed=cfg.collection_seed(),
            family=cfg.family_seed,
            deployment_seeds=cfg.deployment_seeds(),
        )
        self.harness = Harness(
            self.env,
            self.agent,
            embedder=self.embedder,
            design_llm=self.llm,
            concurrency=cfg.concurrency,
            pool=self.pool,
            limits=self.limits,
            on_episode=self.progress.episode,
        )
        self.representation, self.representation_reason = resolve_representation(
            cfg.representation, getattr(self.meta_llm, "model", None)
        )
        if cfg.iterations is None:
            self.config = cfg = cfg.model_copy(
                update={"iterations": DEFAULT_GENERATIONS[self.representation]}
            )
        self.operators = [
            op
            for op in operators_for(self.representation, self.meta_llm is not None)
            if op in GENOME_OPERATORS or op in cfg.meta_operators
        ]
        self.obs_keys = env_observation_keys(self.env, cfg.seed) if self.representation != "code" else None
        if resume:
            self.run_dir.remove_stale_tmp()
            if self.run_dir.archive_path.exists():
                self.archive = Archive.load(self.run_dir.archive_path).hydrate()
            elif not self.run_dir.never_saved():
                bak = self.run_dir.archive_path.with_name("archive.json.bak")
                raise ArchiveError(
                    f"{self.run_dir.archive_path} is missing but {self.run_dir.designs_dir} holds designs: "
                    + (f"copy {bak} to archive.json to recover" if bak.exists() else "restore archive.json")
                    + " (resuming without it would start over and overwrite them)"
                )
            facts = self.run_dir.read_config()
            facts["iterations"] = cfg.iterations
            resumed = facts.get("resumed_at")
            facts["resumed_at"] = [
                *(resumed if isinstance(resumed, list) else []),
                datetime.now(UTC).isoformat(),
            ]
            self.run_dir.write_config(facts)
        else:
            facts = {
                **cfg.model_dump(),
                **self.run_facts,
                "task_model": getattr(self.llm, "model", None),
                "meta_model_resolved": getattr(self.meta_llm, "model", None),
                "embedder": getattr(self.embedder, "name", None),
                "representation_resolved": self.representation,
                "evaluation_key": cfg.evaluation_key(getattr(self.llm, "model", "")),
                "collection_tasks": [t.id for t in self.collection_tasks],
                "deployment_tasks": [t.id for t in self.deployment_tasks],
                "created_at": datetime.now(UTC).isoformat(),
            }
            self.run_dir.write_config(facts)
            self.archive.save()  # an empty archive first: a kill at any later point leaves one to resume
        if self.trace_path is not None:
            self._trace = TraceWriter(self.trace_path)

    # ---- evaluation + bookkeeping --------------------------------------------------------------
    async def _evaluate(self, design: Any, *, staged: bool = False) -> Evaluation:
        """Collection and deployment; ``staged`` (new designs): deployment stops once the design
        can no longer beat the best so far (see ``atlas.alma.state.staging``)."""
        assert self.harness is not None
        self.progress.design(design.name, len(self.collection_tasks) + len(self.deployment_tasks))
        go_on = self._stage_check() if staged else None
        return await self.harness.evaluate(
            design,
            self.collection_tasks,
            self.deployment_tasks,
            stage_tasks=self.config.stage_tasks,
            go_on=go_on,
        )

    def _stage_check(self) -> Callable[[list[Any]], Verdict] | None:
        """The staged-evaluation rule against the best fully evaluated design (None: play everything)."""
        best = self.archive.best()
        if self.config.stage_tasks <= 0 or best is None:
            return None
        best_scores = {t.task_id: t.score for t in best.per_task if t.phase == "deployment"}
        total, rule = len(self.deployment_tasks), self.config.stage_rule
        return lambda recs: can_still_beat({r.task_id: r.score for r in recs}, best_scores, total, rule=rule)

    def _write_logs(self, entry: ArchiveEntry, ev: Evaluation) -> None:
        episodes = [e.to_dict() for e in ev.episodes]
        calls = ev.calls()
        text = render_design(
            DesignLogs(entry=entry.model_dump(mode="json"), episodes=episodes, calls=calls, stores=ev.stores)
        )
        entry.logs_dir = self.run_dir.write_logs(
            entry.id,
            calls=calls,
            episodes=episodes,
            debug_log=text,
            extra={
                "status": ev.status,
                "errors": ev.errors,
                "stores": ev.stores,
                "protections": ev.protections,
                "duration_s": ev.duration_s,
            },
        )

    def _entry(
        self,
        ev: Evaluation,
        *,
        design: Any,
        generation: int,
        critique: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> ArchiveEntry:
        baseline = (self.archive.baseline or {}).get("score")
        ok = ev.status == "ok"
        dep = ev.deployment_score if ok else None
        entry = ArchiveEntry(
            id=design.id,
            name=design.name,
            origin=design.origin,
            generation=generation,
            parent_ids=list(design.parent_ids),
            status=ev.status,
            errors=list(ev.errors),
            collection_score=ev.collection_score if ok else None,
            deployment_score=dep,
            normalized_score=(round(dep - baseline, 6) if dep is not None and baseline is not None else None),
            per_task=ev.per_task(),
            critique=critique,
            metadata=dict(metadata or {}),
        )
        entry.metadata.setdefault("eval_duration_s", ev.duration_s)
        if ev.stop_reason:
            entry.metadata["staged"] = {
                "played": len(ev.deployment),
                "of": ev.deployment_total,
                "saved": ev.episodes_saved,
                "reason": ev.stop_reason,
            }
        if ok and ev.stage == "minibatch":
            # Scored on the tasks it played only: comparable for parent sampling, claims nothing.
            entry.stage = "minibatch"
            partial = paired_vs_baseline(ev, self.archive.baseline)
            entry.normalized_score = partial["mean"] if partial else None
            entry.metadata["staged"]["vs_no_memory_partial"] = partial
        elif ok:
            entry.vs_no_memory = paired_vs_baseline(ev, self.archive.baseline)
        entry.learned = ev.learned  # saved beside the entry as memory/<id>.json
        self._write_logs(entry, ev)
        return entry

    def _announce(self, entry: ArchiveEntry) -> None:
        self.emit(
            "design.evaluated",
            id=entry.id,
            name=entry.name,
            origin=entry.origin,
            status=entry.status,
            generation=entry.generation,
            collection_score=entry.collection_score,
            deployment_score=entry.deployment_score,
            normalized_score=entry.normalized_score,
        )

    # ---- baseline and seeds --------------------------------------------------------------------
    def _cache_file(self) -> Path | None:
        if self.baseline_cache is None:
            return None
        return self.baseline_cache / f"{self.config.evaluation_key(getattr(self.llm, 'model', ''))}.json"

    async def _baseline(self) -> None:
        if self.archive.baseline is not None:
            return
        design = self._no_memory_design()
        t0 = time.perf_counter()
        before = self._usage_now()
        ev: Evaluation | None = None
        cache = self._cache_file()
        cached = False
        if cache is not None and cache.exists():
            try:
                ev = Evaluation.from_dict(json.loads(cache.read_text(encoding="utf-8")))
                ev.design_id, ev.name = design.id, design.name
                cached = True
            except (ValueError, KeyError, TypeError):
                ev = None  # unreadable cache entry: recompute (and overwrite it below)
        if ev is None:
            ev = await self._evaluate(design)
            if ev.status != "ok":
                raise ConfigError(f"the no-memory baseline could not run: {'; '.join(ev.errors)}")
            if cache is not None:
                atomic_write_text(cache, json.dumps(ev.to_dict(), default=str))
        self.archive.baseline = {
            "score": ev.deployment_score,
            "collection_score": ev.collection_score,
            "per_task": [
                {
                    "task_id": e.task_id,
                    "success": e.success,
                    "score": e.score,
                    "steps": e.steps,
                    "label": e.label,
                }
                for e in ev.deployment
            ],
            "cached": cached,
            "key": self.config.evaluation_key(getattr(self.llm, "model", "")),
        }
        entry = self._entry(ev, design=design, generation=0, metadata={"baseline_cached": cached})
        entry.normalized_score = 0.0
        entry.usage = _delta(self._usage_now(), before)
        self.archive.add(entry, design.source)
        self.archive.save()
        self.emit(
            "baseline.done",
            score=ev.deployment_score,
            collection_score=ev.collection_score,
            cached=cached,
            duration_s=round(time.perf_counter() - t0, 3),
        )
        self._announce(entry)
        self.progress.line(
            f"baseline  no_memory      deployment {fmt(ev.deployment_score)}  "
            f"collection {fmt(ev.collection_score)}{'  (cached)' if cached else ''}"
        )

    def _no_memory_design(self) -> Any:
        base = get_baseline(NO_MEMORY_NAME)
        return base.model_copy(update={"id": self.archive.next_id(), "parent_ids": [], "origin": "baseline"})

    def _seed_designs(self) -> list[Any]:
        """The environment's seed design (unless ``env_seed`` is off) and the library baselines (except
        no_memory), in order."""
        out: list[Any] = []
        seed_src = spec_of(self.env).seed_design(self.env) if self.config.env_seed else None
        if seed_src:
            out.append(Design(name=f"{self.env.name}_seed", source=seed_src, origin="seed"))
        wanted = self.config.baselines
        for name in list_baselines(env=self.env.name):
            if name == NO_MEMORY_NAME or (wanted is not None and name not in wanted):
                continue
            out.append(get_baseline(name))
        return out

    async def _seeds(self) -> None:
        """The environment's seed design plays every task; the hand-built baselines are staged against
        the best so far like any new design (a baseline that cannot win stops early, marked minibatch)."""
        for design in self._seed_designs():
            if any(e.generation == 0 and e.name == design.name for e in self.archive):
                continue  # already evaluated (resume)
            design = design.model_copy(update={"id": self.archive.next_id(), "parent_ids": []})
            before = self._usage_now()
            ev = await self._evaluate(design, staged=design.origin != "seed")
            genome = (
                {"genome": baseline_genome(design.name).model_dump()}
                if design.name in BASELINE_GENOMES
                else {}
            )
            entry = self._entry(ev, design=design, generation=0, metadata=genome)
            entry.usage = _delta(self._usage_now(), before)
            self.archive.add(entry, design.source)
            self.archive.save()
            self._announce(entry)
            self.progress.line(self._design_line("seed", entry))

    # ---- one iteration -------------------------------------------------------------------------
    def _brief(self, e: ArchiveEntry, with_source: bool) -> dict[str, Any]:
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

    def _advice_example(self) -> str | None:
        """The headroom's *learnable* advice for the first collection task (never the full oracle):
        the kind of advice that lets this agent succeed; None when the environment has no oracle."""
        if not self.collection_tasks:
            return None
        task = self.collection_tasks[0]
        try:
            advice = spec_of(self.env).oracle_advice(self.env, task, "learnable")
        except ConfigError:  # the environment has no oracle
            return None
        return f"Task: {self.env.format_goal(task)}\nAdvice:\n{advice}" if advice else None

    async def iteration(self, generation: int) -> ArchiveEntry:
        cfg = self.config
        t0 = time.perf_counter()
        before = self._usage_now()
        rng = seeded_rng(cfg.seed, generation)
        parents = sample_parents(
            self.archive.scored(), cfg.parents, rng, elite=self.archive.best(), exploit=cfg.exploit
        )
        if not parents:
            raise ArchiveError(
                f"no design in {self.run_dir.archive_path} has a score to sample parents from (every entry "
                "is invalid or failed, and the no-memory baseline is missing): start a new run, or restore a "
                "good archive.json (archive.json.bak) and resume"
            )
        for p in parents:
            p.times_sampled += 1
        parent_ids = [p.id for p in parents]
        self.emit("iteration.start", generation=generation, parent_ids=parent_ids)
        operator: str
        if self.representation == "code":  # the MetaAgent's operators in turn, as before genomes existed
            operator = cfg.meta_operators[(generation - 1) % len(cfg.meta_operators)]
        else:
            operator = choose_operator(operator_stats(self.archive, self.operators))
        if operator in GENOME_OPERATORS:
            entry, source = await self._genome_child(generation, parents, operator, rng)
            return self._record_iteration(
                generation, entry, source, parent_ids, t0, before, critique_skipped=True
            )

        logs = [
            DesignLogs.from_dir(self.run_dir.entry_logs(p.logs_dir, p.id), p.model_dump(mode="json"))
            for p in parents
        ]
        dlog = DebugLog.build(logs)
        debug = await DebugAgent(self.debug_llm, max_turns=cfg.debug_turns).analyze(
            dlog.text,
            [self._brief(p, False) for p in parents],
            informative=dlog.informative,
            advice_vs_actions=departure_lines([ep for lg in logs for ep in lg.episodes]),
        )
        critique = debug.text

        child_id = self.archive.next_id()
        briefs = [
            {**self._brief(p, True), "analysis": parent_analysis(lg.episodes)}
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
                baseline=(self.archive.baseline or {}).get("score"),
                design_id=child_id,
                mode="edit" if operator == "edit" else "write",
                example=self._advice_example(),
            )
            operator = "edit" if operator == "edit" else "write"
        meta_info = {
            "meta_turns": meta.turns,
            "meta_attempts": meta.attempts,
            "operator": operator,
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
            ev = await self._evaluate(design, staged=True)
            if meta.errors:
                meta_info["meta_errors"] = meta.errors
            entry = self._entry(
                ev, design=design, generation=generation, critique=critique, metadata=meta_info
            )
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
        entry.metadata["beat_parent"] = _beats(entry, parents[0])
        return self._record_iteration(
            generation, entry, source, parent_ids, t0, before, critique_skipped=debug.skipped
        )

    def _record_iteration(
        self,
        generation: int,
        entry: ArchiveEntry,
        source: str,
        parent_ids: list[str],
        t0: float,
        before: dict[str, Any],
        *,
        critique_skipped: bool,
    ) -> ArchiveEntry:
        usage = _delta(self._usage_now(), before)
        entry.usage = usage
        self.archive.add(entry, source)
        duration = round(time.perf_counter() - t0, 3)
        record = {
            "generation": generation,
            "parent_ids": parent_ids,
            "child_id": entry.id,
            "duration_s": duration,
            "usage": usage,
            "status": entry.status,
            "critique_skipped": critique_skipped,
            "operator": entry.metadata.get("operator"),
        }
        if entry.status == "error":
            record["error"] = (entry.errors or ["unknown error"])[-1]
        self.archive.iterations.append(record)
        self.archive.save()
        self._announce(entry)
        baseline = (self.archive.baseline or {}).get("score")
        self.emit(
            "iteration.stop",
            generation=generation,
            duration_s=duration,
            collection_score=entry.collection_score,
            deployment_score=entry.deployment_score,
            normalized_score=entry.normalized_score,
            baseline_score=baseline,
            design_name=entry.name,
            design_id=entry.id,
            status=entry.status,
            archive_size=len(self.archive),
            usage=usage,
            operator=entry.metadata.get("operator"),
        )
        self.progress.iteration_done()
        self.progress.line(self._design_line(f"gen {generation}", entry, duration=duration, usage=usage))
        return entry

    async def _probe_of(self, entry: ArchiveEntry) -> float:
        """``entry``'s advice-probe score on this search's tasks, measured once and kept in its metadata."""
        if entry.metadata.get("probe_score") is None:
            design = get_baseline(entry.name) if entry.origin == "host" else entry.design
            result = await probe(
                design,
                self.env,
                self.collection_tasks,
                self.deployment_tasks[: self.config.probe_tasks],
                embedder=self.embedder,
                pool=self.pool,
            )
            entry.metadata["probe_score"] = round(result["probe_score"], 4)
            entry.metadata["steered"] = round(result["steered"], 4)
        return float(entry.metadata["probe_score"])

    async def _genome_child(
        self, generation: int, parents: list[ArchiveEntry], operator: str, rng: Any
    ) -> tuple[ArchiveEntry, str]:
        """A genome generation: candidates by ``operator``, screened by the advice probe (no LLM); the
        best is played by the task agent when its probe does at least as well as its parent's."""
        cfg = self.config
        assert self.obs_keys is not None
        child_id = self.archive.next_id()
        with_genome = [(p, entry_genome(p)) for p in parents]
        briefs = []
        for p, g in with_genome:
            if g is not None:
                logs = DesignLogs.from_dir(
                    self.run_dir.entry_logs(p.logs_dir, p.id), p.model_dump(mode="json")
                )
                briefs.append((g, p.normalized_score, parent_analysis(logs.episodes)))
        # Probe elites: the genomes whose advice steered the probe furthest so far, even those screened out
        # before any episode (a (mu + lambda) search on the probe between task-agent evaluations).
        elites = sorted(
            (
                e
                for e in self.archive
                if e.metadata.get("steered") is not None and entry_genome(e) is not None
            ),
            key=lambda e: -float(e.metadata["steered"]),
        )[:2]
        for e in elites:
            g = entry_genome(e)
            if g is not None and all(g.key != b[0].key for b in briefs):
                briefs.append((g, e.normalized_score, ""))
        seen = {g.key for g in (entry_genome(e) for e in self.archive) if g is not None}
        name = f"{operator}-{child_id}"
        # Cheap first: only a candidate whose probe beats every design the task agent has played (and
        # its parent) is worth episodes; the screening goes on until one does or the budget is spent.
        bar = max(
            [await self._probe_of(parents[0])] + [await self._probe_of(e) for e in self.archive.scored()]
        )
        probing = can_probe(self.env)

        def good_enough(c: Candidate) -> bool:
            return not c.error and (not probing or (c.solved > 0 and c.probe_score > bar))

        screened, notes = await evolve_candidates(
            operator,
            briefs,
            self.obs_keys,
            rng,
            budget=cfg.genome_candidates,
            seen=seen,
            env=self.env,
            collection=self.collection_tasks,
            probe_tasks=self.deployment_tasks[: cfg.probe_tasks],
            embedder=self.embedder,
            pool=self.pool,
            meta_llm=self.meta_llm,
            name=name,
            good_enough=good_enough,
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
            self.emit("operator.fallback", generation=generation, note=note)
        if best is None or not good_enough(best):
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
                errors=[f"screened out by the advice probe: {why} ({len(screened)} candidates)"],
                metadata=meta,
            )
            source = genome_design(best.genome).source if best is not None else "# no candidate\n"
            return entry, source
        design = genome_design(
            best.genome, name=name, id=child_id, parent_ids=[p.id for p in parents], origin="meta"
        )
        meta.update(
            genome=best.genome.model_dump(), probe_score=round(best.probe_score, 4), probe_solved=best.solved
        )
        ev = await self._evaluate(design, staged=True)
        entry = self._entry(ev, design=design, generation=generation, metadata=meta)
        entry.metadata["beat_parent"] = _beats(entry, parents[0])
        entry.metadata["operator_stats"] = stats_table(operator_stats([*self.archive, entry], self.operators))
        return entry, design.source

    def _design_line(
        self, tag: str, e: ArchiveEntry, *, duration: float | None = None, usage: dict[str, Any] | None = None
    ) -> str:
        if e.status != "ok":
            detail = f"{e.status}: {(e.errors or ['?'])[-1].splitlines()[0][:90]}"
        else:
            detail = (
                f"collection {fmt(e.collection_score)}  deployment {fmt(e.deployment_score)}  "
                f"normalized {fmt(e.normalized_score, signed=True)}"
            )
            if e.stage == "minibatch":
                staged = e.metadata["staged"]
                detail += f"  stopped after {staged['played']}/{staged['of']} tasks (cannot win)"
        tail = f"  archive {len(self.archive)}"
        if duration is not None:
            tail += f"  {duration:.1f}s"
        if usage is not None:
            tail += f"  {usage.get('total_tokens', 0)} tok ${usage.get('cost_usd', 0.0):.4f}"
        return f"{tag:<9} {e.id} {e.name[:24]:<24} {detail}{tail}"

    # ---- the run -------------------------------------------------------------------------------
    async def arun(self, *, resume: bool = False) -> Archive:
        cfg = self.config
        self._setup(resume)
        start = self._usage_now()
        # Generations already in the archive (an evolved entry without its iteration record counts too,
        # so a hand-edited archive never gets a second design for one generation).
        done = {int(it["generation"]) for it in self.archive.iterations}
        done |= {e.generation for e in self.archive if e.origin == "meta"}
        self.emit(
            "run.resume" if resume else "run.start",
            env=cfg.env,
            iterations=cfg.iterations,
            episodes=cfg.episodes,
            seed=cfg.seed,
            run_dir=str(self.run_dir.path),
            model=getattr(self.llm, "model", None),
            meta_model=getattr(self.meta_llm, "model", None),
            completed_generations=sorted(done),
            representation=self.representation,
            operators=self.operators,
        )
        self.progress.line(f"representation: {self.representation} ({self.representation_reason})")
        generations = cfg.iterations or 0  # resolved by _setup
        self.progress.start(generations)
        t0 = time.perf_counter()
        try:
            await self._baseline()
            await self._seeds()
            failed: list[str] = []
            for g in range(1, generations + 1):
                if g in done:
                    self.progress.iteration_done()
                    continue
                self._check_cost(g)
                self._check_time(g, time.perf_counter() - t0)
                entry = await self.iteration(g)
                failed = (
                    [*failed, f"generation {g} ({entry.id}): {(entry.errors or ['?'])[-1]}"]
                    if entry.status == "error"
                    else []
                )
                if len(failed) >= MAX_FAILED_ITERATIONS:
                    self._stop(failed)
            best = self.archive.best()
            self.emit(
                "run.stop",
                duration_s=round(time.perf_counter() - t0, 3),
                archive_size=len(self.archive),
                best_id=best.id if best else None,
                best_name=best.name if best else None,
                best_normalized_score=best.normalized_score if best else None,
                usage=_delta(self._usage_now(), start),
                total_usage=self._total_usage(),
                **self._savings(),
            )
            saved = self._savings()
            self.progress.line(
                f"saved     {saved['episodes_saved']} deployment episodes by staged evaluation, "
                f"{saved['replayed_calls']} task-model calls replayed from the cache"
            )
        finally:
            self.progress.stop()
            self.close()
        return self.archive

    def _savings(self) -> dict[str, int]:
        """What the search did not pay for: episodes staged evaluation skipped, replayed model calls."""
        return {
            "episodes_saved": self.archive.episodes_saved(),
            "replayed_calls": int(getattr(self.llm, "cache_hits", 0) or 0),
        }

    def _check_cost(self, generation: int) -> None:
        """Stop before ``generation`` once the run (resumed parts included) has cost ``max_cost_usd``."""
        cap = self.config.max_cost_usd
        spent = self._total_usage()["cost_usd"]
        if cap is None or spent < cap:
            return
        reason = (
            f"stopped before generation {generation}: the run has cost ${spent:.4f}, reaching --max-cost "
            f"${cap:g}. The archive is saved in {self.run_dir.path}; to continue, raise the budget: "
            f"atlas run --resume {self.run_dir.path} --max-cost <dollars>"
        )
        self.emit("run.stopped", reason=reason, failed=[], archive_size=len(self.archive))
        raise SearchStopped(reason)

    def _check_time(self, generation: int, elapsed_s: float) -> None:
        """Stop before ``generation`` once this invocation has run ``max_minutes`` (a generation is not
        cut short: the search may overrun by one generation)."""
        cap = self.config.max_minutes
        if cap is None or elapsed_s < cap * 60:
            return
        reason = (
            f"stopped before generation {generation}: {elapsed_s / 60:.1f} minutes reached --max-minutes "
            f"{cap:g}. The archive is saved in {self.run_dir.path}; to continue: "
            f"atlas run --resume {self.run_dir.path} --max-minutes <minutes>"
        )
        self.emit("run.stopped", reason=reason, failed=[], archive_size=len(self.archive))
        raise SearchStopped(reason)

    def _stop(self, failed: list[str]) -> None:
        """Stop the search after iterations that could not run: the archive is already saved."""
        reason = (
            f"stopped after {len(failed)} iterations in a row could not run:\n  "
            + "\n  ".join(failed)
            + f"\nThe archive is saved in {self.run_dir.path}. Once the model (or sandbox) works again, "
            f"continue with: atlas run --resume {self.run_dir.path}"
        )
        self.emit("run.stopped", reason=reason, failed=failed, archive_size=len(self.archive))
        raise SearchStopped(reason)

    async def evaluate_only(self, design: Any) -> ArchiveEntry:
        """Baseline (cached when possible) and one design, no search: what `atlas eval` runs."""
        self._setup(False)
        self.progress.start(0)
        try:
            await self._baseline()
            if design.name == NO_MEMORY_NAME:  # the baseline itself: already evaluated
                return self.archive.get("d-0001")
            design = design.model_copy(update={"id": self.archive.next_id(), "parent_ids": []})
            before = self._usage_now()
            ev = await self._evaluate(design)
            entry = self._entry(ev, design=design, generation=0)
            entry.usage = _delta(self._usage_now(), before)
            self.archive.add(entry, design.source)
            self.archive.save()
            self._announce(entry)
        finally:
            self.progress.stop()
            self.close()
        return entry

    def close(self) -> None:
        """Stop the sandbox workers this search started and close the trace (idempotent)."""
        if self._owns_pool and self.pool is not None:
            self.pool.close()
            self.pool = None
        if self._trace is not None:
            self._trace.close()
            self._trace = None

    def _total_usage(self) -> dict[str, Any]:
        total = empty_usage()
        for e in self.archive:
            add_usage(total, e.usage)
        return total


def _beats(child: ArchiveEntry, parent: ArchiveEntry) -> bool:
    """Whether ``child`` scored above ``parent`` over no memory (what the operator bandit rewards)."""
    if child.status != "ok" or child.normalized_score is None:
        return False
    return parent.normalized_score is None or child.normalized_score > parent.normalized_score


def paired_vs_baseline(ev: Evaluation, baseline: dict[str, Any] | None) -> dict[str, Any] | None:
    """The design's deployment scores minus no memory's on the same tasks, with a bootstrap 95% interval."""
    from atlas.alma.state.stats import paired_difference

    base = {t.get("task_id"): t.get("score") for t in (baseline or {}).get("per_task") or []}
    pairs = [
        (e.score, base[e.task_id]) for e in ev.deployment if isinstance(base.get(e.task_id), int | float)
    ]
    if not pairs:
        return None
    return paired_difference([a for a, _ in pairs], [b for _, b in pairs]).to_dict()


# ---- the public entry point -------------------------------------------------------------------

RUNTIME_FIELDS = (
    "quiet",
    "concurrency",
    "trace",
    "max_cost_usd",
    "max_minutes",
    "exploit",
)  # may change when a run is resumed


async def arun(
    *,
    llm: Any = None,
    meta_llm: Any = None,
    debug_llm: Any = None,
    env: Any = DEFAULT_ENV,
    iterations: int | None = None,
    run_dir: str | Path | None = None,
    resume: str | Path | None = None,
    trace: bool | str | Path = True,
    embedder: Any = None,
    agent: Any = None,
    callbacks: list[Callback] | None = None,
    console: Any = None,
    baseline_cache: Path | bool | None = None,
    runs_root: str | Path = "runs",
    pool: Any = None,
    limits: Any = None,
    run_facts: dict[str, Any] | None = None,
    **settings: Any,
) -> tuple[Archive, Path | None]:
    """Async twin of ``run``."""
    env_obj = None if isinstance(env, str) else env
    if trace is False:
        settings["trace"] = False
    if resume is not None:
        rd = RunDir.open(resume)
        config = AlmaConfig.load(rd.config_path)
        updates = {k: v for k, v in settings.items() if k in RUNTIME_FIELDS}
        if iterations is not None:
            updates["iterations"] = iterations
        config = AlmaConfig.build("--resume", **{**config.model_dump(), **updates})
    else:
        env_name = env if isinstance(env, str) else getattr(env, "name", "custom")
        config = AlmaConfig.build(
            env=env_name, **({"iterations": iterations} if iterations is not None else {}), **settings
        )
        rd = RunDir.create(run_dir, env=config.env, root=runs_root)
    if llm is None:
        from atlas.infra.llm import make_llm

        llm = make_llm(config.model)
    if meta_llm is None:
        if config.meta_model and config.meta_model != config.model:
            from atlas.alma.state.meta_model import META_N_CTX
            from atlas.infra.llm import make_llm

            meta_llm = make_llm(config.meta_model, n_ctx=META_N_CTX)
        else:
            meta_llm = llm
    if resume is not None:
        _check_same_task_model(rd, llm)
    search = Search(
        config,
        llm=llm,
        meta_llm=meta_llm,
        debug_llm=debug_llm,
        run_dir=rd,
        env=env_obj,
        embedder=embedder,
        agent=agent,
        trace=trace if config.trace else False,
        callbacks=callbacks,
        console=console,
        baseline_cache=baseline_cache,
        pool=pool,
        limits=limits,
        run_facts=run_facts,
    )
    archive = await search.arun(resume=resume is not None)
    return archive, search.trace_path


def _check_same_task_model(rd: RunDir, llm: Any) -> None:
    """Every score of a run, the baseline's included, comes from one task model; a resume with
    another would compare designs measured by different agents."""
    started = rd.read_config().get("task_model")
    now = getattr(llm, "model", None)
    if started and now and started != now:
        raise ConfigError(
            f"{rd.path} was started with the task model {started!r}; resuming with {now!r} would "
            "score new designs with another agent than the baseline and the archive. Resume with "
            f"the task model {started!r} (--model on the command line, or the same client from Python: "
            "atlas.alma.run(resume=..., llm=...)), or start a new run."
        )


def load_design(ref: str) -> Any:
    """A design from a file path or a library baseline name (``no_memory``, ...)."""
    path = Path(ref)
    if path.suffix == ".py" or path.exists():
        if not path.exists():
            raise ConfigError(f"no design file at {path}")
        return Design(name=path.stem, source=path.read_text(encoding="utf-8"), origin="seed")
    return get_baseline(ref)


async def aevaluate(
    design: Any,
    *,
    llm: Any,
    env: Any = DEFAULT_ENV,
    run_dir: str | Path | None = None,
    runs_root: str | Path = "runs",
    embedder: Any = None,
    agent: Any = None,
    console: Any = None,
    baseline_cache: Path | bool | None = None,
    trace: bool = True,
    **settings: Any,
) -> tuple[ArchiveEntry, Archive]:
    """Evaluate one design (and the no-memory baseline) with the search's harness; returns the
    design's archive entry and the small archive written to ``run_dir``."""
    env_obj = None if isinstance(env, str) else env
    env_name = env if isinstance(env, str) else getattr(env, "name", "custom")
    config = AlmaConfig.build(env=env_name, iterations=0, **settings)
    rd = RunDir.create(run_dir, env=f"eval-{config.env}", root=runs_root)
    search = Search(
        config,
        llm=llm,
        run_dir=rd,
        env=env_obj,
        embedder=embedder,
        agent=agent,
        trace=trace,
        console=console,
        baseline_cache=baseline_cache,
    )
    entry = await search.evaluate_only(design)
    return entry, search.archive


def run(**kwargs: Any) -> tuple[Archive, Path | None]:
    """Run an ALMA search and return ``(archive, trace_path)``.

    ``llm`` plays the tasks; ``meta_llm`` (default ``llm``) writes designs; ``env`` is a name
    ("graphworld" | "alfworld" | "textworld") or an Environment; ``iterations``, ``episodes``,
    ``rooms``, ``seed``, ``family``, ``use_family``, ``deploy_seeds``, ``concurrency``, ``quiet``, …
    are ``AlmaConfig`` fields. ``trace=True`` writes ``<run_dir>/trace.jsonl`` (a str: that path;
    False: none). ``resume=RUN_DIR`` continues a stopped run with its saved settings.
    """
    from atlas.infra.aio import run_sync

    return run_sync(arun(**kwargs))


__all__ = [
    "MAX_FAILED_ITERATIONS",
    "NO_MEMORY_NAME",
    "Callback",
    "Search",
    "SearchStopped",
    "aevaluate",
    "arun",
    "default_cache_dir",
    "load_design",
    "run",
]
