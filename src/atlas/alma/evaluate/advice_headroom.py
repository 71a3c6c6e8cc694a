"""Headroom: how much any memory could help this agent on these tasks.

The same deployment tasks are played by the same agent under three advice conditions:

- ``none``: no advice (what the no-memory baseline gets);
- ``learnable``: what a perfect memory of earlier episodes could know, written by the environment
  (``env.oracle_advice(task, "learnable")``: GraphWorld's map, routes and search order, never
  where the object lies);
- ``full``: the hidden answer (``env.oracle_advice(task, "full")``), an upper bound no design can reach.

*learnable − none* is the room a memory design has to improve on no memory; if it is not above
0, no search can find a design that helps. The oracle text goes only to the task agent: designs,
their tools and their logs never see it.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from atlas.alma.state.goal_completion import goal_completion, scenario_of
from atlas.alma.state.stats import PairedDifference, paired_difference
from atlas.core.types import Task
from atlas.envs.registry import DEFAULT_ENV
from atlas.errors import ConfigError
from atlas.protocols.env import Environment, HasSplits
from atlas.protocols.llm import LLM

if TYPE_CHECKING:
    from atlas.agent.task_agent import TaskAgent

CONDITIONS = ("none", "learnable", "full")
CONTRASTS = (("learnable", "none"), ("full", "none"))


@dataclass
class HeadroomEpisode:
    """One episode of one condition."""

    task_id: str
    condition: str
    success: bool
    score: float
    steps: int
    turns: int
    invalid_actions: int
    duration_s: float
    advice: str = ""
    actions: list[str] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)
    scenario: str | None = None  # the task's scenario (family), for scenario goal completion
    model: str = ""  # the task agent's model (a resumed measurement keeps only its own model's episodes)


@dataclass
class HeadroomResult:
    model: str
    env: str
    tasks: list[str]
    episodes: dict[str, list[HeadroomEpisode]]
    settings: dict[str, Any] = field(default_factory=dict)

    def scores(self, condition: str) -> list[float]:
        return [e.score for e in self.episodes[condition]]

    def condition_summary(self, condition: str) -> dict[str, Any]:
        """Outcomes of one condition: ``success_rate`` is task goal completion; ``tgc`` and ``sgc``
        carry it and scenario goal completion with their Wilson 95% intervals."""
        eps = self.episodes[condition]
        n = max(1, len(eps))
        completion = goal_completion(eps).to_dict()
        return {
            **completion,
            "success_rate": round(sum(e.success for e in eps) / n, 4),
            "mean_score": round(sum(e.score for e in eps) / n, 4),
            "mean_steps": round(sum(e.steps for e in eps) / n, 3),
            "seconds_per_episode": round(sum(e.duration_s for e in eps) / n, 2),
        }

    def difference(self, a: str, b: str) -> PairedDifference:
        return paired_difference(self.scores(a), self.scores(b))

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "env": self.env,
            "tasks": len(self.tasks),
            "conditions": {c: self.condition_summary(c) for c in self.episodes},
            "differences": {
                f"{a}-{b}": self.difference(a, b).to_dict()
                for a, b in CONTRASTS
                if a in self.episodes and b in self.episodes
            },
            "settings": self.settings,
        }

    def episode_dicts(self) -> list[dict[str, Any]]:
        return [asdict(e) for c in self.episodes for e in self.episodes[c]]


def advice_for(env: Environment, task: Task, condition: str) -> str:
    """The advice text of ``condition`` for ``task`` ("" for none)."""
    if condition == "none":
        return ""
    from atlas.envs.registry import spec_of

    return spec_of(env).oracle_advice(env, task, condition)


def headroom_tasks(
    env: Environment, *, tasks: int, seed: int, family: int | None, deployment_seeds: list[int]
) -> list[Task]:
    """``tasks`` deployment tasks as the search makes them: spread over the deployment seeds. An
    environment with its own splits (``HasSplits``) gives ``tasks`` of its ``test`` split instead."""
    if tasks < 1:
        raise ConfigError(f"--tasks must be at least 1, got {tasks}")
    if isinstance(env, HasSplits):
        return env.split_tasks("test", tasks, seed)
    per_seed = math.ceil(tasks / len(deployment_seeds))
    out: list[Task] = []
    for s in deployment_seeds:
        out += (
            env.generate_tasks(per_seed, s)
            if family is None
            else env.generate_family_tasks(per_seed, family, s)
        )
    return out[:tasks]


async def aheadroom(
    env: Environment,
    agent: TaskAgent,
    tasks: list[Task],
    *,
    conditions: tuple[str, ...] = CONDITIONS,
    concurrency: int = 1,
    on_episode: Callable[[HeadroomEpisode], None] | None = None,
    settings: dict[str, Any] | None = None,
    played: list[HeadroomEpisode] | None = None,
) -> HeadroomResult:
    """Play every task under every condition with ``agent`` and return the paired results. Episodes
    in ``played`` (an earlier, interrupted measurement of the same tasks) are kept, not played again."""
    unknown = set(conditions) - set(CONDITIONS)
    if unknown:
        raise ConfigError(f"unknown headroom condition(s) {sorted(unknown)}; known: {', '.join(CONDITIONS)}")
    advice = {(t.id, c): advice_for(env, t, c) for t in tasks for c in conditions}  # fail before playing
    model = str(agent.llm.model)
    others = sorted({e.model for e in played or [] if e.model and e.model != model})
    if others:
        raise ConfigError(
            f"the episodes to keep were played by {', '.join(others)}, this measurement uses {model}: "
            "give the same --model, or another --episodes-out to start anew"
        )
    sem = asyncio.Semaphore(max(1, concurrency))

    async def play(task: Task, condition: str) -> HeadroomEpisode:
        async with sem:
            t0 = time.perf_counter()
            text = advice[(task.id, condition)]
            traj = await agent.run(env.clone(), task, advice=text)
            meta = traj.metadata
            ep = HeadroomEpisode(
                task_id=task.id,
                condition=condition,
                success=bool(traj.success),
                score=round(float(traj.score), 6),
                steps=int(meta.get("steps_taken", len(traj.steps))),
                turns=int(meta.get("turns", 0) or 0),
                invalid_actions=int(meta.get("invalid_actions", 0) or 0),
                duration_s=round(time.perf_counter() - t0, 3),
                advice=text,
                actions=[s.action for s in traj.steps],
                usage=dict(meta.get("usage") or {}),
                scenario=scenario_of(task.metadata),
                model=model,
            )
            if on_episode is not None:
                on_episode(ep)
            return ep

    kept = {(e.task_id, e.condition): e for e in played or []}
    jobs = [(t, c) for t in tasks for c in conditions if (t.id, c) not in kept]
    new = {(e.task_id, e.condition): e for e in await asyncio.gather(*(play(t, c) for t, c in jobs))}
    episodes: dict[str, list[HeadroomEpisode]] = {c: [] for c in conditions}
    for t in tasks:
        for c in conditions:
            episodes[c].append(kept.get((t.id, c)) or new[(t.id, c)])
    return HeadroomResult(
        model=model,
        env=env.name,
        tasks=[t.id for t in tasks],
        episodes=episodes,
        settings=dict(settings or {}),
    )


def headroom(
    *,
    env: str | Environment = DEFAULT_ENV,
    tasks: int = 12,
    llm: LLM | None = None,
    agent: TaskAgent | None = None,
    conditions: tuple[str, ...] = CONDITIONS,
    concurrency: int = 1,
    on_episode: Callable[[HeadroomEpisode], None] | None = None,
    played: list[HeadroomEpisode] | None = None,
    **settings: Any,
) -> HeadroomResult:
    """Measure the headroom of a configuration, from Python. ``settings`` are ``AlmaConfig`` fields
    (``seed``, ``family``, an environment parameter such as ``rooms``, ``deploy_seeds``, ``max_turns``, ``model`` …); the tasks are the
    deployment tasks a search with those settings would use, and the agent is built as the search
    builds it (``TaskAgent(llm, max_turns=...)``) unless ``agent`` is given. ``played``: episodes of
    an interrupted measurement of the same tasks, kept instead of played again."""
    from atlas.alma.state.config import AlmaConfig
    from atlas.infra.aio import run_sync

    env_name = env if isinstance(env, str) else env.name
    config = AlmaConfig.build("headroom", env=env_name, iterations=0, **settings)
    if isinstance(env, str):
        from atlas.envs.registry import get_env

        env = get_env(config.env, **config.env_kwargs())
    if agent is None:
        from atlas.agent import TaskAgent

        if llm is None:
            from atlas.infra.llm import make_llm

            llm = make_llm(config.model)
        agent = TaskAgent(llm, max_turns=config.max_turns, advice_weight=config.advice_weight)
    task_list = headroom_tasks(
        env,
        tasks=tasks,
        seed=config.seed,
        family=config.family_seed,
        deployment_seeds=config.deployment_seeds(),
    )
    env_params = {k: v for k, v in config.env_kwargs().items() if k != "family_mode"}  # e.g. rooms
    facts = {
        **env_params,
        "seed": config.seed,
        "family": config.family_seed,
        "deploy_seeds": config.deploy_seeds,
        "max_turns": config.max_turns,
        "action_format": agent.action_format,
        "concurrency": concurrency,
    }
    return run_sync(
        aheadroom(
            env,
            agent,
            task_list,
            conditions=conditions,
            concurrency=concurrency,
            on_episode=on_episode,
            settings=facts,
            played=played,
        )
    )


__all__ = [
    "CONDITIONS",
    "HeadroomEpisode",
    "HeadroomResult",
    "advice_for",
    "aheadroom",
    "headroom",
    "headroom_tasks",
]
