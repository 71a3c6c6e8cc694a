"""Did the agent follow the advice? Compares a design's advice with the actions the agent then took.

Domain-blind: an action is its canonical text ``tool(arg="value", …)``; it *follows* the advice when
every argument value it names appears in the advice text. A *departure* is an action that does not,
shown with the advice line about where the agent was (the line naming the previous action's
argument), e.g. ``D2 step 3: advised "In room_C: move_to room_D" after move_to room_C; agent did
move_to room_B`` (actions shown as the agent's action list writes them, the form advice must use).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from atlas.core.safetext import safe_text

_CALL = re.compile(r"^\s*(\w+)\((.*)\)\s*$", re.DOTALL)
_ARG = re.compile(r'\w+=("(?:[^"\\]|\\.)*"|[^,]+)')
SNIPPET = 120  # characters of advice quoted in one line


def action_values(action: str) -> list[str]:
    """The argument values of an action text (``move_to(room="room_B")`` → ``["room_B"]``)."""
    m = _CALL.match(action or "")
    if not m:
        return []
    out = []
    for raw in _ARG.findall(m.group(2)):
        try:
            value = json.loads(raw)
        except ValueError:
            value = raw.strip()
        out.append(str(value))
    return [v for v in out if v.strip()]


def listed_text(action: str) -> str:
    """An action text as the agent's action list writes it (``move_to(room="room_B")`` →
    ``move_to room_B``; a lone ``act`` command alone); text that is not a call is kept."""
    m = _CALL.match(action or "")
    if not m:
        return action
    values = action_values(action)
    tool = m.group(1)
    return values[0] if tool == "act" and len(values) == 1 else " ".join([tool, *values])


def follows(action: str, advice: str) -> bool | None:
    """True when every argument value of ``action`` is in ``advice``; None for an action without
    arguments (it says nothing about the advice)."""
    values = action_values(action)
    if not values:
        return None
    low = advice.lower()
    return all(v.lower() in low for v in values)


@dataclass(frozen=True)
class Departure:
    """The first action that did not follow the advice, with the advice about that moment."""

    label: str
    step: int  # 1-based
    after: str | None  # the previous action (where the agent was), None at the start
    advised: str  # the advice line about that moment (or its first line)
    did: str
    error: str | None = None

    def line(self) -> str:
        where = f" after {listed_text(self.after)}" if self.after else " at the start"
        err = f" (error: {_one_line(self.error, 80)})" if self.error else ""
        did = listed_text(self.did)
        return f'{self.label} step {self.step}: advised "{self.advised}"{where}; agent did {did}{err}'


@dataclass(frozen=True)
class AdviceUse:
    """How one episode used its advice."""

    actions_with_args: int
    followed: int
    departure: Departure | None

    def text(self) -> str:
        if not self.actions_with_args:
            return "no actions with arguments to compare with the advice"
        out = f"followed the advice on {self.followed} of {self.actions_with_args} actions"
        if self.departure is not None:
            out += f"; first departure: {self.departure.line()}"
        return out


def advice_use(episode: dict[str, Any]) -> AdviceUse | None:
    """Compare ``episode`` (an ``EpisodeRecord`` dict) with its advice; None when it had no advice."""
    advice = str(episode.get("advice") or "")
    if not advice.strip():
        return None
    actions = [a for a in episode.get("actions") or [] if isinstance(a, dict)]
    counted = followed = 0
    departure: Departure | None = None
    for i, a in enumerate(actions):
        verdict = follows(str(a.get("action", "")), advice)
        if verdict is None:
            continue
        counted += 1
        followed += int(verdict)
        if not verdict and departure is None:
            after = _previous(actions, i)
            departure = Departure(
                label=str(episode.get("label", "?")),
                step=i + 1,
                after=after,
                advised=advised_line(advice, after),
                did=str(a.get("action", "")),
                error=a.get("error"),
            )
    return AdviceUse(counted, followed, departure)


def _previous(actions: list[dict[str, Any]], i: int) -> str | None:
    """The last successful action with arguments before step ``i`` (where the agent was)."""
    for a in reversed(actions[:i]):
        if not a.get("error") and action_values(str(a.get("action", ""))):
            return str(a["action"])
    return None


def advised_line(advice: str, after: str | None) -> str:
    """The advice line that names the previous action's argument (what the advice said about that
    moment), else the first non-empty line; clipped."""
    lines = [ln.strip() for ln in advice.splitlines() if ln.strip()]
    if after:
        for value in action_values(after):
            # Of the lines naming the value, the one where it comes earliest (relative to the line's
            # length): "In X: do Y" is about X; "exits: W, X" merely lists it.
            hits = [ln for ln in lines if value.lower() in ln.lower()]
            if hits:
                ln = min(hits, key=lambda h: h.lower().find(value.lower()) / len(h))
                pos = ln.lower().find(value.lower())
                return _one_line(ln[max(0, pos - 20) :] if len(ln) > SNIPPET else ln, SNIPPET)
    return _one_line(lines[0] if lines else advice, SNIPPET)


def _one_line(text: str, limit: int) -> str:
    s = " ".join(str(text).split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def departure_lines(episodes: list[dict[str, Any]], limit: int = 4) -> list[str]:
    """Evidence lines (failed episodes first): what a design advised against what the agent then did."""
    ranked = sorted(episodes, key=lambda e: (bool(e.get("success")), float(e.get("score") or 0.0)))
    out: list[str] = []
    for ep in ranked:
        use = advice_use(ep)
        if use is not None and use.departure is not None:
            out.append(safe_text(use.departure.line()))  # design-written advice: no escape sequences
        if len(out) >= limit:
            break
    return out


__all__ = [
    "AdviceUse",
    "Departure",
    "action_values",
    "advice_use",
    "advised_line",
    "departure_lines",
    "follows",
]
