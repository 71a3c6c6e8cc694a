"""Advice probe: play a task doing exactly what a design's advice says, with no LLM.

At each step the probe takes the listed action that the task agent's own advice matcher
(``atlas.agent.advice_match.advice_now``) ranks first for the current observation, with the
agent's loop guard; it stops when the advice names no listed action. The task agent adds the same
match to its model's scores, so advice the probe can follow to success is advice the agent can
use, and advice that stops the probe at step 1 only reaches the agent as prose. A smoke run shows
the outcome to the MetaAgent: a cheap check of what recall() returns, before any LLM episode is
paid for (the first stage of the evaluation cascade).
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from atlas.agent import choice as ch
from atlas.agent.advice_match import advice_now
from atlas.agent.loops import Advances, Guard
from atlas.alma.state.highest import highest_score
from atlas.core.types import Task, Trajectory
from atlas.envs.base import action_text, without_commands, words
from atlas.envs.policies import GoalWordPolicy, RandomPolicy, goal_words, play_policy
from atlas.protocols.env import Action, EnumeratesActions, Environment

MAX_LISTED = 8  # actions named in a stop reason
# How often an advised walk (``advised_walk``) takes the action the advice names. Measured: the 0.5B task
# agent took the action the advice matcher ranked first at 1,620 of the 1,832 turns the advice named one
# (0.88; per design 0.50 to 1.00; 8 designs on GraphWorld, TextWorld fetch, the depot and workbench
# plug-ins; ``scripts/advice_adherence.py``). Half, the guess before, let walks explore more than the
# agent does; on the demo's tasks 0.9 also widens the probe's gap between the genomes that beat no memory
# and those that did not (0.37 vs 0.16 at most, from 0.37 vs 0.31).
ADHERENCE = 0.9


@dataclass
class ProbeResult:
    """One probe episode. ``stopped``: why it ended before the task did ("" when the task ended)."""

    success: bool
    score: float
    steps: int
    stopped: str = ""
    actions: list[str] = field(default_factory=list)
    progress: float = 0.0  # see episode_progress
    reached: float = 0.0  # the highest score the episode reached (0 where it never rose)
    # the score the advice handed to the probe's own rule (above the score at reset; 0 if the rule never
    # chose): what the advice alone did, kept where the rule then lost it (ScienceWorld scores a wrong
    # "focus on" 0)
    advised_score: float = 0.0
    unadvised: int = 0  # steps the advice named nothing for and the probe's own rule chose (``unadvised``)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ProbeResult:
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})

    def line(self, label: str) -> str:
        if self.success:
            return f"{label}: solved in {self.steps} steps ({', '.join(self.actions[:12])})"
        how = self.stopped or f"the task ended unsolved after {self.steps} steps"
        return f"{label}: not solved; {how}"


def _listed(labels: list[str]) -> str:
    extra = f", ... ({len(labels)} in all)" if len(labels) > MAX_LISTED else ""
    return ", ".join(labels[:MAX_LISTED]) + extra


_SENTENCE = re.compile(r"[.;!?\n]+")


def _framed(goal: set[str], text: str) -> set[tuple[str, str]]:
    """(goal word, the first word of the sentence it is in) for each goal word ``text`` shows."""
    out = set()
    for sentence in _SENTENCE.split(without_commands(text)):
        tokens = words(sentence)
        out |= {(w, tokens[0]) for w in goal.intersection(tokens)}
    return out


def episode_progress(goal: str, texts: list[str], best_score: float) -> float:
    """How far an unsolved episode got: the environment's own partial score (the best it reached) where
    it gives one, else what its text shows of the goal (``goal_progress``)."""
    return min(1.0, best_score) if best_score > 0 else goal_progress(goal, texts)


def progress_of(played: dict[str, Any], partial: bool) -> float:
    """A probe episode's progress (a ``ProbeResult`` as a dict), decided per environment: where it gives a
    partial score (``partial``, see ``state.highest.gives_partial_score``), the highest score the episode
    reached, so an episode that rose nowhere counts 0 however many goal words it showed; else
    ``episode_progress``. Per episode instead, an episode that rose to 0.2 could rank below one that only
    named the goal's things (0.2 against up to 1.0 of goal words)."""
    if played.get("success"):
        return 1.0
    return min(1.0, float(played.get("reached", 0.0))) if partial else float(played.get("progress", 0.0))


def walks_rise(env: Environment, tasks: Sequence[Task], seeds: Sequence[int] = range(4)) -> bool:
    """Whether walks with no model (random, and ``GoalWordPolicy``'s: half the time an action naming a
    goal word) raise the score of one of ``tasks`` without solving it: the environment gives a partial
    score. What a search asks where nothing the task agent played rose (``gives_partial_score``).
    On 3 tasks each: they rose on ScienceWorld (15 s), on the held-out ``bureau`` for 3 of 3 families and
    ``greenhouse`` for 2 of 3; never on GraphWorld or the ALFWorld-style households, which have none."""
    if not can_probe(env):
        return False
    play = env.clone()
    for seed in seeds:
        for policy in (RandomPolicy(seed), GoalWordPolicy(seed)):
            for task in tasks:
                walk = policy.run(play, task)
                if not walk.success and (highest_score(walk) or 0.0) > 0:
                    return True
    return False


def unscored_progress(results: Sequence[tuple[bool, float]], at_least: int = 6) -> str:
    """What the probe may not be able to measure, when none of the unsolved episodes in ``results``
    (``(success, score)`` of no memory's episodes) ended with a score above 0: an environment without a
    partial score leaves the probe only the goal's words to read progress from. Only "may": a partial
    score can fall back to 0 by the episode's end (ScienceWorld's does when a task fails)."""
    unsolved = [score for success, score in results if not success]
    if len(unsolved) < at_least or any(score > 0 for score in unsolved):
        return ""
    return (
        f"; none of no memory's {len(unsolved)} unsolved episodes ended with a score above 0: if this "
        "environment gives no partial score, the probe reads progress only from the goal's words in the texts "
        "(a score() that rises with each sub-goal lets the screening climb towards a solved task)"
    )


def goal_progress(goal: str, texts: list[str]) -> float:
    """How far an unsolved episode got, read from nothing but its text: the (goal word, sentence frame)
    pairs its later observations show that the first did not (the goal's item seen, then held; its
    place listed beside, then reached), over two per goal word that any observation names. Goal words
    no observation names (the task's verb) do not count; 0 when none is named."""
    if not texts:
        return 0.0
    wanted = goal_words(goal)
    first = _framed(wanted, texts[0])
    later: set[tuple[str, str]] = set()
    for text in texts[1:]:
        later |= _framed(wanted, text)
    named = {w for w, _ in first | later}
    return min(1.0, len(later - first) / (2 * len(named))) if named else 0.0


def goal_named(goal: str, labels: list[str]) -> dict[str, float]:
    """``{label: 1.0}`` for the listed action that names most of the goal's words (the first of a tie),
    or nothing when none names any."""
    wanted = goal_words(goal)
    count = {label: len(wanted & set(words(label))) for label in labels}
    best = max(count.values(), default=0)
    return {next(label for label in labels if count[label] == best): 1.0} if best else {}


def _split(matched: dict[str, float]) -> tuple[dict[str, float], set[str]]:
    """The advised actions (a positive match) and the lowered ones (an avoid line's penalty outweighs any
    advice for them)."""
    return {lb: v for lb, v in matched.items() if v > 0}, {lb for lb, v in matched.items() if v <= 0}


def advised_walk(env: Environment, task: Task, advice: str, seed: int = 0) -> Trajectory:
    """A collection episode as a small agent plays it with a design's advice, with no model: the action the
    advice names for what is seen ``ADHERENCE`` of the time, otherwise a ``GoalWordPolicy`` step (random,
    but half the time an action naming a goal word when one is listed). Memory that guides its own
    collection (a walk that explores, a route) gathers more than memory that only speaks once it knows."""
    if not isinstance(env, EnumeratesActions):
        raise TypeError(f"{env.name} does not list its actions: an advised walk cannot play it")
    rng = random.Random(f"advised-walk/{seed}/{task.id}")
    goal = env.format_goal(task)
    wanted = goal_words(goal)
    chosen: list[str] = []

    def choose(obs: dict[str, Any]) -> Action | None:
        actions = env.candidate_actions(obs)
        if not actions:
            return None
        labels = ch.labels(actions)
        follow = rng.random() < ADHERENCE  # drawn every step: with no advice, the same walk as ignoring it
        advised, lowered = _split(
            advice_now(advice, env.summarize_observation(obs), labels, done=chosen, goal=goal)[0]
        )
        if advised and follow:
            label = max(advised, key=lambda lb: advised[lb])
        else:  # what the advice says to avoid, the agent's scores lower: a walk takes it only if nothing else is listed
            free = [lb for lb in labels if lb not in lowered] or labels
            named = [lb for lb in free if wanted & set(words(lb))]
            label = rng.choice(named) if named and rng.random() < 0.5 else rng.choice(free)
        chosen.append(label)
        return actions[labels.index(label)]

    return play_policy(env, task, choose, "advised", None)


def can_probe(env: Environment) -> bool:
    """Whether the probe can play ``env``: it lists its actions (``EnumeratesActions``)."""
    return isinstance(env, EnumeratesActions)


def follow_advice(
    env: Environment, task: Task, advice: str, max_steps: int | None = None, *, unadvised: str = "stop"
) -> ProbeResult:
    """Play ``task`` on ``env`` taking, at each step, the action ``advice`` names for what is seen
    (see the module docstring). ``env`` must list its actions (``EnumeratesActions``).
    ``unadvised``: what to do where no advice line names a listed action — ``stop`` (the advice alone
    is measured), or ``goal_words``: take the listed action that names most of the goal's words, as a
    task agent does unadvised when the thing its goal names is in reach, and stop only if none does."""
    if unadvised not in ("stop", "goal_words"):
        raise ValueError(f"unadvised must be 'stop' or 'goal_words', got {unadvised!r}")
    if not isinstance(env, EnumeratesActions):
        raise TypeError(f"{env.name} does not list its actions: the advice probe cannot play it")
    limit = max_steps if max_steps is not None else env.max_steps
    obs = env.reset(task)
    start = float(env.score())
    seen = env.summarize_observation(obs)
    texts = [seen]
    goal = env.format_goal(task)
    chosen: list[str] = []
    guard = Guard(obs)
    advances = Advances(start)
    done = False
    fallbacks = 0
    best = 0.0  # the best score the episode reached (partial progress, where the environment scores it)
    handed = 0.0  # the score when the probe's own rule first chose a step (``advised_score``)
    while not done and len(chosen) < limit:
        actions: list[Action] = env.candidate_actions(obs)
        labels = ch.labels(actions)
        if not labels:
            break
        action_texts = {lb: action_text(a.tool, a.args) for lb, a in zip(labels, actions, strict=True)}
        open_ = guard.open(obs, action_texts)
        advised, lowered = _split(advice_now(advice, seen, open_, chosen, goal, advances.actions)[0])
        if not advised and unadvised == "goal_words":
            advised = goal_named(goal, [lb for lb in open_ if lb not in lowered])
            if advised and not fallbacks and (now := float(env.score())) > start:
                handed = now
            fallbacks += bool(advised)
        if not advised:
            where = " ".join(seen.split())[:160]
            return ProbeResult(
                success=False,
                score=float(env.score()),  # a partial score where the environment gives one
                steps=len(chosen),
                stopped=f"at step {len(chosen) + 1} no advice line names a listed action for what the agent "
                f"sees ({where!r}; listed: {_listed(labels)})",
                actions=chosen,
                progress=episode_progress(goal, texts, best),
                reached=best,
                advised_score=handed,
                unadvised=fallbacks,
            )
        label = max(advised, key=lambda lb: advised[lb])
        action = actions[labels.index(label)]
        result = env.step(action)
        chosen.append(label)
        guard.after(action_texts[label], obs, result)
        obs, done = result.observation, result.done
        advances.after(label, float(env.score()))
        best = max(best, advances.score)
        seen = env.summarize_observation(obs)
        texts.append(seen)
        if result.error:
            seen = f"Error: {result.error}\n{seen}"
    success = bool(env.success())
    stopped = "" if done or success else f"it ran out of its {limit} steps"
    return ProbeResult(
        success=success,
        score=float(env.score()),
        steps=len(chosen),
        stopped=stopped,
        actions=chosen,
        progress=1.0 if success else episode_progress(goal, texts, best),
        reached=best,
        advised_score=handed,
        unadvised=fallbacks,
    )


__all__ = [
    "ADHERENCE",
    "ProbeResult",
    "advised_walk",
    "can_probe",
    "episode_progress",
    "follow_advice",
    "goal_progress",
    "progress_of",
    "unscored_progress",
    "walks_rise",
]
