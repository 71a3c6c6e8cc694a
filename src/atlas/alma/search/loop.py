"""The ALMA loop: baseline → seeds → iterations (sample parents → debug → generate → collect →
deploy → archive) → the run's result on held-out test tasks, with telemetry, progress and a run
folder that can be resumed.

Resume: each iteration's randomness is a pure function of (seed, generation) and the archive is saved
atomically after every design, so a run killed between iterations and resumed produces the same
archive as one that never stopped (given deterministic models); a kill mid-iteration loses only that
iteration, redone under the same id. A model that still fails after its client's retries is recorded
on the iteration's entry (``status="error"``) and the search goes on; after ``MAX_FAILED_ITERATIONS``
such iterations in a row it stops with ``SearchStopped`` (``atlas run --resume RUN_DIR`` continues).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from atlas.alma.baselines import make_host_design
from atlas.alma.design import Design
from atlas.alma.evaluate.executor import Executor
from atlas.alma.evaluate.harness import Harness, run_tasks
from atlas.alma.genome import representation as rep
from atlas.alma.genome.bandit import choose_operator, operator_stats
from atlas.alma.sandbox.pool import SandboxLimits, WorkerPool
from atlas.alma.search import budget
from atlas.alma.search import usage as run_usage
from atlas.alma.search.budget import MAX_FAILED_ITERATIONS, SpendCap, over_cost, too_many_failures
from atlas.alma.search.code_step import CodeStep
from atlas.alma.search.executors import make_executor, make_pool, paced
from atlas.alma.search.facts import check_resume_tasks, write_new_facts, write_resume_facts
from atlas.alma.search.genome_step import GenomeStep
from atlas.alma.search.held_out import measure_held_out, too_late
from atlas.alma.search.progress import SearchProgress, default_progress
from atlas.alma.search.record import Recorder
from atlas.alma.search.seeds import (
    NO_MEMORY_NAME,
    costly_seeds_due,
    default_cache_dir,
    play_baseline,
    play_seeds,
    seed_designs,
)
from atlas.alma.search.usage import UsageMeter, archive_usage, reusable_results, savings
from atlas.alma.state.archive import Archive, ArchiveEntry
from atlas.alma.state.config import AlmaConfig, task_digest
from atlas.alma.state.replay import use_replay_cache
from atlas.alma.state.run_dir import RunDir
from atlas.alma.state.sampling import sample_parents, seeded_rng
from atlas.errors import ArchiveError, BudgetReached, ConfigError, SearchStopped
from atlas.infra.llm import LLMClient
from atlas.protocols import LLM, Embedder, Environment, TaskPlayer
from atlas.protocols.env import HasSplits
from atlas.trace.writer import TraceWriter

Callback = Callable[[str, dict[str, Any]], Any]

DEFAULT_GENERATIONS = {"code": 5, "genome": 20, "both": 20}


class Search:
    """One ALMA search over a run folder. Build with collaborators, then ``await arun()``.

    ``llm`` plays the tasks (and backs designs' summarize/analyze tools); ``meta_llm`` writes
    designs; ``debug_llm`` (default ``meta_llm``) analyzes logs. ``callbacks`` receive every
    telemetry event ``(event, fields)``; an exception raised by one stops the run (``--resume``
    continues). ``progress`` shows the run (default: a line per design on standard error). Its steps
    live beside it: ``seeds``, ``code_step``, ``genome_step``, ``record``, ``usage``, ``held_out``.
    """

    def __init__(
        self,
        config: AlmaConfig,
        *,
        llm: LLM,
        meta_llm: LLM | None = None,
        debug_llm: LLMClient | None = None,
        run_dir: RunDir,
        env: Environment | None = None,
        embedder: Embedder | None = None,
        agent: TaskPlayer | None = None,
        trace: bool | str | Path = True,
        callbacks: list[Callback] | None = None,
        progress: SearchProgress | None = None,
        pool: WorkerPool | None = None,
        limits: SandboxLimits | None = None,
        baseline_cache: Path | bool | None = None,
        run_facts: dict[str, Any] | None = None,
        llm_factory: Callable[[], LLM] | None = None,
    ) -> None:
        self.config = config
        self.llm = llm
        self.llm_factory = llm_factory  # builds the task model on a cluster's workers (--executor ray)
        self.meta_llm = meta_llm or llm
        self.debug_llm: LLMClient = debug_llm or cast("LLMClient", self.meta_llm)  # needs astructured
        self.run_dir = run_dir
        self.env = env
        self.embedder = embedder
        self.agent = agent
        self.callbacks = list(callbacks or [])
        self.pool = pool
        self._owns_pool = pool is None
        self.limits = limits
        self.progress: SearchProgress = (
            default_progress(True) if config.quiet else progress or default_progress(False)
        )
        self.run_facts = dict(run_facts or {})
        self.trace_path: Path | None = run_dir.trace_path if trace is True else Path(trace) if trace else None
        self._trace: TraceWriter | None = None
        if baseline_cache is False:
            self.baseline_cache: Path | None = None
        elif baseline_cache is None or baseline_cache is True:
            # A model known by name only is cacheable; a client whose behaviour is in code is not.
            self.baseline_cache = default_cache_dir() if reusable_results(llm) else None
        else:
            self.baseline_cache = Path(baseline_cache)
        self.archive = Archive(run_dir.archive_path)
        self.meter = UsageMeter([self.llm, self.meta_llm, self.debug_llm])
        self.collection_tasks: list[Any] = []
        self.deployment_tasks: list[Any] = []
        self.harness: Harness | None = None
        self.executor: Executor | None = None
        self._recorder: Recorder | None = None
        self._genome_step: GenomeStep | None = None
        self._code_step: CodeStep | None = None

    def emit(self, event: str, **fields: Any) -> None:
        if self._trace is not None:
            self._trace.emit(event, **fields)
        for cb in self.callbacks:
            cb(event, dict(fields))

    @property
    def recorder(self) -> Recorder:
        assert self._recorder is not None, "the search is not set up (arun or evaluate_only first)"
        return self._recorder

    # ---- setup ---------------------------------------------------------------------------------
    def _setup(self, resume: bool, *, evaluation: bool = False) -> None:
        """Build the collaborators and the tasks; ``evaluation`` (``atlas eval``) deploys on the
        benchmark's test split where the environment has one (``HasSplits``)."""
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
        task_llm = paced(self.llm, cfg.max_rpm)  # episodes and design tools, behind --max-rpm
        if self.agent is None:
            from atlas.agent import TaskAgent

            self.agent = TaskAgent(task_llm, max_turns=cfg.max_turns, advice_weight=cfg.advice_weight)
        self.pool = self.pool or make_pool(self.limits, cfg.concurrency)  # one for the whole search
        replay = self.baseline_cache.parent / "replay" if cfg.replay_cache and self.baseline_cache else None
        if replay is not None:
            use_replay_cache(cast("LLMClient", self.llm), replay)
        self.collection_tasks, self.deployment_tasks = run_tasks(cfg, self.env)
        if evaluation and isinstance(self.env, HasSplits):
            self.deployment_tasks = self.env.split_tasks("test", len(self.deployment_tasks), cfg.seed)
        self.harness = Harness(
            self.env,
            self.agent,
            embedder=self.embedder,
            design_llm=task_llm,
            concurrency=cfg.concurrency,
            pool=self.pool,
            limits=self.limits,
            on_episode=self.progress.episode,
            host_executor=make_host_design,
        )
        self.executor = make_executor(
            cfg, self.harness, llm=self.llm, llm_factory=self.llm_factory, env=self.env, embedder=self.embedder,
            limits=self.limits, replay_dir=replay, on_retry=lambda r: self.emit("executor.retry", **r),
        )  # fmt: skip
        self.meter.add(self.executor)
        self.representation, self.representation_reason = rep.resolve_representation(
            cfg.representation, getattr(self.meta_llm, "model", None)
        )
        if cfg.iterations is None:
            self.config = cfg = cfg.model_copy(
                update={"iterations": DEFAULT_GENERATIONS[self.representation]}
            )
        self.operators = [
            op
            for op in rep.operators_for(self.representation, self.meta_llm is not None)
            if op in rep.GENOME_OPERATORS or op in cfg.meta_operators
        ]
        self.obs_keys = (
            None if self.representation == "code" or evaluation else rep.genome_keys(self.env, cfg.seed)
        )
        if resume:
            self.run_dir.remove_stale_tmp()
            check_resume_tasks(self.run_dir, self.tasks)
            if self.run_dir.archive_path.exists():
                self.archive = Archive.load(self.run_dir.archive_path).hydrate()
            elif not self.run_dir.never_saved():
                bak = self.run_dir.archive_path.with_name("archive.json.bak")
                raise ArchiveError(
                    f"{self.run_dir.archive_path} is missing but {self.run_dir.designs_dir} holds designs: "
                    + (f"copy {bak} to archive.json to recover" if bak.exists() else "restore archive.json")
                    + " (resuming without it would start over and overwrite them)"
                )
            write_resume_facts(self.run_dir, cfg)
        else:
            write_new_facts(
                self.run_dir,
                cfg,
                **self.run_facts,
                task_model=getattr(self.llm, "model", None),
                meta_model_resolved=getattr(self.meta_llm, "model", None),
                embedder=getattr(self.embedder, "name", None),
                representation_resolved=self.representation,
                evaluation_key=self._evaluation_key(),
                collection_tasks=[t.id for t in self.collection_tasks],
                deployment_tasks=[t.id for t in self.deployment_tasks],
                task_digest=task_digest(self.tasks),
            )
            self.archive.save()  # an empty archive first: a kill at any later point leaves one to resume
        if self.trace_path is not None:
            self._trace = TraceWriter(self.trace_path)
        self._make_steps()

    def _make_steps(self) -> None:
        """The collaborators that play and record designs, once the archive and the tasks are known."""
        assert self.executor is not None and self.pool is not None
        assert self.env is not None and self.embedder is not None
        self._recorder = rec = Recorder(
            config=self.config,
            archive=self.archive,
            run_dir=self.run_dir,
            executor=self.executor,
            collection_tasks=self.collection_tasks,
            deployment_tasks=self.deployment_tasks,
            progress=self.progress,
            meter=self.meter,
            emit=self.emit,
        )
        if self.obs_keys is not None:
            self._genome_step = GenomeStep(
                rec,
                env=self.env,
                embedder=self.embedder,
                pool=self.pool,
                meta_llm=self.meta_llm,
                obs_keys=self.obs_keys,
                representation=self.representation,
                operators=self.operators,
            )
        self._code_step = CodeStep(
            rec,
            env=self.env,
            embedder=self.embedder,
            pool=self.pool,
            meta_llm=self.meta_llm,
            debug_llm=self.debug_llm,
        )

    # ---- generation 0 --------------------------------------------------------------------------
    def _cache_file(self) -> Path | None:
        return None if self.baseline_cache is None else self.baseline_cache / f"{self._evaluation_key()}.json"

    @property
    def tasks(self) -> list[Any]:
        """The run's collection then deployment tasks."""
        return [*self.collection_tasks, *self.deployment_tasks]

    def _evaluation_key(self) -> str:
        return self.config.evaluation_key(getattr(self.llm, "model", ""), self.tasks)

    async def _baseline(self) -> None:
        await play_baseline(self.recorder, cache=self._cache_file(), key=self._evaluation_key())

    async def _seeds(self, *, skip_costly: bool = False) -> None:
        assert self.env is not None, "the search is not set up (arun or evaluate_only first)"
        await play_seeds(self.recorder, seed_designs(self.env, self.config), skip_costly=skip_costly)

    # ---- one iteration -------------------------------------------------------------------------
    async def iteration(self, generation: int) -> ArchiveEntry:
        cfg = self.config
        t0 = time.perf_counter()
        before = self.meter.now()
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
            operator = choose_operator(operator_stats((e.search for e in self.archive), self.operators))
        if operator in rep.GENOME_OPERATORS:
            assert self._genome_step is not None
            entry, source = await self._genome_step.child(generation, parents, operator, rng)
            skipped = True
        else:
            assert self._code_step is not None
            entry, source, skipped = await self._code_step.child(generation, parents, operator)
        return self._record_iteration(
            generation, entry, source, parent_ids, t0, before, critique_skipped=skipped
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
        usage, duration = self.meter.since(before), round(time.perf_counter() - t0, 3)
        record = {
            "generation": generation,
            "parent_ids": parent_ids,
            "child_id": entry.id,
            "duration_s": duration,
            "usage": usage,
            "status": entry.status,
            "critique_skipped": critique_skipped,
            "operator": entry.search.operator if entry.search else None,
        }
        if entry.status == "error":
            record["error"] = (entry.errors or ["unknown error"])[-1]
        self.archive.iterations.append(record)
        self.recorder.keep(entry, source, usage=usage)
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
            operator=entry.search.operator if entry.search else None,
        )
        self.progress.iteration_done()
        self.progress.line(
            self.recorder.design_line(f"gen {generation}", entry, duration=duration, usage=usage)
        )
        return entry

    # ---- the run -------------------------------------------------------------------------------
    async def arun(self, *, resume: bool = False) -> Archive:
        self._setup(resume)
        cfg = self.config  # as _setup resolved it (the default number of generations)
        cap = SpendCap(cfg.max_cost_usd, self.meter, self.archive, self.run_dir.path, self.progress.episode)
        cast("Executor", self.executor).on_episode = cap  # the cost cap is checked after every episode too
        start = self.meter.now()
        done = {int(it["generation"]) for it in self.archive.iterations}
        done |= {e.generation for e in self.archive if e.origin == "meta"}  # one without its record too
        self.emit(
            "run.resume" if resume else "run.start",
            **{k: getattr(cfg, k) for k in ("env", "iterations", "episodes", "seed")},
            run_dir=str(self.run_dir.path),
            model=getattr(self.llm, "model", None),
            meta_model=getattr(self.meta_llm, "model", None),
            completed_generations=sorted(done),
            representation=self.representation,
            operators=self.operators,
            executor=self.executor.describe() if self.executor else None,
            cache=run_usage.cache_places(self.baseline_cache, self.llm),
        )
        self.progress.line(f"representation: {self.representation} ({self.representation_reason})")
        self.progress.start(generations := cfg.iterations or 0)  # resolved by _setup
        t0 = time.perf_counter()
        self.archive.clock.start(keep=self.run_dir.clock_path)
        try:
            await self._baseline()
            deferred = self.representation != "code"  # see play_seeds(skip_costly=...)
            await self._seeds(skip_costly=deferred)
            failed: list[str] = []
            for g in range(1, generations + 1):
                if g in done:
                    self.progress.iteration_done()
                    continue
                await self._stop_on_budget(g, seeds_waiting=deferred)
                if deferred and costly_seeds_due(self.archive, g, generations, cfg.max_minutes):
                    await self._seeds()
                    deferred = False
                entry = await self.iteration(g)
                error = f"generation {g} ({entry.id}): {(entry.errors or ['?'])[-1]}"
                failed = [*failed, error] if entry.status == "error" else []
                self._stop(too_many_failures(failed, self.run_dir.path), failed)
                if cfg.until_found and g < generations and (reason := budget.found(entry)):
                    self.emit("run.stopped", reason=reason, failed=[], archive_size=len(self.archive))
                    self.progress.line(reason)
                    break
            if deferred:
                await self._seeds()
            await self._held_out()
            best = self.archive.best()
            self.emit(
                "run.stop",
                duration_s=round(time.perf_counter() - t0, 3),
                run_time_s=round(self.archive.clock.run_time_s(), 3),
                archive_size=len(self.archive),
                best_id=best.id if best else None,
                best_name=best.name if best else None,
                best_normalized_score=best.normalized_score if best else None,
                usage=self.meter.since(start),
                total_usage=archive_usage(self.archive),
                **(saved := savings(self.archive, self.llm, self.executor)),
                cache=(caches := run_usage.cache_report(self.archive, self.llm, self.executor)),
            )
            self.progress.line(run_usage.savings_line(saved, caches))
        finally:
            self.progress.stop()
            self.close()
        return self.archive

    def _stop(self, reason: str | None, failed: list[str] | None = None) -> None:
        """Stop the search with ``reason`` (None: go on); the archive is already saved."""
        if reason is None:
            return
        self.emit("run.stopped", reason=reason, failed=list(failed or []), archive_size=len(self.archive))
        if failed:
            raise SearchStopped(reason)
        raise BudgetReached(reason)  # a budget stop is not a failure

    async def _held_out(self) -> None:
        await measure_held_out(self.recorder, cast("Environment", self.env), self.tasks)

    async def _stop_on_budget(self, generation: int, *, seeds_waiting: bool = False) -> None:
        """Stop at the cost cap, or when ``generation`` would end in the time the test phase keeps; the
        hand-built designs still ``seeds_waiting`` then play first, each while time is left for it."""
        cfg, where = self.config, self.run_dir.path
        self._stop(over_cost(generation, archive_usage(self.archive)["cost_usd"], cfg.max_cost_usd, where))
        if late := too_late(self.archive, cfg, generation, len(self.deployment_tasks), where):
            if seeds_waiting:
                await self._seeds()
            await self._held_out()  # the time cap keeps room for the run's result
        self._stop(late)

    async def evaluate_only(self, design: Design) -> ArchiveEntry:
        """Baseline (cached when possible) and one design, no search: what `atlas eval` runs."""
        self._setup(False, evaluation=True)
        self.progress.start(0)
        try:
            await self._baseline()
            if design.name == NO_MEMORY_NAME:  # the baseline itself: already evaluated, on every task
                return await self.recorder.no_memory()
            design = design.model_copy(update={"id": self.archive.next_id(), "parent_ids": []})
            before = self.meter.now()
            _, entry = await self.recorder.play(design, generation=0)
            self.recorder.keep(entry, design.source, usage=self.meter.since(before))
        finally:
            self.progress.stop()
            self.close()
        return entry

    def close(self) -> None:
        """Stop the sandbox workers and the executor this search started; close the trace (idempotent)."""
        if self.executor is not None:
            executor, self.executor = self.executor, None
            executor.close()
        if self._owns_pool and self.pool is not None:
            self.pool.close()
            self.pool = None
        if self._trace is not None:
            self._trace.close()
            self._trace = None
        self.archive.clock.stop()


__all__ = [
    "DEFAULT_GENERATIONS",
    "MAX_FAILED_ITERATIONS",
    "NO_MEMORY_NAME",
    "Callback",
    "Search",
    "SearchStopped",
]
