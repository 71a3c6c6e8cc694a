"""Rebuild what a design learned in a run made before learned memory was kept, and prove it.

The run folder records, per episode, every action the agent took and, per call, what ``recall``
returned. Environments are deterministic given the task, so replaying the recorded actions gives
back each collection episode exactly; running the design's ``update`` on them (in the sandbox, with
the run's embedder) rebuilds its memory. The rebuilt memory is kept only if it is *proved*: every
``recall`` of the replay — collection and deployment — returns what the run's log says it
returned, and every replayed episode ends with the recorded outcome. A design whose calls depended
on an LLM (``summarize``/``analyze``, host adapters that extract tips) cannot be proved this way
and is left without learned memory, with the reason in ``metadata['learned_memory']``.

The same replay feeds another design (``Replayer.advice_with``, ``atlas archive readvise``): what it
would have advised after the games the run played.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from atlas.alma.design import Design
from atlas.alma.state.archive import Archive, ArchiveEntry
from atlas.alma.state.run_dir import RunDir, atomic_write_text, read_jsonl
from atlas.core.types import Task, Trajectory
from atlas.errors import ArchiveError, AtlasError, DesignError
from atlas.protocols.embed import Embedder
from atlas.protocols.env import Environment

if TYPE_CHECKING:
    from atlas.alma.evaluate.runlog import CallLog
    from atlas.alma.sandbox.pool import WorkerPool


@dataclass
class Relearned:
    """The outcome for one design: ``ok`` with the number of recalls that matched, or the reason."""

    design_id: str
    name: str
    ok: bool
    reason: str = ""
    recalls_matched: int = 0
    views: dict[str, dict[str, Any]] = field(default_factory=dict)  # episode label -> task view


class _Mismatch(Exception):
    """The replay differs from the run's record."""


def parse_action(text: str, tool_names: set[str]) -> tuple[str, dict[str, Any]] | None:
    """``move_to(room="room_B")`` → ``("move_to", {"room": "room_B"})`` (the inverse of
    ``atlas.envs.base.action_text``); None when it is not a call of one of ``tool_names``."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return None
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.args):
        return None
    if node.func.id not in tool_names:
        return None
    args: dict[str, Any] = {}
    for kw in node.keywords:
        if kw.arg is None:
            return None
        try:
            args[kw.arg] = ast.literal_eval(kw.value)
        except ValueError:
            if isinstance(kw.value, ast.Name) and kw.value.id in ("true", "false", "null"):
                args[kw.arg] = json.loads(kw.value.id)  # JSON literals in action_text
            else:
                return None
    return node.func.id, args


def _recorded_recalls(calls: list[dict[str, Any]]) -> dict[str, str]:
    """What each episode's recall returned in the run ("" when it failed: what the agent saw)."""
    return {
        c.get("episode", ""): ((c.get("return_value") or "") if c.get("error") is None else "")
        for c in calls
        if c.get("phase") == "recall"
    }


class Replayer:
    """Replays a run's recorded episodes for each of its designs (one environment, one embedder)."""

    def __init__(
        self, run_dir: str | Path, *, embedder: Embedder | None = None, env: Environment | None = None
    ) -> None:
        from atlas.alma.evaluate.harness import run_tasks
        from atlas.alma.state.config import AlmaConfig

        self.run = RunDir.open(run_dir)
        config = AlmaConfig.load(self.run.config_path)
        facts = self.run.read_config()
        if env is None:
            from atlas.envs.registry import get_env

            env = get_env(config.env, **config.env_kwargs())
        self.env = env
        self.collection, self.deployment = run_tasks(config, env)
        for phase, tasks in (("collection", self.collection), ("deployment", self.deployment)):
            recorded = facts.get(f"{phase}_tasks")
            if recorded is not None and recorded != [t.id for t in tasks]:
                raise ArchiveError(
                    f"{self.run.path}: the {phase} tasks rebuilt from config.json are not the ones "
                    "the run recorded; this version cannot replay that run"
                )
        if embedder is None:
            from atlas.infra.embeddings import make_embedder

            embedder = make_embedder(config.embedder_name)
        if facts.get("embedder") and embedder.name != facts["embedder"]:
            raise ArchiveError(f"the run used the embedder {facts['embedder']!r}, not {embedder.name!r}")
        self.embedder = embedder
        self.tool_names = {t.name for t in env.tools()}

    def _trajectory(
        self, env: Environment, task: Task, first: dict[str, Any], ep: dict[str, Any]
    ) -> Trajectory:
        from atlas.envs.base import EpisodeRecorder
        from atlas.protocols.env import Action

        recorder = EpisodeRecorder(env, task, first)
        for a in ep.get("actions") or []:
            parsed = parse_action(str(a.get("action", "")), self.tool_names)
            if parsed is None:  # never reached the environment (unparseable reply, unknown tool)
                recorder.record(None, None, None, error=a.get("error"), raw=a.get("action"))
                continue
            result = env.step(Action(*parsed))
            if (result.error or None) != (a.get("error") or None):
                raise _Mismatch(
                    f"{ep['label']}: replaying {a['action']} gave error {result.error!r}, the run "
                    f"recorded {a.get('error')!r}"
                )
            recorder.record(*parsed, result)
        traj = recorder.finish()
        got = (bool(traj.success), round(float(traj.score), 6))
        if got != (bool(ep.get("success")), round(float(ep.get("score", 0.0)), 6)):
            raise _Mismatch(
                f"{ep['label']}: the replayed episode ends with success/score {got}, the run recorded "
                f"{(ep.get('success'), ep.get('score'))}"
            )
        return traj

    def replay(
        self, entry: ArchiveEntry, pool: WorkerPool | None = None
    ) -> tuple[Relearned, dict[str, Any] | None]:
        """Replay ``entry``'s run; returns the outcome and, when proved, the learned state."""
        from atlas.alma.baselines import make_host_design
        from atlas.alma.evaluate.runner import DesignRunner
        from atlas.envs.views import episode_view, task_view

        out = Relearned(entry.id, entry.name, ok=False)
        if entry.origin == "host":
            out.reason = "a host-side adapter keeps its own stores, which a snapshot does not hold"
            return out, None
        episodes_file = self.run.entry_log_file(entry.logs_dir, entry.id, "episodes.jsonl")
        episodes = {e.get("label"): e for e in read_jsonl(episodes_file)}
        calls = read_jsonl(self.run.entry_log_file(entry.logs_dir, entry.id, "calls.jsonl"))
        recalls = _recorded_recalls(calls)
        update_failed = {
            c.get("episode"): c.get("error") is not None for c in calls if c.get("phase") == "update"
        }
        plan = [(f"C{i}", t, True) for i, t in enumerate(self.collection, 1)]
        plan += [(f"D{i}", t, False) for i, t in enumerate(self.deployment, 1)]
        runner = None
        seen: list[CallLog] = []  # the replay's call logs
        try:
            runner = DesignRunner(
                entry.design, embedder=self.embedder, llm=None, pool=pool, host_executor=make_host_design
            )
            learned = None
            for label, task, learn in plan:
                ep = episodes.get(label)
                if ep is None or ep.get("task_id") != task.id or label not in recalls:
                    raise _Mismatch(f"{label}: the run's logs do not record this episode of task {task.id}")
                if not learn and learned is None:
                    learned = {**runner.snapshot(), "embedder": self.embedder.name}
                    runner.freeze()
                env = self.env.clone()
                first = env.reset(task)
                view = task_view(env, task, first)
                advice, log = runner.recall_sync(view, label=label)
                seen.append(log)
                if advice != recalls[label]:
                    why = f" ({log.error})" if log.error else ""
                    raise _Mismatch(
                        f"{label}: recall returned {advice[:80]!r}{why}, the run recorded "
                        f"{recalls[label][:80]!r}"
                    )
                out.recalls_matched += 1
                out.views[label] = view
                if learn:
                    log = runner.update_sync(
                        episode_view(env, self._trajectory(env, task, first, ep)), label=label
                    )
                    seen.append(log)
                    if (log.error is not None) != update_failed.get(label, False):
                        raise _Mismatch(
                            f"{label}: update {'failed: ' + log.error if log.error else 'succeeded'}, "
                            "unlike in the run"
                        )
            if learned is None:  # no deployment tasks
                learned = {**runner.snapshot(), "embedder": self.embedder.name}
            _check_stores(self.run.entry_log_file(entry.logs_dir, entry.id, "evaluation.json"), learned)
            out.ok = True
            return out, learned
        except _Mismatch as exc:
            out.reason = f"the replay differs from the run: {exc}"
            if any(t.name in ("summarize", "analyze") and t.error for log in seen for t in log.tool_calls):
                out.reason += (
                    " (the design calls summarize/analyze, which need the run's model; a replay has none)"
                )
        except AtlasError as exc:
            out.reason = f"cannot replay: {type(exc).__name__}: {exc}"
        finally:
            if runner is not None:
                runner.close()
        return out, None

    def advice_with(
        self, entry: ArchiveEntry, design: Design, *, tasks: int = 3, pool: WorkerPool | None = None
    ) -> list[tuple[Task, str]]:
        """What ``design`` advises on the run's first ``tasks`` deployment tasks once it has learned
        from the collection games ``entry`` played in the run, replayed exactly (the recorded actions;
        no model plays). Another design over the same games: a genome compiled with other parts, a
        mended design. ``ArchiveError`` if the logs do not hold those games or a replay differs,
        ``DesignError`` if the design's ``update`` fails on one."""
        from atlas.alma.baselines import make_host_design
        from atlas.alma.evaluate.runner import DesignRunner
        from atlas.envs.views import episode_view, task_view

        rows = read_jsonl(self.run.entry_log_file(entry.logs_dir, entry.id, "episodes.jsonl"))
        episodes = {e.get("label"): e for e in rows}
        runner = DesignRunner(
            design, embedder=self.embedder, llm=None, pool=pool, host_executor=make_host_design
        )
        try:
            for i, task in enumerate(self.collection, 1):
                ep = episodes.get(f"C{i}")
                if ep is None or ep.get("task_id") != task.id:
                    raise ArchiveError(
                        f"{entry.id}: the run's logs do not record collection game C{i} ({task.id})"
                    )
                env = self.env.clone()
                try:
                    traj = self._trajectory(env, task, env.reset(task), ep)
                except _Mismatch as exc:
                    raise ArchiveError(f"{entry.id}: the replay differs from the run: {exc}") from exc
                log = runner.update_sync(episode_view(env, traj), label=f"C{i}")
                if log.error is not None:
                    raise DesignError(f"{design.name}: update failed on collection game C{i}: {log.error}")
            runner.freeze()
            out = []
            for i, task in enumerate(self.deployment[:tasks], 1):
                env = self.env.clone()
                advice, log = runner.recall_sync(task_view(env, task, env.reset(task)), label=f"D{i}")
                out.append((task, advice if log.error is None else f"(recall failed: {log.error})"))
            return out
        finally:
            runner.close()


def _check_stores(path: Path, learned: dict[str, Any]) -> None:
    """The run's own summary of the stores after collection (``evaluation.json``) must match."""
    from atlas.alma.evaluate.harness import summarize_snapshot

    if not path.exists():
        return
    try:
        recorded = json.loads(path.read_text(encoding="utf-8")).get("stores")
    except (OSError, ValueError) as exc:
        raise _Mismatch(f"cannot read {path}: {exc}") from exc
    rebuilt = summarize_snapshot(learned)
    if isinstance(recorded, dict):
        recorded = {
            k: v for k, v in recorded.items() if k != "tool_usage"
        }  # what the calls cost, not the stores
    if recorded and recorded != rebuilt:
        raise _Mismatch(f"the rebuilt stores {rebuilt} differ from the run's summary {recorded}")


def relearn(
    run_dir: str | Path,
    *,
    design_ids: list[str] | None = None,
    embedder: Embedder | None = None,
    env: Environment | None = None,
) -> list[Relearned]:
    """Rebuild and prove the learned memory of every design of ``run_dir`` that ran and has none
    (or of ``design_ids``); saves the proved ones with the archive, adds the task views to their
    ``episodes.jsonl``, and records why the others could not be."""
    from atlas.alma.sandbox.pool import SandboxLimits, WorkerPool

    replayer = Replayer(run_dir, embedder=embedder, env=env)
    archive = Archive.load(replayer.run.archive_path).hydrate()
    results = []
    pool = WorkerPool(SandboxLimits(), max_workers=2)
    try:
        for entry in archive:
            if (
                (design_ids is not None and entry.id not in design_ids)
                or entry.status != "ok"
                or entry.learned
            ):
                continue
            result, learned = replayer.replay(entry, pool)
            results.append(result)
            if learned is not None:
                entry.learned = learned
                entry.metadata["learned_memory"] = (
                    f"rebuilt by replaying the run's recorded episodes; "
                    f"{result.recalls_matched} recalls matched the run"
                )
                _add_views(
                    replayer.run.entry_log_file(entry.logs_dir, entry.id, "episodes.jsonl"),
                    result.views,
                )
            else:
                entry.metadata["learned_memory"] = f"not rebuilt: {result.reason}"
    finally:
        pool.close()
    archive.save()
    return results


def _add_views(path: Path, views: dict[str, dict[str, Any]]) -> None:
    rows = read_jsonl(path)
    for r in rows:
        if r.get("label") in views and "task" not in r:
            r["task"] = views[r["label"]]
    atomic_write_text(path, "".join(json.dumps(r, default=str) + "\n" for r in rows))


__all__ = ["Relearned", "Replayer", "parse_action", "relearn"]
