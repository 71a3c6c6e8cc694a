"""Oracle advice for ``atlas headroom`` (never shown to a memory design).

- ``full``: this variation's gold path, each step written as the action list writes it.
- ``learnable``: what a perfect memory of the *train* variations of the same task type could know:
  the gold path of the train variation whose task text is closest to this one, played in that
  variation and written as the list wrote it there, with the objects the two task texts name
  differently re-bound ("red box" → "orange box", "kitchen" → "living room"), and its opening walk
  re-bound to this variation's start room: the house's doors, as the train variations' gold paths
  walk through them, give the way from here to the room where that path's work began.
"""

from __future__ import annotations

import collections
import difflib
import itertools
import re
import threading
from typing import TYPE_CHECKING

from atlas.core.types import Task
from atlas.envs.scienceworld import catalog
from atlas.envs.scienceworld.gold import find
from atlas.envs.scienceworld.scene import room_of
from atlas.protocols.env import Action

if TYPE_CHECKING:
    from atlas.envs.scienceworld.env import ScienceWorldEnv

#: Train variations compared with a task to pick the closest (read once per task type).
CANDIDATES = 30
#: Train variations whose gold paths map the house's doors (walked once per task type).
MAPPED = 12
_lock = threading.Lock()
_train_goals: dict[str, list[tuple[int, str]]] = {}
_doors: dict[str, dict[str, set[str]]] = {}
_DOOR = re.compile(r"A door to the ([^(\n]+?) \(")
_MOVED = re.compile(r"You move to the ([^.]+)\.")
_WALK = ("open door to ", "go to ")


def played_path(
    env: ScienceWorldEnv, task: Task, rooms: list[str] | None = None, opening: list[str] | None = None
) -> list[str]:
    """The gold path of ``task`` played through the action list, as list labels (a gold step the
    list lacks is sent as the gold path writes it). ``rooms`` gets the room the agent stood in before
    each step, and where it ended; ``opening`` the description of the room it started in."""
    gold = env.gold_path(task)
    if opening is not None:
        opening.append(env._text)
    out: list[str] = []
    here = room_of(env._text)
    for command in gold:
        if env.done or env._scene is None:
            break
        entry = find(command, list(env._choices.values()), env._scene)
        label = entry.label if entry is not None else command
        out.append(label)
        if rooms is not None:
            rooms.append(here)
        env.step(Action("act", {"command": label}))
        moved = _MOVED.search(env._text)
        here = moved.group(1).strip() if moved else here
    if rooms is not None:
        rooms.append(here)
    return out


def door_map(env: ScienceWorldEnv, task_type: str) -> dict[str, set[str]]:
    """Which rooms open onto which: the doors the start rooms of ``MAPPED`` train variations list, and the
    moves their gold paths make."""
    with _lock:
        if task_type in _doors:
            return _doors[task_type]
    doors: dict[str, set[str]] = collections.defaultdict(set)
    for _, variation in catalog.pick((task_type,), "train", MAPPED, 1):
        rooms: list[str] = []
        opening: list[str] = []
        played_path(env, env._task_of(task_type, variation), rooms, opening)
        start = room_of(opening[0])  # played_path always reads the start room's description
        for a, b in [*itertools.pairwise(rooms), *((start, d.strip()) for d in _DOOR.findall(opening[0]))]:
            if a and b and a != b:
                doors[a].add(b)
                doors[b].add(a)
    with _lock:
        _doors[task_type] = dict(doors)
    return _doors[task_type]


def walk(doors: dict[str, set[str]], start: str, goal: str) -> list[str] | None:
    """The shortest way through the doors from ``start`` to ``goal``, as actions (None: no known way)."""
    before: dict[str, str] = {start: start}
    queue = collections.deque([start])
    while queue:
        room = queue.popleft()
        if room == goal:
            steps: list[str] = []
            while room != start:
                steps = [f"open door to {room}", f"go to {room}", *steps]
                room = before[room]
            return steps
        for nxt in sorted(doors.get(room, ())):
            if nxt not in before:
                before[nxt] = room
                queue.append(nxt)
    return None


def rewalked(steps: list[str], rooms: list[str], start: str, doors: dict[str, set[str]]) -> list[str]:
    """``steps`` with their opening walk (doors opened, rooms entered) replaced by the way from ``start``
    to the room where the first other step was taken; unchanged where no way is known."""
    lead = 0
    while lead < len(steps) and steps[lead].startswith(_WALK):
        lead += 1
    way = walk(doors, start, rooms[lead]) if start and lead < len(rooms) else None
    return steps if way is None else [*way, *steps[lead:]]


def _train_goals_of(env: ScienceWorldEnv, task_type: str) -> list[tuple[int, str]]:
    with _lock:
        if task_type in _train_goals:
            return _train_goals[task_type]
    goals = [
        (v, env.format_goal(env._task_of(task_type, v)))
        for _, v in catalog.pick((task_type,), "train", CANDIDATES, 0)
    ]
    with _lock:
        _train_goals[task_type] = goals
    return goals


def _tokens(text: str) -> list[str]:
    return re.findall(r"[a-z0-9.\-]+", text.lower())


def closest_train(env: ScienceWorldEnv, task_type: str, goal: str) -> tuple[int, str]:
    """The train variation (and its task text) whose task text shares the most words with ``goal``."""
    mine = _tokens(goal)
    return max(
        _train_goals_of(env, task_type),
        key=lambda vg: difflib.SequenceMatcher(a=_tokens(vg[1]), b=mine, autojunk=False).ratio(),
    )


def rebinding(old_goal: str, new_goal: str) -> list[tuple[str, str]]:
    """Phrases the two task texts fill differently in the same frame, as (old, new) pairs."""
    a, b = _tokens(old_goal), _tokens(new_goal)
    pairs = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op == "replace" and i2 - i1 <= 4 and j2 - j1 <= 4:
            pairs.append((" ".join(a[i1:i2]).strip("."), " ".join(b[j1:j2]).strip(".")))
    return [(o, n) for o, n in pairs if o and n and o != n]


def rebind(line: str, pairs: list[tuple[str, str]]) -> str:
    for old, new in pairs:
        line = re.sub(rf"(?<![a-z0-9]){re.escape(old)}(?![a-z0-9])", new, line)
    return line


def oracle_advice(env: ScienceWorldEnv, task: Task, level: str) -> str:
    if level not in ("learnable", "full"):
        raise ValueError(f"level must be 'learnable' or 'full', got {level!r}")
    task_type = str(task.metadata["task_type"])
    probe = env.clone()
    try:
        if level == "full":
            steps = played_path(probe, task)
            return "Do exactly these actions in order:\n" + "\n".join(
                f"{i}. {s}" for i, s in enumerate(steps, 1)
            )
        goal = env.format_goal(task)
        start = room_of(probe.reset(task)["text"])
        variation, train_goal = closest_train(probe, task_type, goal)
        rooms: list[str] = []
        steps = played_path(probe, probe._task_of(task_type, variation), rooms)
        steps = rewalked(steps, rooms, start, door_map(probe, task_type))
    finally:
        probe.close()
    pairs = rebinding(train_goal, goal)
    return "A solved task of this kind was done with these actions:\n" + "\n".join(
        f"{i}. {rebind(s, pairs)}" for i, s in enumerate(steps, 1)
    )


__all__ = [
    "CANDIDATES",
    "closest_train",
    "door_map",
    "oracle_advice",
    "played_path",
    "rebind",
    "rebinding",
    "rewalked",
    "walk",
]
