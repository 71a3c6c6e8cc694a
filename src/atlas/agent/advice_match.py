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
import re

_TOKEN = re.compile(r"[a-z0-9_]+")
_COMMON = frozenset({
    "a", "an", "the", "to", "in", "on", "of", "and", "or", "at", "is", "are", "am", "you", "your", "it", "its",
    "this", "that", "with", "for", "from", "then", "as", "be", "by", "do", "does", "not", "if", "into", "now",
    "when", "while", "there", "here's", "i",
})


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def _content(tokens: list[str]) -> list[str]:
    return [t for t in tokens if t not in _COMMON]


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


def next_planned(advice: str, done: list[str], labels: list[str]) -> dict[str, float]:
    """Advice that is a plan (an ordered list of actions, e.g. a walkthrough): the first listed action
    named after the last step already done, found by walking the done actions through the plan.
    Advice counts as a plan when at least two thirds of its lines are short (six words or fewer)."""
    steps = advice_lines(advice)
    if len(steps) < 2 or sum(len(_tokens(step)) <= 6 for step in steps) * 3 < len(steps) * 2:
        return {}  # a plan is a list of short commands, not a few long rules
    at = 0
    for action in done:
        phrase = _phrase(action)
        at = next((j + 1 for j in range(at, len(steps)) if phrase in _phrase(steps[j])), at)
    for step in steps[at:]:
        text = _phrase(step)
        named = [label for label in labels if _tokens(label) and _phrase(label) in text]
        if named:
            return {named[0]: 1.0}
    return {}


def advised_actions(advice: str, observation: str, labels: list[str], done: list[str] | None = None) -> dict[str, float]:
    """``{label: match}`` for the listed actions named by the advice lines whose condition best
    matches ``observation`` (match in (0, 1]; only the best-matching lines count, ties all do).
    When no line's condition matches at all, the advice is read as a plan: the next planned step
    after the actions ``done`` so far (``next_planned``). Empty when the advice names no listed
    action."""
    if not advice.strip() or not labels:
        return {}
    seen = _content(_tokens(observation))
    first: dict[str, int] = {}
    for i, word in enumerate(seen):
        first.setdefault(word, i)
    weight: dict[object, float] = {w: 1.0 - 0.25 * i / max(len(seen), 1) for w, i in first.items()}
    weight.update({f: 1.0 for f in _features(observation) if isinstance(f, frozenset)})
    phrases = {label: _phrase(label) for label in labels if _tokens(label)}
    named: dict[str, float] = {}
    for line in advice_lines(advice):
        text = _phrase(line)
        hits = [label for label, p in phrases.items() if p in text]
        if not hits:
            continue
        condition_text = line
        for label in hits:  # the condition is the line without the actions it names
            condition_text = re.sub(r"(?<![\w])" + r"\W+".join(map(re.escape, _tokens(label))) + r"(?![\w])", " ",
                                    condition_text, flags=re.IGNORECASE)
        condition = _features(condition_text)
        if not condition:
            continue
        match = sum(weight.get(f, 0.0) for f in condition) / len(condition)
        for label in hits:
            named[label] = max(named.get(label, 0.0), match)
    best = max(named.values(), default=0.0)
    if best <= 0:
        return next_planned(advice, done or [], labels)
    return {label: m for label, m in named.items() if m >= best - 1e-9}


__all__ = ["advice_lines", "advised_actions", "next_planned"]
