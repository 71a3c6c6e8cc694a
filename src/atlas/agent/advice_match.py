"""Which listed actions the memory's advice recommends *now*: a lexical match of advice lines
against the current observation.

Why: a 0.5B–1.5B model given "In room_D carrying the scroll: move_to room_B" chooses the advised
action in about half the situations (measured: teacher-forced decision accuracy 0.45 for the
0.5B model with the full answer in its notes), however the notes are framed. It can copy; it
cannot reliably match a situation to a rule. This module does the matching: each advice line
that names a listed action is a rule, the rest of the line is its condition, and the lines whose
condition best matches the observation (words and adjacent word pairs, earlier observation words
weighing a little more) lend their actions a bonus that the agent adds to the model's scores.
Advice that names no listed action, or whose conditions match nothing, changes nothing; without
advice the agent is unchanged. How well a design's advice can be used thus depends on it being
written as "<situation in the observation's words>: <action as listed>" — which the design
contract tells the MetaAgent.
"""

from __future__ import annotations

import itertools
import math
import re
from typing import NamedTuple

from atlas.envs.base import words as _tokens
from atlas.envs.policies import goal_words

_COMMON = frozenset(
    {
        "a",
        "an",
        "the",
        "to",
        "in",
        "on",
        "of",
        "and",
        "or",
        "at",
        "is",
        "are",
        "am",
        "you",
        "your",
        "it",
        "its",
        "this",
        "that",
        "with",
        "for",
        "from",
        "then",
        "as",
        "be",
        "by",
        "do",
        "does",
        "not",
        "if",
        "into",
        "now",
        "when",
        "while",
        "there",
        "here's",
        "i",
    }
)


def _content(tokens: list[str]) -> list[str]:
    return [t for t in tokens if t not in _COMMON]


# A rule applies only when at least this share of its condition holds: "In room_C when you carry the
# scroll" does not apply to room_C with empty hands (it would pull a searching agent to the goal room).
MIN_MATCH = 0.5

_SENTENCE = re.compile(r"[.!?;\n]+(?:\s|$)")


def _features(text: str) -> set[object]:
    """Content words and unordered pairs of neighbouring content words within a sentence
    ("carry nothing" ≠ "carry scroll")."""
    features: set[object] = set()
    for sentence in _SENTENCE.split(text):
        words = _content(_tokens(sentence))
        features.update(words)
        features.update(frozenset(p) for p in itertools.pairwise(words) if p[0] != p[1])
    return features


def advice_lines(advice: str) -> list[str]:
    """The advice's lines (a one-line advice is cut into its sentences)."""
    lines = [line.strip(" -*\t") for line in advice.splitlines() if line.strip(" -*\t")]
    if len(lines) == 1:
        lines = [s.strip() for s in re.split(r"(?<=[.!?;])\s+", lines[0]) if s.strip()]
    return lines


def _phrase(text: str) -> str:
    """Tokens joined by single spaces, padded: a label is named where its phrase occurs whole."""
    return " " + " ".join(_tokens(text)) + " "


def _is_plan(steps: list[str]) -> bool:
    """A plan is a list of short commands (two thirds of its steps six words or fewer), not a few long rules."""
    return len(steps) >= 2 and sum(len(_tokens(step)) <= 6 for step in steps) * 3 >= len(steps) * 2


_FAILED = frozenset({"fail", "failed", "failure", "avoid"})


def _plans(advice: str) -> list[tuple[list[str], str]]:
    """``(steps, line)`` for each plan in the advice: every line that lists three or more short steps
    separated by commas or semicolons ("Search plan: move_to room_B, move_to room_D, move_to room_C."),
    else the whole advice when its lines are a plan (a walkthrough, one command per line). A line that is
    a plan itself is never one step of another: short rules above a search plan ("candle: take candle.")
    made the advice look like a plan whose last step named every move of the search at once."""
    lines = advice_lines(advice)
    out = []
    for before, line in zip(["", *lines], lines, strict=False):
        if _FAILED & set(_tokens(before + " " + line)):
            continue  # a failed attempt's moves ("Outcome: failure / Actions: ...") are not a plan to follow
        steps = [part.strip() for part in re.split(r"[;,]", line) if part.strip()]
        if len(steps) >= 3 and _is_plan(steps):
            out.append((steps, line))
    if not out and _is_plan(lines):
        return [(lines, "")]
    return out


def _plan_step(advice: str, done: list[str], labels: list[str]) -> tuple[str, str] | None:
    """The next step of the advice's plan (an ordered list of actions, e.g. a walkthrough) and its text: the first listed action named after the last step already done, found by
    walking the done actions through the plan."""
    for steps, _line in _plans(advice):
        at = 0
        for action in done:
            phrase = _phrase(action)
            at = next((j + 1 for j in range(at, len(steps)) if phrase in _phrase(steps[j])), at)
        for step in steps[at:]:
            text = _phrase(step)
            named = [label for label in labels if _tokens(label) and _phrase(label) in text]
            if named:  # the longest: 'take key 2' names 'take key' too
                return max(named, key=lambda label: len(_tokens(label))), step
    return None


def _search_yields(advice: str, goal: str, labels: list[str]) -> bool:
    """Whether the advice's plans are a search (no step names a word of the goal) and a listed action
    names one: the thing the goal names is in reach, so the search's next move would walk away from
    it. A plan that acts on the goal itself (a walkthrough, a replayed success) never yields."""
    wanted = goal_words(goal)
    if any(wanted & set(_tokens(step)) for plan, _ in _plans(advice) for step in plan):
        return False
    return any(wanted & set(_tokens(label)) for label in labels)


def next_planned(advice: str, done: list[str], labels: list[str]) -> dict[str, float]:
    """``{label: 1.0}`` for the next planned step of a plan-shaped advice (see ``_plan_step``)."""
    step = _plan_step(advice, done, labels)
    return {step[0]: 1.0} if step else {}


class Match(NamedTuple):
    """What the advice says for now: ``actions`` (``{label: match}``), the ``lines`` that say it, and
    whether a search plan ``yielded`` (its next step would lead away from a listed action naming the
    goal: see ``match_advice``)."""

    actions: dict[str, float]
    lines: list[str]
    yielded: bool = False


def advice_now(
    advice: str, observation: str, labels: list[str], done: list[str] | None = None, goal: str = ""
) -> tuple[dict[str, float], list[str]]:
    """``({label: match}, lines)``: see ``match_advice``."""
    match = match_advice(advice, observation, labels, done, goal)
    return match.actions, match.lines


def match_advice(
    advice: str, observation: str, labels: list[str], done: list[str] | None = None, goal: str = ""
) -> Match:
    """The listed actions named by the advice lines whose condition best
    matches ``observation`` (match in [MIN_MATCH, 1]; only the best-matching lines count, ties all do),
    and those lines. When no line's condition holds by at least ``MIN_MATCH``, the advice is read as a
    plan: the next planned step after the actions ``done`` so far — unless the plan is a search (none of
    its steps names a word of ``goal``) and a listed action names one (a search does not pull the agent
    away from what its goal names: the match says it ``yielded``, and the agent chooses there as it
    would without advice). Empty when the advice names no listed action."""
    if not advice.strip() or not labels:
        return Match({}, [])
    seen = _content(_tokens(observation))
    first: dict[str, int] = {}
    for i, word in enumerate(seen):
        first.setdefault(word, i)
    weight: dict[object, float] = {w: 1.0 - 0.25 * i / max(len(seen), 1) for w, i in first.items()}
    weight.update({f: 1.0 for f in _features(observation) if isinstance(f, frozenset)})
    phrases = {label: _phrase(label) for label in labels if _tokens(label)}
    rules: list[tuple[str, list[str], float]] = []
    for line in advice_lines(advice):
        text = _phrase(line)
        hits = [label for label, p in phrases.items() if p in text]
        if not hits:
            continue
        condition_text = line
        for label in hits:  # the condition is the line without the actions it names
            condition_text = re.sub(
                r"(?<![\w])" + r"\W+".join(map(re.escape, _tokens(label))) + r"(?![\w])",
                " ",
                condition_text,
                flags=re.IGNORECASE,
            )
        condition = _features(condition_text)
        if condition:
            # fsum: exactly rounded, so the order of the set (which changes per process with string
            # hashing) cannot change the last digits, which go into the model call's cache key
            rules.append((line, hits, math.fsum(weight.get(f, 0.0) for f in condition) / len(condition)))
    best = max((m for _, _, m in rules), default=0.0)
    if best < MIN_MATCH:
        step = _plan_step(advice, done or [], labels)
        if step is None:
            return Match({}, [])
        if goal and _search_yields(advice, goal, labels):
            return Match({}, [], yielded=True)
        return Match({step[0]: 1.0}, [step[1]])
    named: dict[str, float] = {}
    lines: list[str] = []
    for line, hits, match in rules:
        if match >= best - 1e-9:
            lines.append(line)
            for label in hits:
                named[label] = match
    return Match(named, lines)


def advised_actions(
    advice: str, observation: str, labels: list[str], done: list[str] | None = None, goal: str = ""
) -> dict[str, float]:
    """The actions part of ``advice_now``."""
    return advice_now(advice, observation, labels, done, goal)[0]


__all__ = [
    "MIN_MATCH",
    "Match",
    "advice_lines",
    "advice_now",
    "advised_actions",
    "match_advice",
    "next_planned",
]
