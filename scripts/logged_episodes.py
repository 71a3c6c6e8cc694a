"""A run folder's logged deployment episodes, replayed turn by turn in the run's own environment (no LLM).

Shared by the scripts that read what the task agent did (``reach_and_take.py``, ``advice_adherence.py``).
Needs an environment that lists its actions and replays a task the same way each time (the built-ins do).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from atlas.agent import choice as ch
from atlas.agent.loops import Advances, Guard
from atlas.alma.evaluate.harness import run_tasks
from atlas.alma.state.config import AlmaConfig
from atlas.alma.state.run_dir import read_jsonl
from atlas.envs.base import action_text
from atlas.envs.registry import get_env
from atlas.protocols.env import Action, Environment


@dataclass
class Turn:
    seen: str  # the observation as the agent read it (an error first, as the agent is shown it)
    listed: list[Action]
    labels: list[str]
    taken: str  # the label the agent chose
    chosen: list[str]  # the labels taken before this turn
    past: list[
        tuple[str, bool]
    ]  # (action text, whether it did not work) before this turn: the loop guard's input
    advanced: list[str]  # the labels taken before this turn whose step raised the score
    first_visit: (
        bool  # the agent stands where it had never been before this turn (the loop guard's ``Visits``)
    )
    options: list[str]  # the labels the task agent's loop guard left to choose from (``Guard.open``)


def run_environment(run: Path) -> tuple[Environment, dict[str, Any]]:
    """The run's environment, rebuilt from its ``config.json``, and its deployment tasks by id."""
    cfg = AlmaConfig.load(run / "config.json")
    env = get_env(cfg.env, **cfg.env_kwargs())
    _, deployment = run_tasks(cfg, env)
    return env, {t.id: t for t in deployment}


def deployment_rows(run: Path, design: str, tasks: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The design's logged deployment episodes on ``tasks``; exits naming the file when there are none."""
    log = run / "logs" / design / "episodes.jsonl"
    if not log.is_file():
        raise SystemExit(f"no episodes of design {design!r} in {run}: expected {log}")
    for row in read_jsonl(log):
        if row.get("phase") == "deployment" and row.get("task_id") in tasks:
            yield row


def replay(env: Environment, task: Any, row: dict[str, Any]) -> Iterator[Turn]:
    """Each turn of the logged episode ``row`` before its action is taken; stops where the episode
    ended or where its next action is not listed (the replay no longer matches the log)."""
    obs = env.reset(task)
    seen = env.summarize_observation(obs)
    chosen: list[str] = []
    advances = Advances(float(env.score()))
    guard = Guard(obs)
    for step in row.get("actions") or []:
        listed = env.candidate_actions(obs)
        labels = ch.labels(listed)
        texts = {label: action_text(a.tool, a.args) for label, a in zip(labels, listed, strict=True)}
        taken = str(step.get("text"))
        yield Turn(
            seen,
            listed,
            labels,
            taken,
            list(chosen),
            list(guard.past),
            list(advances.actions),
            guard.visits.first(obs),
            guard.open(obs, texts),
        )
        if taken not in labels:
            return
        action = listed[labels.index(taken)]
        result = env.step(action)
        chosen.append(taken)
        guard.after(texts[taken], obs, result)
        advances.after(taken, float(env.score()))
        obs = result.observation
        seen = env.summarize_observation(obs)
        if result.error:
            seen = f"Error: {result.error}\n{seen}"
        if result.done:
            return
