"""Evaluate → record, written once: play a design with the harness (staged against the best so far
when asked), turn the evaluation into its archive entry (scores, the paired difference with no
memory, runtime logs under ``logs/<id>``), and keep it (usage, archive, atomic save, event)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from atlas.alma.author.debug_log import DesignLogs, render_design
from atlas.alma.author.prompts import fmt
from atlas.alma.design import Design
from atlas.alma.evaluate.executor import Executor
from atlas.alma.evaluate.harness import Evaluation
from atlas.alma.search.baseline_stages import FirstBatch, baseline_entry, complete_baseline
from atlas.alma.search.budget import OUT_OF_TIME
from atlas.alma.search.progress import SearchProgress, showing
from atlas.alma.search.usage import UsageMeter
from atlas.alma.state.archive import Archive, ArchiveEntry
from atlas.alma.state.config import AlmaConfig
from atlas.alma.state.run_dir import RunDir
from atlas.alma.state.search_record import SearchRecord
from atlas.alma.state.staging import Verdict, can_still_beat
from atlas.core.types import Task

Emit = Callable[..., None]
Check = Callable[[list[Any]], Verdict]  # after a batch of deployment episodes: go on or stop, and why


def either(first: Check | None, then: Check | None) -> Check | None:
    """A staged check that stops where ``first`` stops, else where ``then`` does (None: neither given)."""
    if first is None or then is None:
        return first or then

    def check(recs: list[Any]) -> Verdict:
        verdict = first(recs)
        if not verdict.go_on:
            return verdict
        later = then(recs)
        return verdict if later.go_on else later

    return check


def beats(child: ArchiveEntry, parent: ArchiveEntry) -> bool:
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


class Recorder:
    """Plays designs on a search's tasks and records them in its archive."""

    def __init__(
        self,
        *,
        config: AlmaConfig,
        archive: Archive,
        run_dir: RunDir,
        executor: Executor,
        collection_tasks: list[Task],
        deployment_tasks: list[Task],
        progress: SearchProgress,
        meter: UsageMeter,
        emit: Emit,
    ) -> None:
        self.config = config
        self.archive = archive
        self.run_dir = run_dir
        self.executor = executor
        self.collection_tasks = collection_tasks
        self.deployment_tasks = deployment_tasks
        self.progress = progress
        self.meter = meter
        self.emit = emit
        self.seeds_skipped: set[str] = set()  # hand-built designs the cap left out, said once a process
        self.first_batch: FirstBatch | None = None  # the no-memory baseline while it has played only that

    # ---- evaluate ------------------------------------------------------------------------------
    async def evaluate(
        self, design: Design, *, staged: bool = False, within: Check | None = None
    ) -> Evaluation:
        """Collection and deployment; ``staged`` (new designs): deployment stops once the design
        can no longer beat the best so far (see ``atlas.alma.state.staging``). A design that played
        every task is compared with no memory on every task: the baseline plays its later tasks
        first, if it has not (see ``baseline_stages``)."""
        go_on = either(self.stage_check() if staged else None, within)
        with showing(self.progress, design.name, len(self.collection_tasks) + len(self.deployment_tasks)):
            ev = await self.executor.evaluate(
                design,
                self.collection_tasks,
                self.deployment_tasks,
                stage_tasks=self.config.stage_tasks,
                go_on=go_on,
            )
        if ev.status == "ok" and ev.stage == "full":
            await complete_baseline(self)
        return ev

    async def no_memory(self) -> ArchiveEntry:
        """The no-memory baseline's entry, played on every deployment task."""
        await complete_baseline(self)
        return baseline_entry(self)

    def stage_check(self) -> Check | None:
        """The staged-evaluation rule against the best fully evaluated design (None: play everything)."""
        best = self.archive.best()
        if self.config.stage_tasks <= 0 or best is None:
            return None
        best_scores = {t.task_id: t.score for t in best.per_task if t.phase == "deployment"}
        total, rule = len(self.deployment_tasks), self.config.stage_rule
        return lambda recs: can_still_beat({r.task_id: r.score for r in recs}, best_scores, total, rule=rule)

    async def play(
        self,
        design: Design,
        *,
        generation: int,
        staged: bool = False,
        within: Check | None = None,
        critique: str | None = None,
        metadata: dict[str, Any] | None = None,
        search: SearchRecord | None = None,
    ) -> tuple[Evaluation, ArchiveEntry]:
        """Evaluate ``design`` and make its entry (not yet kept in the archive); ``within``: a further
        check after each batch (the time a hand-built design may take)."""
        ev = await self.evaluate(design, staged=staged, within=within)
        entry = self.entry(
            ev, design=design, generation=generation, critique=critique, metadata=metadata, search=search
        )
        return ev, entry

    # ---- record --------------------------------------------------------------------------------
    def entry(
        self,
        ev: Evaluation,
        *,
        design: Design,
        generation: int,
        critique: str | None = None,
        metadata: dict[str, Any] | None = None,
        search: SearchRecord | None = None,
    ) -> ArchiveEntry:
        """The archive entry of an evaluation (``search``: how the search made it); its runtime logs are
        written under ``logs/<id>``."""
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
            search=search,
        )
        entry.metadata.setdefault("eval_duration_s", ev.duration_s)
        if ev.retries:  # work units played again after a lost worker (--executor ray)
            entry.metadata["retries"] = list(ev.retries)
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
        self.write_logs(entry, ev)
        return entry

    def write_logs(self, entry: ArchiveEntry, ev: Evaluation) -> None:
        entry.logs_dir = self.write_evaluation_logs(entry.id, entry.model_dump(mode="json"), ev)

    def write_evaluation_logs(self, logs_id: str, entry: dict[str, Any], ev: Evaluation) -> str:
        """``ev``'s episodes, calls and DebugLog text under ``logs/<logs_id>/``; returns that folder."""
        episodes = [e.to_dict() for e in ev.episodes]
        calls = ev.calls()
        text = render_design(DesignLogs(entry=entry, episodes=episodes, calls=calls, stores=ev.stores))
        return self.run_dir.write_logs(
            logs_id,
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

    def keep(
        self,
        entry: ArchiveEntry,
        source: str,
        *,
        usage: dict[str, Any],
        announce: bool = True,
    ) -> None:
        """Add ``entry`` (with what it cost) to the archive and save it atomically; then tell the
        callbacks (``announce``)."""
        entry.usage = usage
        self.archive.add(entry, source)
        self.archive.save()
        if announce:
            self.announce(entry)

    def announce(self, entry: ArchiveEntry) -> None:
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

    def design_line(
        self, tag: str, e: ArchiveEntry, *, duration: float | None = None, usage: dict[str, Any] | None = None
    ) -> str:
        """One line about an evaluated design, for the progress display."""
        if e.status != "ok":
            detail = f"{e.status}: {(e.errors or ['?'])[-1].splitlines()[0][:90]}"
        else:
            detail = (
                f"collection {fmt(e.collection_score)}  deployment {fmt(e.deployment_score)}  "
                f"normalized {fmt(e.normalized_score, signed=True)}"
            )
            if e.stage == "minibatch":
                staged = e.metadata["staged"]
                why = OUT_OF_TIME if str(staged.get("reason", "")).startswith(OUT_OF_TIME) else "cannot win"
                detail += f"  stopped after {staged['played']}/{staged['of']} tasks ({why})"
        tail = f"  archive {len(self.archive)}"
        if duration is not None:
            tail += f"  {duration:.1f}s"
        if usage is not None:
            tail += f"  {usage.get('total_tokens', 0)} tok ${usage.get('cost_usd', 0.0):.4f}"
        return f"{tag:<9} {e.id} {e.name[:24]:<24} {detail}{tail}"


__all__ = ["Check", "Recorder", "beats", "either", "paired_vs_baseline"]
