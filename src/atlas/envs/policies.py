"""Built-in non-LLM policies: cheap episodes for design smoke runs, tests and benchmarks.

``RandomPolicy(seed)`` picks uniformly among the valid actions the environment lists
(``env.candidate_actions(observation)``). ``ExplorerPolicy(seed)`` plays the
explorer registered with the environment (``register_env(..., explorer=...)``; GraphWorld: explore
breadth-first, take the object when seen, walk the known map to the destination; ALFWorld/TextWorld:
admissible-command heuristics), or random valid actions when none is registered; with
``use_gold=True`` it replays the game's walkthrough (``env.gold_plan()``) when there is one.
``GoalWordPolicy(seed)`` is random but takes listed actions naming a goal word half the time.
``LoggedWalk(logged)`` replays a task agent's logged actions. All return a ``Trajectory`` recorded exactly
like the task agent's, so designs see the same ``episode`` shape whatever produced it.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from atlas.core.types import Task, Trajectory
from atlas.envs.base import EpisodeRecorder, action_label, words
from atlas.envs.registry import Planner, spec_of
from atlas.errors import EnvError
from atlas.protocols.env import Action, EnumeratesActions, Environment


def play_policy(
    env: Environment,
    task: Task,
    choose: Callable[[dict[str, Any]], Action | None],
    policy: str,
    max_turns: int | None,
) -> Trajectory:
    """Play ``task`` taking what ``choose`` picks for each observation, recorded like the task agent."""
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


def _random_chooser(env: Environment, rng: random.Random) -> Callable[[dict[str, Any]], Action | None]:
    if not isinstance(env, EnumeratesActions):
        raise EnvError(
            f"environment {env.name!r} has neither an explorer (register_env(..., explorer=...)) nor "
            "candidate_actions(observation): no policy can play it without an LLM"
        )
    candidates = env.candidate_actions

    def choose(obs: dict[str, Any]) -> Action | None:
        acts = candidates(obs)
        return rng.choice(acts) if acts else None

    return choose


class _GoldReplay:
    """Replays the game's walkthrough; plays ``fallback`` when the game has none."""

    def __init__(self, env: Environment, fallback: Callable[[dict[str, Any]], Action | None]) -> None:
        self._gold = getattr(env, "gold_plan", None)
        self.fallback = fallback
        self.plan: list[str] | None = None
        self.use_fallback = False

    def next_action(self, obs: dict[str, Any]) -> Action | None:
        if self.plan is None:
            plan = self._gold() if callable(self._gold) else None
            self.plan = list(plan) if plan else []
            self.use_fallback = not plan
        if self.use_fallback:
            return self.fallback(obs)
        return Action("act", {"command": self.plan.pop(0)}) if self.plan else None


class RandomPolicy:
    """Uniformly random valid actions (the environment's ``candidate_actions``)."""

    def __init__(self, seed: int = 0, *, max_turns: int | None = None) -> None:
        self.seed = seed
        self.max_turns = max_turns

    def run(self, env: Environment, task: Task) -> Trajectory:
        rng = random.Random(f"random-policy/{self.seed}/{task.id}")
        return play_policy(env, task, _random_chooser(env, rng), "random", self.max_turns)


_COMMON = frozenset({"a", "an", "the", "to", "in", "on", "of", "and", "or", "at", "is", "it", "some", "from"})


def goal_words(goal: str) -> set[str]:
    """The words of a goal's text, without the few that every sentence has."""
    return set(words(goal)) - _COMMON


def form_words(goals: list[str]) -> frozenset[str]:
    """The words every one of ``goals`` has when they differ in some word: the task's form ("find",
    "take" in "Find the lamp and take it."), not a thing it names (empty for fewer than two goals)."""
    sets = [goal_words(g) for g in goals]
    if len(sets) < 2 or all(s == sets[0] for s in sets):
        return frozenset()
    return frozenset(set.intersection(*sets))


def _names_goal(action: Action, goal: set[str]) -> bool:
    return bool(goal & set(words(action_label(action.tool, action.args))))


class GoalWordPolicy:
    """Random valid actions, except that when listed actions name a word of the goal, one of them is
    taken with probability ``greed``: the habit of a small language-model agent (it acts on what the
    goal names when it sees it), with no model and nothing known of the environment."""

    def __init__(self, seed: int = 0, *, greed: float = 0.5, max_turns: int | None = None) -> None:
        self.seed = seed
        self.greed = greed
        self.max_turns = max_turns

    def run(self, env: Environment, task: Task) -> Trajectory:
        rng = random.Random(f"goal-word-policy/{self.seed}/{task.id}")
        fallback = _random_chooser(env, rng)
        goal = goal_words(env.format_goal(task))
        assert isinstance(env, EnumeratesActions)  # _random_chooser checked it

        def choose(obs: dict[str, Any]) -> Action | None:
            named = [a for a in env.candidate_actions(obs) if _names_goal(a, goal)]
            return rng.choice(named) if named and rng.random() < self.greed else fallback(obs)

        return play_policy(env, task, choose, "goal-word", self.max_turns)


class GoalAversePolicy:
    """Random valid actions, never one that names a word of the goal (while any other is listed): a
    collection that fails, as a small agent's does in a world too big for it — it walks, sees and
    learns the place, but does not do what the goal asks. ``form``: goal words it may name (the task's
    form, ``form_words`` of the collection's goals): a small agent picks up *other* things on its way
    ("take coin" when sent for the lamp), which is how it learns what taking looks like."""

    def __init__(
        self, seed: int = 0, *, max_turns: int | None = None, form: frozenset[str] = frozenset()
    ) -> None:
        self.seed = seed
        self.max_turns = max_turns
        self.form = form

    def run(self, env: Environment, task: Task) -> Trajectory:
        rng = random.Random(f"goal-averse-policy/{self.seed}/{task.id}")
        fallback = _random_chooser(env, rng)
        goal = goal_words(env.format_goal(task)) - self.form
        assert isinstance(env, EnumeratesActions)  # _random_chooser checked it

        def choose(obs: dict[str, Any]) -> Action | None:
            other = [a for a in env.candidate_actions(obs) if not _names_goal(a, goal)]
            return rng.choice(other) if other else fallback(obs)

        return play_policy(env, task, choose, "goal-averse", self.max_turns)


class ExplorerPolicy:
    """The environment's registered explorer, else random valid actions (see the module docstring)."""

    def __init__(self, seed: int = 0, *, use_gold: bool = False, max_turns: int | None = None) -> None:
        self.seed = seed
        self.use_gold = use_gold
        self.max_turns = max_turns

    def run(self, env: Environment, task: Task) -> Trajectory:
        rng = random.Random(f"explorer-policy/{self.seed}/{task.id}")
        explorer = spec_of(env).explorer
        choose: Callable[[dict[str, Any]], Action | None]
        if explorer is not None:
            planner: Planner = explorer(env, task, rng)
            choose = planner.next_action
            name = "explorer"
        else:
            choose = _random_chooser(env, random.Random(f"random-policy/{self.seed}/{task.id}"))
            name = "random"
        if self.use_gold:
            choose = _GoldReplay(env, choose).next_action
            name = "gold"
        return play_policy(env, task, choose, name, self.max_turns)


class LoggedWalk:
    """The actions a task agent took in each task, from its logged episodes (``{task id: [action, ...]}``
    in the agent's own words): replayed, so a memory learns from the games that agent actually played.
    A logged action the state does not list (a reply the environment refused) is skipped; a task with
    no log ends at once."""

    def __init__(self, logged: Mapping[str, Sequence[str]], *, max_turns: int | None = None) -> None:
        self.logged = logged
        self.max_turns = max_turns

    def run(self, env: Environment, task: Task) -> Trajectory:
        todo = list(self.logged.get(task.id, ()))
        if not isinstance(env, EnumeratesActions):
            raise EnvError(f"environment {env.name!r} does not list its actions: a logged walk cannot replay")

        def choose(obs: dict[str, Any]) -> Action | None:
            listed = {action_label(a.tool, a.args): a for a in env.candidate_actions(obs)}
            while todo:
                action = listed.get(todo.pop(0))
                if action is not None:
                    return action
            return None

        return play_policy(env, task, choose, "logged", self.max_turns)


# The walks a probe's collection can be played with, by name (``asmoke_run(walks=...)``).
WALKS: dict[str, Callable[[int], GoalWordPolicy | RandomPolicy | GoalAversePolicy]] = {
    "goal_words": GoalWordPolicy,
    "random": RandomPolicy,
    "goal_averse": GoalAversePolicy,
}

__all__ = [
    "WALKS",
    "ExplorerPolicy",
    "GoalAversePolicy",
    "GoalWordPolicy",
    "LoggedWalk",
    "Planner",
    "RandomPolicy",
    "form_words",
    "goal_words",
    "play_policy",
]
