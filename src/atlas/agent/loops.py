"""Loop detection for the task agent: small models repeat a failed action or bounce between two
actions forever, and with greedy decoding the same prompt gives the same mistake every turn.

``loop_nudge`` looks at the actions taken so far and the one just proposed, and returns a short
note for the model when the proposal would continue a loop (None otherwise). It knows nothing of
any environment: it compares canonical action texts and whether each one worked. A step did not
work when the environment refused it (an error) or when it changed nothing (``changed_nothing``): a
small model otherwise waits, stirs or looks twice in a row where the second try can only repeat the
first.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import Any

from atlas.agent.advice_match import blind_action

Past = list[tuple[str, bool]]  # (canonical action text, whether it did not work)
WINDOW = 6  # turns within which a repeat goes round a cycle
# Times an action may be taken from one state before a choice taken fewer times from there goes first: a
# walk round four rooms (east, south, north, west) is never three repeats within six turns, and the 0.5B
# went round one for 30 steps while the way on from the third room was never taken.
HERE = 2
_ENDS = (".", "!", "?")
_CALL = re.compile(r"^(\w+)\((.*)\)$", re.DOTALL)
_ARGUMENT = re.compile(r'="((?:[^"\\]|\\.)*)"')


def _short(value: Any) -> bool:
    return isinstance(value, str) and 0 < len(value.split()) <= 3 and not value.rstrip().endswith(_ENDS)


def state_of(observation: Any) -> dict[str, Any]:
    """What an observation says of the world apart from the step's reply: its short text fields (three
    words at most, not a sentence: a place, a temperature, a colour), its lists (what is carried, what is
    here) and the short fields of its dicts (what each station holds). Numbers are kept too; sentences
    (the reply, a description) are not."""
    if not isinstance(observation, dict):
        return {}
    out: dict[str, Any] = {}
    for key, value in observation.items():
        if isinstance(value, list | tuple | int | float) or _short(value):
            out[key] = value
        elif isinstance(value, dict) and (inner := {k: v for k, v in value.items() if _short(v)}):
            out[key] = inner
    return out


def changed_nothing(before: Any, after: Any, counters: Collection[str] | None = None) -> bool:
    """Whether a step left every short field and list of the observation as it was, and moved no number
    but a counter's, by one: those named in ``counters`` (``Ticking``), or any number where ``counters``
    is None. False when the observation has no such field: then only the reply could tell, and replies
    differ in every environment."""
    old, new = state_of(before), state_of(after)
    if not any(isinstance(v, str | list | tuple | dict) for v in new.values()) or old.keys() != new.keys():
        return False
    for key, value in new.items():
        was = old[key]
        if not (_number(value) and _number(was)):
            if value != was:
                return False
        elif value != was and (abs(value - was) != 1 or (counters is not None and key not in counters)):
            return False
    return True


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


class Ticking:
    """The numbers of an observation that moved by one at every step of the episode so far: a step
    counter, the steps left. A reading that held still at one step (a gauge a valve moves) is not one,
    so its moving by one later is a change."""

    def __init__(self) -> None:
        self.keys: set[str] | None = None

    def after(self, before: Any, after: Any) -> set[str]:
        """The counters once the step from ``before`` to ``after`` is seen."""
        old, new = state_of(before), state_of(after)
        moved = {k for k, v in new.items() if _number(v) and _number(old.get(k)) and abs(v - old[k]) == 1}
        self.keys = moved if self.keys is None else self.keys & moved
        return self.keys


def outcome(action: str, before: Any, result: Any, ticking: Ticking | None = None) -> tuple[str, bool]:
    """One step as ``Past`` records it: the action's text and whether it did not work (the environment
    refused it, or it changed nothing: the episode's ``ticking`` tells its counters from its readings).
    ``result`` is the step's ``StepResult``."""
    counters = ticking.after(before, result.observation) if ticking is not None else None
    return action, bool(result.error) or changed_nothing(before, result.observation, counters)


class Advances:
    """The actions whose step raised the environment's score and whose rise still holds, in the order
    taken: tries that did their work (``TRY_ONCE`` in ``atlas.agent.advice_match``). A fall undoes the
    rise of the action taken again, else of the latest one on the same thing (its numbers aside: a knob
    turned elsewhere), else the last one's (which may then be taken again to redo it).
    ``after`` is told each step's action and the score after it (None where the environment gave none)."""

    def __init__(self, start: float) -> None:
        self.score = start
        self.actions: list[str] = []

    def after(self, action: str, score: float | None) -> None:
        if score is None:
            return
        if score > self.score + 1e-9:
            self.actions.append(action)
        elif score < self.score - 1e-9 and self.actions:
            self.actions.remove(self._undone_by(action))
        self.score = score

    def _undone_by(self, action: str) -> str:
        if action in self.actions:
            return action
        same = [a for a in self.actions if blind_action(a) == blind_action(action)]
        return same[-1] if same else self.actions[-1]


class Futile:
    """The actions that did not work in a state the world is in again: where the same action in the same
    state gets the same answer, trying it again can only fail again (a small model cycles through four
    refused actions, which no repeat or bounce check catches). A state is what ``state_of`` keeps, its
    numbers aside (a step counter moves every step); an observation with no short field, list or dict has
    none to compare, and nothing is futile there. A record of what was done is state here (unlike for
    loops): an action that did nothing may work once another was done. ``after`` is told each step: its action, the
    observation before it and whether it did not work."""

    def __init__(self) -> None:
        self.failed: dict[str, str] = {}

    def after(self, action: str, before: Any, failed: bool) -> None:
        key = _state_key(before)
        if failed and key:
            self.failed[action] = key

    def nudge(self, proposed: str, now: Any) -> str | None:
        key = self.failed.get(proposed)
        if key and key == _state_key(now):
            return (
                f"{proposed} did not work when things were as they are now; it will not work now either. "
                "Choose a different action."
            )
        return None


def _state_key(observation: Any, own: Collection[str] = ()) -> str:
    """The state to compare (``state_of``'s, numbers aside, and a list whose every item is the command of
    an action the episode took, ``own``, aside, or none: a list of what was done today is the agent's own
    record, and it grows at every step of a loop; a list of the commands offered is not one)."""
    state = {
        k: v
        for k, v in state_of(observation).items()
        if not isinstance(v, int | float) and not _own_record(v, own)
    }
    return json.dumps(state, sort_keys=True, default=str) if state else ""


def _own_record(value: Any, own: Collection[str]) -> bool:
    """An empty list, or one of the commands taken only: the same state whatever the record holds."""
    return isinstance(value, list | tuple) and all(isinstance(x, str) and x.lower() in own for x in value)


def commands_of(action: str) -> set[str]:
    """An action's canonical text and its label as the agent's list writes it (``act(command="go east")``
    → ``go east``; ``move_to(room="room_B")`` → ``move_to room_B``), lower case: what a record of the
    agent's own steps would list. Not an argument alone: a list of exits names the rooms moved to."""
    call = _CALL.match(action)
    if not call:
        return {action.lower()}
    values = _ARGUMENT.findall(call.group(2))
    label = values[0] if call.group(1) == "act" and len(values) == 1 else " ".join([call.group(1), *values])
    return {action.lower(), label.lower()}


class Visits:
    """The places an episode has been in, counted on arrival: a place is an observation's short text
    fields (``state_of``'s, without its lists, dicts and numbers: a room, not what is carried). Where
    the agent stands somewhere it has never been, repeating a move is a walk onward, not a loop
    (``go north`` three times up a corridor); a repeat that only adds to a list (one more log) is not.
    It also keeps each step's action with the state it was taken in (``Futile``'s: short fields, lists
    and dicts, numbers aside; ``took``): a repeat of an action never taken from this state in the last
    few steps walks on rather than round (``again``), and where every choice would continue a loop,
    those least taken from this state are left (``fewest``): between two rooms the way back was taken
    from here, the way on never."""

    def __init__(self, own: set[str] | None = None, closers: set[str] | None = None) -> None:
        self.count: dict[str, int] = {}
        self.taken: list[tuple[str, str]] = []  # (state key, action text) of each step, in order
        self.own = own if own is not None else set()
        self.closers = closers if closers is not None else set()

    def _key(self, observation: Any, action: str) -> str:
        """The state ``action`` is compared in: the agent's own record aside, except for an action that
        emptied that record (``closers``: 'wait a day' after 'water x'), whose answer depends on what the
        record holds: taken after another action, it is no repeat."""
        return _state_key(observation, () if action in self.closers else self.own)

    def took(self, observation: Any, action: str) -> None:
        self.taken.append((self._key(observation, action), action))

    def again(self, observation: Any, action: str, window: int = WINDOW) -> bool | None:
        """Whether ``action`` was taken from this very state within the last ``window`` steps; None where
        the observation has no state to compare (then only the action's own repeats can tell)."""
        key = self._key(observation, action)
        if not key:
            return None
        return (key, action) in self.taken[-window:] if window else False

    def times(self, observation: Any, action: str) -> int:
        """How often ``action`` was taken from this very state in the episode (0 where it has no state)."""
        key = self._key(observation, action)
        return self.taken.count((key, action)) if key else 0

    def fewest(self, observation: Any, choices: dict[str, str]) -> list[str]:
        """The labels of ``choices`` (label: action text) whose action was taken least often from this
        state in the episode; all of them where the observation has no state."""
        if not choices:
            return []
        times = {label: self.times(observation, text) for label, text in choices.items()}
        least = min(times.values())
        return [label for label, n in times.items() if n == least]

    def arrive(self, observation: Any) -> None:
        key = _place(observation)
        if key:
            self.count[key] = self.count.get(key, 0) + 1

    def first(self, observation: Any) -> bool:
        """Whether the episode is in this place for the first time (False where it has none)."""
        key = _place(observation)
        return bool(key) and self.count.get(key, 0) == 1


class Guard:
    """The loop guard of one episode: what was taken, where, and whether it worked. ``note`` objects to
    a proposal (``loop_nudge``, ``Futile``, or taken ``HERE`` times from this very state), ``open`` keeps the choices it does not object to (or, where
    it objects to all, those least taken from this state), ``after`` is told each step."""

    def __init__(self, observation: Any) -> None:
        self.past: Past = []
        self.own: set[str] = set()  # the commands taken, as a record of them in the observation lists them
        self.closers: set[str] = set()  # the actions that emptied that record (``Visits``)
        self.futile = Futile()
        self.visits = Visits(self.own, self.closers)
        self.ticking = Ticking()
        self.visits.arrive(observation)

    def note(self, proposed: str, observation: Any) -> str | None:
        looping = loop_nudge(
            proposed,
            self.past,
            first_visit=self.visits.first(observation),
            again=self.visits.again(observation, proposed),
        )
        return looping or self.futile.nudge(proposed, observation) or self._taken_here(proposed, observation)

    def _taken_here(self, proposed: str, observation: Any) -> str | None:
        times = self.visits.times(observation, proposed)
        if times < HERE:
            return None
        return (
            f"You have done {proposed} {times} times from exactly this situation already; it led back here. "
            "Choose an action you have taken less often from here."
        )

    def open(self, observation: Any, choices: dict[str, str]) -> list[str]:
        """The labels of ``choices`` (label: action text) the guard does not object to; where it objects
        to every one, those least taken from this state."""
        kept = [label for label, text in choices.items() if self.note(text, observation) is None]
        return kept or self.visits.fewest(observation, choices)

    def after(self, action: str, before: Any, result: Any) -> None:
        """Told each step: the action's text, the observation before it and the step's ``StepResult``."""
        self.past.append(outcome(action, before, result, self.ticking))
        self.futile.after(action, before, self.past[-1][1])
        if _emptied_record(before, result.observation, self.own):
            self.closers.add(action)
        self.visits.took(before, action)
        self.own |= commands_of(action)
        self.visits.arrive(result.observation)


def _emptied_record(before: Any, after: Any, own: Collection[str]) -> bool:
    """Whether a list of ``before`` that held only commands the agent took (its own record) is empty in
    ``after``."""
    old, new = state_of(before), state_of(after)
    return any(
        isinstance(v, list | tuple) and v and _own_record(v, own) and new.get(k) in ([], ())
        for k, v in old.items()
    )


def _place(observation: Any) -> str:
    place = {k: v for k, v in state_of(observation).items() if isinstance(v, str)}
    return json.dumps(place, sort_keys=True) if place else ""


def loop_nudge(
    proposed: str,
    past: Past,
    *,
    repeats: int = 3,
    window: int = WINDOW,
    first_visit: bool = False,
    again: bool | None = None,
) -> str | None:
    """A note when ``proposed`` repeats a step that did not work, alternates between two actions, repeats the
    same action ``repeats`` times in a row, or would be taken a third time within ``window`` turns (a
    longer cycle: room D, B, D, C, D, ...; 0 turns that check off) — unless ``again`` is False: none of
    those times was from the state the agent is in (``Visits.again``), so the repeats walk on (``go
    east`` from the kitchen after ``go east`` from the hall and the yard). Where the last step worked and
    brought the agent somewhere it had never been (``first_visit``: ``Visits``), only the first check
    holds: its repeats went onward, not round."""
    if past and past[-1] == (proposed, True):
        return (
            f"Your last action {proposed} failed or changed nothing; doing it again will not work either. "
            "Choose a different action."
        )
    if first_visit and past and not past[-1][1]:
        return None
    if len(past) >= 3 and proposed == past[-2][0] and past[-1][0] == past[-3][0] and proposed != past[-1][0]:
        return (
            f"You are going back and forth between {proposed} and {past[-1][0]} without progress. "
            "Choose a different action that moves you toward the goal."
        )
    tail = [a for a, _ in past[-(repeats - 1) :]] if repeats > 1 else []
    if len(tail) == repeats - 1 and all(a == proposed for a in tail):
        return f"You have done {proposed} {repeats - 1} times in a row already. Choose a different action."
    if window and again is not False and sum(a == proposed for a, _ in past[-window:]) >= 2:
        return (
            f"You have done {proposed} twice in your last {window} actions: you are going in circles. "
            "Choose an action you have not tried recently."
        )
    return None


__all__ = [
    "Advances",
    "Futile",
    "Guard",
    "Past",
    "Ticking",
    "Visits",
    "changed_nothing",
    "loop_nudge",
    "outcome",
    "state_of",
]
