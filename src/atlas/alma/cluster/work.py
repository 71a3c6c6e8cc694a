"""The worker side of the Ray executor: what one work unit does, without Ray.

A work unit is a design's collection (its episodes in order; memory grows; the snapshot comes back)
or one deployment episode (the design restored from that snapshot and frozen). Everything a unit
needs travels by value (the design, the tasks, the snapshot) or by name (the environment, the task
model, the embedder), described by a ``WorkerKit``; the heavy collaborators a kit names (a local
model, the embedder, the sandbox worker pool) are built once per worker process and reused
(``built``). A unit returns its records, logs and snapshot; it never writes files.
"""

from __future__ import annotations

import functools
import hashlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from atlas.agent.advice_match import ADVICE_WEIGHT
from atlas.alma.evaluate.harness import EpisodeRecord, Harness, summarize_snapshot
from atlas.alma.evaluate.runner import DesignRunner
from atlas.alma.evaluate.tools import SharedBudget, ToolUsage
from atlas.alma.sandbox.pool import SandboxLimits, WorkerPool
from atlas.errors import LLMError, SandboxError
from atlas.infra.llm.ratelimit import Pacer, RateLimitedLLM
from atlas.protocols.llm import LLM, Completion, Usage

if TYPE_CHECKING:
    from atlas.alma.design import Design
    from atlas.alma.evaluate.runner import HostExecutor
    from atlas.core.types import Task
    from atlas.protocols.embed import Embedder
    from atlas.protocols.env import Environment


@dataclass(frozen=True)
class WorkerKit:
    """How a worker builds what episodes need. Names travel (``env`` with ``env_kwargs``, ``model``,
    ``embedder_name``); objects travel only when they pickle (``env_object``, ``embedder_object``,
    ``llm_factory``: a zero-argument callable that builds the task model)."""

    env: str
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    model: str | None = None
    llm_factory: Callable[[], LLM] | None = None
    embedder_name: str | None = None
    max_turns: int | None = None
    advice_weight: float = ADVICE_WEIGHT
    max_rpm: float | None = None  # task-model requests per minute, cluster-wide (one shared pacer)
    limits: SandboxLimits | None = None
    host_executor: HostExecutor | None = None
    replay_dir: str | None = None
    sandbox_workers: int = 2
    env_object: Environment | None = None
    embedder_object: Embedder | None = None

    @property
    def key(self) -> str:
        """Identifies what the kit builds (one build per worker process and key)."""
        parts: list[Any] = [self.env, sorted(self.env_kwargs.items()), self.model, self.embedder_name]
        parts += [self.replay_dir, repr(self.llm_factory), self.max_turns, self.advice_weight]
        return hashlib.sha256(repr(parts).encode()).hexdigest()[:16]


@dataclass
class Built:
    """A kit's collaborators, built once per worker process."""

    env: Environment
    llm: LLM
    embedder: Embedder
    pool: WorkerPool


_BUILT: dict[str, Built] = {}
_BUILD_LOCK = threading.Lock()


def built(kit: WorkerKit) -> Built:
    """The collaborators of ``kit`` in this process (a local model is loaded once, here)."""
    with _BUILD_LOCK:
        if kit.key in _BUILT:
            return _BUILT[kit.key]
        if kit.env_object is not None:
            env = kit.env_object
        else:
            from atlas.envs.registry import get_env

            env = get_env(kit.env, **kit.env_kwargs)
        if kit.llm_factory is not None:
            llm = kit.llm_factory()
        else:
            from atlas.infra.llm import make_llm

            llm = make_llm(kit.model)
        if kit.replay_dir:
            from atlas.alma.state.replay import use_replay_cache
            from atlas.infra.llm import LLMClient

            if isinstance(llm, LLMClient):
                use_replay_cache(llm, Path(kit.replay_dir))
        if kit.embedder_object is not None:
            embedder = kit.embedder_object
        else:
            from atlas.infra.embeddings import make_embedder

            embedder = make_embedder(kit.embedder_name)
        pool = WorkerPool(kit.limits or SandboxLimits(), max_workers=kit.sandbox_workers)
        _BUILT[kit.key] = b = Built(env=env, llm=llm, embedder=embedder, pool=pool)
        return b


class CountingLLM:
    """The task model as one work unit sees it: every call goes to the shared model, and what the
    unit spent is counted here (so the driver adds each unit's usage exactly once)."""

    def __init__(self, inner: LLM) -> None:
        self.inner = inner
        self.model = inner.model
        self.usage = Usage()
        self.cache_hits = 0
        self._lock = threading.Lock()

        async def acomplete(messages: list[dict[str, Any]], **kwargs: Any) -> Completion:
            return self._count(await inner.acomplete(messages, **kwargs))

        # The agent reads acomplete's signature (which keywords the model takes): show the model's own.
        self.acomplete = functools.wraps(inner.acomplete)(acomplete)

    def _count(self, completion: Completion) -> Completion:
        with self._lock:
            if completion.cached:
                self.cache_hits += 1
            else:
                self.usage.add(completion.usage)
        return completion

    def complete(self, messages: list[dict[str, Any]], **kwargs: Any) -> Completion:
        return self._count(self.inner.complete(messages, **kwargs))

    def __getattr__(self, name: str) -> Any:  # capabilities (supports_tools, ...) are the model's
        return getattr(self.inner, name)


@dataclass
class UnitResult:
    """What a work unit sends back: its episodes, the unit's model and tool usage, and after a
    collection the design's learned state. ``error`` is a failure the evaluation records (the
    sandbox could not run, the task model kept failing), as the local harness words it."""

    episodes: list[EpisodeRecord] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)
    cache_hits: int = 0
    tool_usage: dict[str, Any] = field(default_factory=dict)
    snapshot: dict[str, Any] | None = None
    stores: dict[str, Any] = field(default_factory=dict)
    protections: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    worker: str = ""


def _harness(b: Built, kit: WorkerKit, llm: CountingLLM) -> Harness:
    from atlas.agent import TaskAgent

    agent = TaskAgent(llm, max_turns=kit.max_turns, advice_weight=kit.advice_weight)
    return Harness(
        b.env,
        agent,
        embedder=b.embedder,
        design_llm=llm,
        pool=b.pool,
        limits=kit.limits,
        host_executor=kit.host_executor,
    )


def _failure(exc: Exception) -> str:
    if isinstance(exc, SandboxError):
        return f"sandbox failure: {exc}"
    return f"task model failed: {exc}"


def _unit_llm(b: Built, pacer: Pacer | None) -> CountingLLM:
    """The task model for one unit: counted, and behind the cluster's pacer when there is one."""
    return CountingLLM(RateLimitedLLM(b.llm, pacer) if pacer is not None else b.llm)


async def play_collection(
    kit: WorkerKit, design: Design, tasks: list[Task], worker: str = "", pacer: Pacer | None = None
) -> UnitResult:
    """A design's collection: each episode's ``update`` lands before the next ``recall``."""
    b = built(kit)
    llm = _unit_llm(b, pacer)
    out = UnitResult(worker=worker)
    runner = None
    try:
        runner = DesignRunner(
            design,
            embedder=b.embedder,
            llm=llm,
            pool=b.pool,
            limits=kit.limits,
            host_executor=kit.host_executor,
        )
        out.episodes = await _harness(b, kit, llm).collect(runner, tasks)
        snapshot = runner.snapshot()
        out.snapshot = snapshot
        out.stores = summarize_snapshot(snapshot)
        out.tool_usage = runner.tools.usage.to_dict()
        out.protections = dict(runner.protections or {})
    except (SandboxError, LLMError) as exc:
        if type(exc).__name__ == "ScriptExhaustedError":
            raise
        out.error = _failure(exc)
    finally:
        if runner is not None:
            await runner.aclose()
    out.usage, out.cache_hits = llm.usage.to_dict(), llm.cache_hits
    return out


async def play_deployment(
    kit: WorkerKit,
    design: Design,
    snapshot: dict[str, Any],
    tool_usage: dict[str, Any],
    task: Task,
    label: str,
    worker: str = "",
    budget: SharedBudget | None = None,
    pacer: Pacer | None = None,
) -> UnitResult:
    """One deployment episode against the design restored from its collection snapshot and frozen.
    The evaluation's tool usage after collection comes along, and ``budget`` (the cluster's ledger)
    counts every worker's tool calls, so the evaluation's budgets hold across the cluster; the unit
    returns what it added."""
    b = built(kit)
    llm = _unit_llm(b, pacer)
    out = UnitResult(worker=worker)
    runner = None
    try:
        runner = DesignRunner.restore(
            design,
            snapshot,
            embedder=b.embedder,
            llm=llm,
            pool=b.pool,
            limits=kit.limits,
            host_executor=kit.host_executor,
        )
        runner.freeze()
        start = ToolUsage(**{k: v for k, v in tool_usage.items() if k in ToolUsage.__dataclass_fields__})
        runner.tools.usage = ToolUsage(**vars(start))
        runner.tools.shared = budget
        out.episodes = [await _harness(b, kit, llm).episode(runner, task, label, "deployment", learn=False)]
        now = runner.tools.usage
        out.tool_usage = {k: getattr(now, k) - getattr(start, k) for k in ToolUsage.__dataclass_fields__}
    except (SandboxError, LLMError) as exc:
        if type(exc).__name__ == "ScriptExhaustedError":
            raise
        out.error = _failure(exc)
    finally:
        if runner is not None:
            await runner.aclose()
    out.usage, out.cache_hits = llm.usage.to_dict(), llm.cache_hits
    return out


__all__ = ["CountingLLM", "UnitResult", "WorkerKit", "built", "play_collection", "play_deployment"]
