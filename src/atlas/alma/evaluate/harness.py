"""The memory harness: evaluates one design on an environment.

Collection — tasks in order; for each, ``recall`` → ``TaskAgent.run(advice)`` → ``update``; the
memory grows. Deployment — unseen tasks (same family, different seeds) run concurrently against
one frozen memory; their mean score is the design's fitness, normalized by the no-memory baseline
on the same tasks. Every ``update``/``recall`` call's runtime log (a ``CallLog``) is kept per
episode, tagged with the episode label (C1… for collection, D1… for deployment).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from atlas.alma.state.archive import TaskResult, empty_usage
from atlas.alma.state.goal_completion import scenario_of
from atlas.alma.state.highest import highest_score
from atlas.alma.state.staging import Verdict, batches
from atlas.core.types import Task, Trajectory
from atlas.envs.views import episode_view, step_action, task_view
from atlas.errors import ConfigError, LLMError, SandboxError, ScriptExhaustedError
from atlas.protocols.agent import TaskPlayer
from atlas.protocols.embed import Embedder
from atlas.protocols.env import Environment, HasSplits
from atlas.protocols.llm import LLM

if TYPE_CHECKING:
    from atlas.alma.design import Design
    from atlas.alma.evaluate.runner import DesignRunner, HostExecutor
    from atlas.alma.sandbox.pool import SandboxLimits, WorkerPool
    from atlas.alma.state.config import AlmaConfig

MAX_ADVICE_CHARS = 4000  # advice kept per episode record (the agent saw all of it)


def add_usage(total: dict[str, Any], part: dict[str, Any] | None) -> dict[str, Any]:
    """Add a Usage.to_dict()-shaped dict into ``total`` (in place) and return it."""
    if part:
        for k in ("prompt_tokens", "completion_tokens", "total_tokens", "calls"):
            total[k] = int(total.get(k, 0)) + int(part.get(k, 0) or 0)
        total["cost_usd"] = round(
            float(total.get("cost_usd", 0.0)) + float(part.get("cost_usd", 0.0) or 0.0), 6
        )
    return total


@dataclass
class EpisodeRecord:
    """One episode as the harness saw it: outcome, the advice given, the agent's actions and the
    design's runtime logs (CallLog dicts) for this episode."""

    label: str
    phase: str  # "collection" | "deployment"
    task_id: str
    goal: str
    success: bool
    score: float
    steps: int
    advice: str = ""
    task: dict[str, Any] = field(default_factory=dict)  # the task view recall received
    # {"action": call form, "text": as the agent's action list writes it, "error": str | None}
    actions: list[dict[str, Any]] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)
    turns: int = 0
    invalid_actions: int = 0
    usage: dict[str, Any] = field(default_factory=empty_usage)
    duration_s: float = 0.0
    scenario: str | None = None  # from the task's metadata (never shown to the design)
    highest: float | None = None  # the highest score reached after any step (``highest_score``)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("calls")  # written to calls.jsonl
        return d

    def task_result(self) -> TaskResult:
        return TaskResult(
            task_id=self.task_id,
            phase=self.phase,
            success=self.success,
            score=self.score,
            steps=self.steps,
            label=self.label,
            scenario=self.scenario,
            highest=self.highest,
        )


@dataclass
class Evaluation:
    """Everything one design evaluation produced (scores, episodes, logs, store summary)."""

    design_id: str
    name: str
    status: str = "ok"  # "ok" | "error" (the sandbox itself failed)
    errors: list[str] = field(default_factory=list)
    collection: list[EpisodeRecord] = field(default_factory=list)
    deployment: list[EpisodeRecord] = field(default_factory=list)
    stores: dict[str, Any] = field(default_factory=dict)  # summary of the stores after collection
    learned: dict[str, Any] | None = None  # the stores themselves after collection (runner snapshot)
    protections: dict[str, Any] = field(default_factory=dict)
    duration_s: float = 0.0
    # Staged evaluation: "full" (every deployment task played) or "minibatch" (stopped early: see stop_reason).
    stage: str = "full"
    deployment_total: int = 0  # deployment tasks the design could have played
    stop_reason: str = ""
    # Work units an executor played again after losing a worker (Ray); each counted once in the results.
    retries: list[dict[str, Any]] = field(default_factory=list)

    @property
    def episodes_saved(self) -> int:
        """Deployment episodes not played because the design stopped early."""
        return max(0, self.deployment_total - len(self.deployment))

    @property
    def collection_score(self) -> float | None:
        return _mean([e.score for e in self.collection])

    @property
    def deployment_score(self) -> float | None:
        return _mean([e.score for e in self.deployment])

    @property
    def episodes(self) -> list[EpisodeRecord]:
        return [*self.collection, *self.deployment]

    def per_task(self) -> list[TaskResult]:
        return [e.task_result() for e in self.episodes]

    def calls(self) -> list[dict[str, Any]]:
        return [c for e in self.episodes for c in e.calls]

    def usage(self) -> dict[str, Any]:
        total = empty_usage()
        for e in self.episodes:
            add_usage(total, e.usage)
        return total

    def to_dict(self) -> dict[str, Any]:
        """JSON form (the baseline cache stores it); calls included."""
        return {
            "design_id": self.design_id,
            "name": self.name,
            "status": self.status,
            "errors": self.errors,
            "stores": self.stores,
            "learned": self.learned,
            "protections": self.protections,
            "duration_s": self.duration_s,
            "stage": self.stage,
            "deployment_total": self.deployment_total,
            "stop_reason": self.stop_reason,
            "retries": self.retries,
            "episodes": [{**e.to_dict(), "calls": e.calls} for e in self.episodes],
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Evaluation:
        ev = cls(
            design_id=d["design_id"],
            name=d["name"],
            status=d.get("status", "ok"),
            errors=list(d.get("errors", [])),
            stores=d.get("stores", {}),
            learned=d.get("learned"),
            protections=d.get("protections", {}),
            duration_s=float(d.get("duration_s", 0.0)),
            stage=d.get("stage", "full"),
            stop_reason=d.get("stop_reason", ""),
            retries=list(d.get("retries") or []),
        )
        for raw in d.get("episodes", []):
            rec = EpisodeRecord(**{k: v for k, v in raw.items() if k in EpisodeRecord.__dataclass_fields__})
            (ev.collection if rec.phase == "collection" else ev.deployment).append(rec)
        ev.deployment_total = int(d.get("deployment_total") or len(ev.deployment))
        return ev


def _mean(xs: list[float]) -> float | None:
    return round(sum(xs) / len(xs), 6) if xs else None


def _call_dict(log: Any, label: str) -> dict[str, Any]:
    d = log.to_dict() if hasattr(log, "to_dict") else dict(log)
    d["episode"] = label
    return d


def _actions(traj: Trajectory) -> list[dict[str, Any]]:
    return [{"action": s.action, "text": step_action(s)["text"], "error": s.error} for s in traj.steps]


def summarize_snapshot(snapshot: dict[str, Any]) -> dict[str, Any]:
    """A small, JSON-safe description of a design's stores from ``DesignRunner.snapshot()``:
    memory keys and size, vector items per collection, graph size (and a host adapter's keys)."""
    out: dict[str, Any] = {}
    memory = snapshot.get("memory")
    if isinstance(memory, dict):
        out["memory_keys"] = {str(k): _shape(v) for k, v in list(memory.items())[:30]}
        out["memory_bytes"] = len(json.dumps(memory, default=str))
    tools = snapshot.get("tools") or {}
    vectors = tools.get("vectors") or {}
    per = {str(name): len(v.get("ids") or []) for name, v in vectors.items() if isinstance(v, dict)}
    out["vector_items"] = sum(per.values())
    if per:
        out["collections"] = per
    graph = tools.get("graph") or {}
    out["graph_nodes"] = len(graph.get("nodes") or [])
    out["graph_edges"] = len(graph.get("edges") or [])
    host = snapshot.get("host")
    if isinstance(host, dict):
        out["host_state"] = {str(k): _shape(v) for k, v in list(host.items())[:20]}
    return out


def _shape(v: Any) -> str:
    if isinstance(v, dict):
        return f"dict[{len(v)}]"
    if isinstance(v, list):
        return f"list[{len(v)}]"
    if isinstance(v, str):
        return f"str[{len(v)}]"
    return type(v).__name__


class Harness:
    """Runs designs on an environment with a task agent.

    ``agent`` is a ``TaskAgent`` (any ``TaskPlayer``: ``async run(env, task, advice) -> Trajectory``);
    ``design_llm`` backs the designs' ``summarize``/``analyze`` tools; ``concurrency`` bounds the
    deployment episodes in flight. ``on_episode`` is called after every episode (progress bars).
    ``host_executor`` runs host-side designs (``atlas.alma.baselines.make_host_design``).
    """

    def __init__(
        self,
        env: Environment,
        agent: TaskPlayer,
        *,
        embedder: Embedder,
        design_llm: LLM | None,
        concurrency: int = 4,
        pool: WorkerPool | None = None,
        limits: SandboxLimits | None = None,
        on_episode: Callable[[EpisodeRecord], None] | None = None,
        host_executor: HostExecutor | None = None,
    ) -> None:
        self.env = env
        self.host_executor = host_executor
        self.agent = agent
        self.embedder = embedder
        self.design_llm = design_llm
        self.concurrency = max(1, int(concurrency))
        self.pool = pool
        self.limits = limits
        self.on_episode = on_episode

    # ---- one episode ---------------------------------------------------------------------------
    async def episode(
        self, runner: DesignRunner, task: Task, label: str, phase: str, *, learn: bool
    ) -> EpisodeRecord:
        """One episode: ``recall`` → the agent plays ``task`` with the advice → ``update`` (``learn``)."""
        return await self._episode(runner, task, label, phase, learn=learn)

    async def _episode(
        self, runner: DesignRunner, task: Task, label: str, phase: str, *, learn: bool
    ) -> EpisodeRecord:
        t0 = time.perf_counter()
        env = self.env.clone()
        first = await asyncio.to_thread(env.reset, task)
        view = task_view(env, task, first)
        advice, recall_log = await runner.recall(view, label=label)
        advice = advice or ""
        traj: Trajectory = await self.agent.run(env, task, advice=advice)
        calls = [_call_dict(recall_log, label)]
        if learn:
            update_log = await runner.update(episode_view(env, traj), label=label)
            calls.append(_call_dict(update_log, label))
        meta = traj.metadata
        rec = EpisodeRecord(
            label=label,
            phase=phase,
            task_id=task.id,
            goal=env.format_goal(task),
            success=bool(traj.success),
            score=round(float(traj.score), 6),
            steps=int(meta.get("steps_taken", len(traj.steps))),
            advice=advice[:MAX_ADVICE_CHARS],
            task=view,
            actions=_actions(traj),
            calls=calls,
            turns=int(meta.get("turns", 0) or 0),
            invalid_actions=int(meta.get("invalid_actions", 0) or 0),
            usage=add_usage(empty_usage(), meta.get("usage")),
            duration_s=round(time.perf_counter() - t0, 4),
            scenario=scenario_of(task.metadata),
            highest=highest_score(traj),
        )
        if self.on_episode is not None:
            self.on_episode(rec)
        return rec

    # ---- phases --------------------------------------------------------------------------------
    async def collect(self, runner: DesignRunner, tasks: list[Task]) -> list[EpisodeRecord]:
        """Sequential: each episode's ``update`` must land before the next ``recall``."""
        return [
            await self._episode(runner, t, f"C{i}", "collection", learn=True) for i, t in enumerate(tasks, 1)
        ]

    async def deploy(self, runner: DesignRunner, tasks: list[Task], *, start: int = 1) -> list[EpisodeRecord]:
        """Concurrent (at most ``concurrency`` at once) against the runner's frozen memory; labels
        count from D<start>."""
        sem = asyncio.Semaphore(self.concurrency)

        async def one(i: int, t: Task) -> EpisodeRecord:
            async with sem:
                return await self._episode(runner, t, f"D{i}", "deployment", learn=False)

        return list(await asyncio.gather(*(one(i, t) for i, t in enumerate(tasks, start))))

    async def _deploy_staged(
        self,
        runner: DesignRunner,
        tasks: list[Task],
        ev: Evaluation,
        stage_tasks: int,
        go_on: Callable[[list[EpisodeRecord]], Verdict] | None,
    ) -> None:
        """Deployment in batches of ``stage_tasks``; after each batch but the last, ``go_on`` decides."""
        stages = batches(len(tasks), stage_tasks if go_on is not None else 0)
        for k, idx in enumerate(stages):
            ev.deployment += await self.deploy(runner, tasks[idx.start : idx.stop], start=idx.start + 1)
            if go_on is not None and k < len(stages) - 1:
                verdict = go_on(ev.deployment)
                ev.stop_reason = verdict.reason
                if not verdict.go_on:
                    ev.stage = "minibatch"
                    return

    async def evaluate(
        self,
        design: Design,
        collection_tasks: list[Task],
        deployment_tasks: list[Task],
        *,
        stage_tasks: int = 0,
        go_on: Callable[[list[EpisodeRecord]], Verdict] | None = None,
    ) -> Evaluation:
        """Collection then deployment. A design that crashes gets logs and scores (its recall
        returns ""); a sandbox that cannot run at all, or a task model that keeps failing, gives
        ``status == "error"`` with the reason in ``errors`` (and no scores).

        Staged (``go_on`` given): deployment runs in batches of ``stage_tasks`` and stops after a
        batch whose episodes ``go_on`` says cannot win (``ev.stage == "minibatch"``)."""
        from atlas.alma.evaluate.runner import DesignRunner

        check_disjoint(collection_tasks, deployment_tasks)
        t0 = time.perf_counter()
        ev = Evaluation(design_id=design.id, name=design.name, deployment_total=len(deployment_tasks))
        runner = None
        try:
            runner = DesignRunner(
                design,
                embedder=self.embedder,
                llm=self.design_llm,
                pool=self.pool,
                limits=self.limits,
                host_executor=self.host_executor,
            )
            ev.collection = await self.collect(runner, collection_tasks)
            snapshot = runner.snapshot()
            ev.stores = summarize_snapshot(snapshot)
            ev.learned = {**snapshot, "embedder": self.embedder.name}
            runner.freeze()
            await self._deploy_staged(runner, deployment_tasks, ev, stage_tasks, go_on)
            ev.stores["tool_usage"] = runner.tools.usage.to_dict()  # what its tools cost the host (budgets)
            ev.protections = dict(runner.protections or {})
        except SandboxError as exc:
            ev.status = "error"
            ev.errors.append(f"sandbox failure: {exc}")
        except ScriptExhaustedError:
            raise  # a test script ran out: a bug in the test, not data
        except LLMError as exc:
            # The task model failed after its retries (unreachable, prompt too long): the design
            # cannot be scored, but the search goes on.
            ev.status = "error"
            ev.errors.append(f"task model failed: {exc}")
        finally:
            if runner is not None:
                await runner.aclose()
        ev.duration_s = round(time.perf_counter() - t0, 3)
        return ev


def _seeds(tasks: list[Task]) -> set[Any]:
    return {t.metadata.get("seed", t.id) for t in tasks}


def check_disjoint(collection: list[Task], deployment: list[Task]) -> None:
    """Collection and deployment must never share a task (seed or id): deployment measures
    generalization to unseen tasks."""
    overlap = _seeds(collection) & _seeds(deployment)
    ids = {t.id for t in collection} & {t.id for t in deployment}
    if overlap or ids:
        raise ConfigError(
            f"the run's task sets overlap (collection, deployment and held-out test tasks must not): "
            f"seeds {sorted(map(str, overlap))}, ids {sorted(ids)}"
        )


def make_tasks(
    env: Environment, *, episodes: int, seed: int, family: int | None, deployment_seeds: list[int]
) -> tuple[list[Task], list[Task]]:
    """Collection tasks (``episodes`` from ``seed``) and deployment tasks (``episodes`` from each
    deployment seed), all in one family when ``family`` is set; never overlapping. An environment with
    its own splits (``HasSplits``) gives collection tasks from ``train`` and deployment tasks from
    ``dev``: the search screens and chooses on those, and reports on ``test`` (``test_tasks``)."""
    if isinstance(env, HasSplits):
        collection = env.split_tasks("train", episodes, seed)
        deployment = env.split_tasks("dev", episodes * len(deployment_seeds), seed)
    else:
        collection = _generated(env, episodes, seed, family)
        deployment = [t for s in deployment_seeds for t in _generated(env, episodes, s, family)]
    check_disjoint(collection, deployment)
    return collection, deployment


def _generated(env: Environment, n: int, seed: int, family: int | None) -> list[Task]:
    if family is None:
        return env.generate_tasks(n, seed)
    return env.generate_family_tasks(n, family, seed)


def run_tasks(cfg: AlmaConfig, env: Environment) -> tuple[list[Task], list[Task]]:
    """A run's collection and deployment tasks, as its settings (``config.json``) name them."""
    return make_tasks(
        env,
        episodes=cfg.episodes,
        seed=cfg.collection_seed(),
        family=cfg.family_seed,
        deployment_seeds=cfg.deployment_seeds(),
    )


def held_out_tasks(cfg: AlmaConfig, env: Environment, seen: list[Task]) -> tuple[list[Task], str]:
    """The run's held-out test tasks and where they come from: the benchmark's ``test`` split
    (``HasSplits``), else ``episodes`` tasks from each of the run's test seeds (``AlmaConfig.test_seeds``,
    far from the collection and deployment seeds). Never one of ``seen`` (the collection and deployment
    tasks, on which the search screens and chooses): ``ConfigError`` if one is."""
    n = cfg.test_count
    if isinstance(env, HasSplits):
        tasks, source = env.split_tasks("test", n, cfg.seed), "the benchmark's test split"
    else:
        seeds = cfg.held_out_seeds()
        tasks = [t for s in seeds for t in _generated(env, cfg.episodes, s, cfg.family_seed)]
        source = f"seeds {seeds[0]}..{seeds[-1]}" if seeds else "no seeds"
    check_disjoint(seen, tasks)
    return tasks, source


__all__ = [
    "EpisodeRecord",
    "Evaluation",
    "Harness",
    "add_usage",
    "check_disjoint",
    "held_out_tasks",
    "make_tasks",
    "run_tasks",
    "summarize_snapshot",
]
