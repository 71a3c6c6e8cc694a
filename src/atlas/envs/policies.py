"""Built-in non-LLM policies: cheap episodes for design smoke runs, tests and benchmarks.

``RandomPolicy(seed)`` picks uniformly among the valid actions the environment lists
(``env.candidate_actions(observation)``). ``ExplorerPolicy(seed)`` plays a reasonable
domain heuristic (GraphWorld: explore breadth-first, take the object when seen, walk the known
map to the destination; ALFWorld/TextWorld: admissible-command heuristics, or the gold plan
with ``use_gold=True`` when the game has one). Both return a ``Trajectory`` recorded exactly
like the task agent's, so designs see the same ``episode`` shape whatever produced it.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any, Protocol

from atlas.core.types import Task, Trajectory
from atlas.envs.base import EpisodeRecorder
from atlas.errors import EnvError
from atlas.protocols.env import Action, Environment


class Planner(Protocol):
    """Chooses the next action from the latest observation; None means "nothing sensible left"."""

    def next_action(self, observation: dict[str, Any]) -> Action | None: ...


PlannerFactory = Callable[[Environment, Task, random.Random, bool], Planner]
_EXPLORERS: dict[str, PlannerFactory] = {}


def register_explorer(env_name: str, factory: PlannerFactory) -> None:
    """Register the ExplorerPolicy heuristic for an environment (built-ins use this too).
    ``factory(env, task, rng, use_gold)`` returns a fresh Planner for one episode."""
    _EXPLORERS[env_name] = factory


def _explorer_factory(env_name: str) -> PlannerFactory:
    if env_name not in _EXPLORERS:
        # Built-ins register themselves on import; import lazily so heavy extras stay optional.
        if env_name == "graphworld":
            import atlas.envs.graphworld.explorer
        elif env_name == "alfworld":
            import atlas.envs.alfworld.explorer
        elif env_name == "textworld":
            import atlas.envs.textworld.explorer  # noqa: F401
    if env_name not in _EXPLORERS:
        raise EnvError(f"no explorer heuristic registered for environment {env_name!r}")
    return _EXPLORERS[env_name]


def _run(env: Environment, task: Task, choose: Callable[[dict[str, Any]], Action | None], policy: str,
         max_turns: int | None) -> Trajectory:
    obs = env.reset(task)
    rec = EpisodeRecorder(env, task, obs)
    limit = max_turns if max_turns is not None else 3 * env.max_steps + 5
    turns = 0
    done = False
    while not done and turns < limit:
        action = choose(obs)
        if action is None:
            break
        result = env.step(action)
        rec.record(action.tool, action.args, result)
        obs, done = result.observation, result.done
        turns += 1
    return rec.finish(policy=policy, turns=turns)


class RandomPolicy:
    """Uniformly random valid actions (the environment's ``candidate_actions``)."""

    def __init__(self, seed: int = 0, *, max_turns: int | None = None) -> None:
        self.seed = seed
        self.max_turns = max_turns

    def run(self, env: Environment, task: Task) -> Trajectory:
        rng = random.Random(f"random-policy/{self.seed}/{task.id}")
        candidates = getattr(env, "candidate_actions", None)
        if candidates is None:
            raise EnvError(f"environment {env.name!r} has no candidate_actions(); RandomPolicy cannot play it")

        def choose(obs: dict[str, Any]) -> Action | None:
            acts = candidates(obs)
            return rng.choice(acts) if acts else None

        return _run(env, task, choose, "random", self.max_turns)


class ExplorerPolicy:
    """A reasonable per-domain heuristic (see the module docstring)."""

    def __init__(self, seed: int = 0, *, use_gold: bool = False, max_turns: int | None = None) -> None:
        self.seed = seed
        self.use_gold = use_gold
        self.max_turns = max_turns

    def run(self, env: Environment, task: Task) -> Trajectory:
        rng = random.Random(f"explorer-policy/{self.seed}/{task.id}")
        planner = _explorer_factory(env.name)(env, task, rng, self.use_gold)
        return _run(env, task, planner.next_action, "gold" if self.use_gold else "explorer", self.max_turns)


__all__ = ["ExplorerPolicy", "Planner", "RandomPolicy", "register_explorer"]
