"""Which executor plays a search's designs: ``local`` (the harness in this process, the default; Ray
is never imported) or ``ray`` (work units on a Ray cluster). The search builds one in its setup."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from atlas.alma.baselines import make_host_design
from atlas.alma.evaluate.executor import Executor, LocalExecutor
from atlas.alma.evaluate.harness import Harness
from atlas.alma.sandbox.pool import SandboxLimits, WorkerPool
from atlas.alma.state.config import AlmaConfig
from atlas.errors import ConfigError
from atlas.infra.llm.ratelimit import RateLimitedLLM, Spacing
from atlas.protocols import LLM, Embedder, Environment


def sandbox_workers(concurrency: int) -> int:
    """Sandbox workers for one process's pool. Recalls take milliseconds while episodes wait on the
    LLM, so a few warm workers serve many concurrent episodes; spawning one per episode would cost
    more than it saves on a small machine."""
    return max(2, min(concurrency, os.cpu_count() or 2))


def make_pool(limits: SandboxLimits | None, concurrency: int) -> WorkerPool:
    """The sandbox worker pool of the driver's process (a cluster's workers have their own)."""
    return WorkerPool(limits or SandboxLimits(), max_workers=sandbox_workers(concurrency))


def paced(llm: LLM, max_rpm: float | None) -> LLM:
    """The task model behind the run's request-rate limit (in this process; a cluster's workers share
    one pacer instead, see ``RayExecutor``)."""
    return cast("LLM", RateLimitedLLM(llm, Spacing(max_rpm))) if max_rpm else llm


def _travels(obj: Any) -> Any:
    """``obj`` when it can be sent to another process (pickled), else None (rebuilt there by name)."""
    from ray import cloudpickle

    try:
        cloudpickle.dumps(obj)
    except Exception:  # a lock, a model session, an open file: it cannot travel
        return None
    return obj


def make_executor(
    config: AlmaConfig,
    harness: Harness,
    *,
    llm: LLM,
    llm_factory: Callable[[], LLM] | None,
    env: Environment,
    embedder: Embedder,
    limits: SandboxLimits | None,
    replay_dir: Path | None,
    on_retry: Callable[[dict[str, Any]], None],
) -> Executor:
    """The executor ``config.executor`` names, playing what ``harness`` would play."""
    if config.executor == "local":
        return LocalExecutor(harness)
    from atlas.alma.cluster import RayExecutor, WorkerKit
    from atlas.alma.cluster.connect import import_ray

    import_ray()  # says how to install the extra when Ray is missing
    if getattr(harness.agent, "llm", None) is not harness.design_llm:
        raise ConfigError(
            "--executor ray builds the task agent on every worker (TaskAgent with the run's model and "
            "max_turns): a custom agent= cannot travel; leave it out, or use the local executor"
        )
    if llm_factory is None:
        raise ConfigError(
            "--executor ray builds the task model on every worker: give it by name (model='NAME', "
            "--model NAME) or pass llm_factory= (a picklable zero-argument callable that builds it)"
        )
    kit = WorkerKit(
        env=config.env,
        env_kwargs=config.env_kwargs(),
        llm_factory=llm_factory,
        embedder_name=config.embedder_name,
        max_turns=config.max_turns,
        advice_weight=config.advice_weight,
        max_rpm=config.max_rpm,
        limits=limits,
        host_executor=make_host_design,
        replay_dir=str(replay_dir) if replay_dir is not None else None,
        sandbox_workers=sandbox_workers(config.concurrency),
        env_object=_travels(env),
        embedder_object=_travels(embedder),
    )
    return RayExecutor(
        kit,
        address=config.ray_address,
        concurrency=config.concurrency,
        local_model=str(getattr(llm, "model", "")).startswith("local:"),
        embedder_name=embedder.name,
        on_episode=harness.on_episode,
        on_retry=on_retry,
    )


__all__ = ["make_executor", "make_pool", "paced", "sandbox_workers"]
