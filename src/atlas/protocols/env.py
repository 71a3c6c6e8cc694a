"""The environment seam: what the loop, harness and agent know about a domain."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from atlas.core.types import Task
from atlas.protocols.llm import ToolSpec


@dataclass
class StepResult:
    """What ``Environment.step`` returns. ``observation`` is a structured dict;
    ``counted`` is False for free actions (GraphWorld's ``look``)."""

    observation: dict[str, Any]
    done: bool = False
    success: bool = False
    counted: bool = True
    error: str | None = None  # an invalid action, explained (returned to the agent, never raised)


@dataclass
class Action:
    tool: str
    args: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Environment(Protocol):
    """A stateful episode runner plus a task generator.

    ``clone()`` gives a fresh instance with the same configuration so episodes can run
    concurrently. Observations are dicts; ``summarize_observation`` renders one as text.
    Nothing a memory design receives (``atlas.envs.views.task_view`` / ``episode_view``) may reveal hidden state. What the
    search needs beyond episodes (explorer, seed design, context schema, oracle advice, parameters)
    comes with the environment's registration (``atlas.envs.registry.register_env``).
    """

    name: str

    @property
    def max_steps(self) -> int: ...

    def clone(self) -> Environment: ...
    def generate_tasks(self, n: int, seed: int) -> list[Task]: ...
    def generate_family_tasks(self, n: int, family: int, seed: int) -> list[Task]: ...
    def reset(self, task: Task) -> dict[str, Any]: ...
    def step(self, action: Action) -> StepResult: ...
    def observe(self) -> dict[str, Any]: ...
    def success(self) -> bool: ...
    def score(self) -> float: ...
    def steps_taken(self) -> int: ...
    def tools(self) -> list[ToolSpec]: ...
    def format_goal(self, task: Task) -> str: ...
    def summarize_observation(self, observation: dict[str, Any]) -> str: ...


@runtime_checkable
class EnumeratesActions(Protocol):
    """Optional capability: the valid actions in an observation, so an agent can pick one by number
    (the task agent's ``choice`` format) and a policy can play without an LLM."""

    def candidate_actions(self, observation: dict[str, Any]) -> list[Action]: ...


@runtime_checkable
class StepsInThread(Protocol):
    """Optional capability: ``step_in_thread`` true when a step takes long enough (a game engine) that
    callers should run ``reset``/``step`` in a worker thread, keeping the event loop free."""

    step_in_thread: bool


@runtime_checkable
class GivesTaskInstructions(Protocol):
    """Optional capability: standing instructions for the task agent's system message (how the
    environment is played), beyond the goal and the actions."""

    def task_instructions(self) -> str: ...


SPLITS = ("train", "dev", "test")


@runtime_checkable
class HasSplits(Protocol):
    """Optional capability: the benchmark's own task splits. A search collects on ``train``, screens
    and chooses on ``dev`` and reports on ``test``; ``split_tasks`` never returns a task of another
    split, and ``seed`` only picks which variations (and their order) within the split."""

    def split_tasks(self, split: str, n: int, seed: int) -> list[Task]: ...
