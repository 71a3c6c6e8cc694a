"""The short action list: at most ``LIMIT`` actions a turn, chosen from the simulator's valid
action–object combinations (hundreds) by what the observation and the task text show.

Every valid combination is scored by its template and its objects, and the best ``LIMIT`` are
kept: moving (``go to`` a room, ``open`` a door), ``look around`` and waiting always; an object
the task text names, or one the agent holds, lifts every action on it; containers and devices
lift ``move``/``pour``/``activate``. Templates no task here needs (``eat``, ``read``, ``connect``
…) are left out. Nothing here reads the gold path; how often the list still holds the gold path's
next action is measured by ``benchmarks/bench_scienceworld_actions.py``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from atlas.envs.scienceworld.scene import SEEN_DOOR, TEMPLATES, Combo, Scene, is_door, room_of

LIMIT = 30
GENERIC = {
    "room",
    "substance",
    "object",
    "sittable",
    "container",
    "device",
    "terminal",
    "agent",
    "self",
    "thing",
    "air",
    "inventory",
    "liquid",
    "solid",
    "gas",
}
STOP = {
    "a",
    "an",
    "the",
    "in",
    "on",
    "to",
    "of",
    "and",
    "containing",
    "nothing",
    "inventory",
    "called",
    "with",
    "which",
    "is",
}
# Templates the list never offers: no supported task needs them, and each multiplies the list.
LEFT_OUT = {8, 12, 14, 15, 16, 17, 20, 24, 26}
ORDER = [3, 2, 0, 1, 21, 11, 9, 10, 23, 13, 6, 7, 4, 5, 22, 18, 19]


@dataclass(frozen=True)
class Choice:
    """One entry of the list: what the agent reads (``label``) and what the simulator is sent."""

    label: str
    command: str
    template: int
    objects: tuple[int, ...]


def _phrase(p: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![a-z0-9]){re.escape(p)}(?![a-z0-9])")


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOP}


class Relevance:
    """How much the task and the agent's situation point at each visible object."""

    def __init__(self, scene: Scene) -> None:
        self.scene = scene
        task = scene.task.lower()
        self.task_words = _words(task)
        self.focuses = max(1, task.count("focus on"))  # how many things the task asks to focus on
        self.named: set[int] = set()
        self.touches: set[int] = set()
        spans: list[tuple[int, int, int]] = []  # (start, end, object) of each phrase the task names
        for obj, name in scene.names.items():
            phrases = {name.lower(), *(r.lower() for r in scene.referents.get(obj, ()))} - GENERIC
            for p in phrases:
                if len(p) > 2:
                    spans += [(m.start(), m.end(), obj) for m in _phrase(p).finditer(task)]
        for start, end, obj in spans:  # "orange" inside "orange box" names the box, not the fruit
            if not any(s <= start and end <= e and (e - s) > (end - start) for s, e, o in spans if o != obj):
                self.named.add(obj)
        for obj in scene.names:
            said = " ".join([scene.label(obj), scene.names.get(obj, ""), *scene.referents.get(obj, ())])
            if obj not in self.named and _words(said) & self.task_words:
                self.touches.add(obj)
        here = room_of(scene.look)
        self.locations = {c.objects[0] for c in scene.combos if c.template == 2 and c.objects} | {
            o
            for o, name in scene.names.items()
            if "room" in scene.referents.get(o, ())
            or (here and name == here)
            or name in {d for d, _ in SEEN_DOOR.findall(scene.look)}
        }
        self.containers = {
            c.objects[0]
            for c in scene.combos
            if c.template == 5 and c.objects and c.objects[0] not in self.locations
        }
        self.devices = {c.objects[0] for c in scene.combos if c.template in (6, 7) and c.objects}
        self.portable = {c.objects[0] for c in scene.combos if c.template == 21 and c.objects}
        focus_names = {
            n.lower()
            for f in scene.focused
            for n in (scene.label(f), scene.names.get(f, ""), *scene.referents.get(f, ()))
            if len(n) > 3 and n.lower() not in GENERIC | {"living thing", "organism", "plant", "animal"}
        }
        self.holders = {  # what holds a thing the agent focused on ("flower pot 2 containing pea plant")
            o
            for o, rs in scene.referents.items()
            if o not in scene.focused
            and any(" containing " in r and any(n and n in r for n in focus_names) for r in rs)
        }
        self.living = {o for o, rs in scene.referents.items() if "living thing" in rs or "organism" in rs}
        self.junk = {
            obj
            for obj, name in scene.names.items()
            if name in ("agent", "air", "inventory") or set(scene.referents.get(obj, ())) & {"agent", "self"}
        }

    def filled(self, obj: int) -> bool:
        """A container whose name says it holds something ("cup containing blue paint")."""
        names = [self.scene.names.get(obj, ""), *self.scene.referents.get(obj, ())]
        return obj in self.containers and any(
            " containing " in n and "containing nothing" not in n for n in names
        )

    def of(self, obj: int) -> int:
        """3: the task names it; 2: the agent holds it or focused on it; 1: a word of its name is in
        the task; 0."""
        if obj in self.named:
            return 3
        if obj in self.scene.inventory or obj in self.scene.focused or obj in self.holders:
            return 2
        return 1 if obj in self.touches else 0


def score(combo: Combo, rel: Relevance) -> float | None:
    """How strongly the list should offer ``combo`` (None: never)."""
    t, objs = combo.template, combo.objects
    if t in LEFT_OUT or any(o in rel.junk for o in objs):
        return None
    if t == 3:
        return 100
    if t in (18, 19):
        return 70 if t == 18 else 45
    if t == 2:
        return 90 if not is_door(rel.scene, objs[0]) else None
    if not objs:
        return None
    a = objs[0]
    r = rel.of(a)
    if t == 0:  # open: doors first, then containers
        return 85 if is_door(rel.scene, a) else 50 + 8 * r
    if t == 1:
        return None if is_door(rel.scene, a) else 15 + 8 * r
    if a in rel.locations or is_door(rel.scene, a):
        return None  # focusing on, moving or picking up a room or a door
    if t == 11:  # focus on: what the task names, else any portable thing (find tasks)
        if a in rel.scene.focused:
            return None
        if len(rel.scene.focused) >= rel.focuses and r < 3:  # one focus more than asked ends most tasks
            return 18
        return 80 if r == 3 else 55 if r else (42 if a in rel.portable else 28)
    if t == 21:  # pick up
        if a in rel.scene.inventory:
            return None
        return 72 if r == 3 else 62 if a in rel.holders else 48 if r else (38 if a in rel.portable else None)
    if t == 22:  # put down
        return 30 + 8 * r
    if t in (6, 7):
        return 52 + 6 * r
    if t == 4:  # look at: only what the task is about
        return 50 + 4 * r if r >= 2 else None
    if t == 5:
        return 20 + 6 * r if a in rel.containers else None
    if t == 23:  # mix: a container that holds something
        return 40 + 6 * r if rel.filled(a) else None
    b = objs[1] if len(objs) > 1 else None
    if b is None or b in rel.locations or is_door(rel.scene, b) or a == b:
        return None
    rb = rel.of(b)
    if t == 9:  # move A to B: a thing held, focused on or named, into a container, a device or the inventory
        if r < 2:
            return None
        if (b not in rel.containers and b not in rel.devices) or b in rel.living:
            return None
        return 30 + 4 * r + 10 * rb + (6 if b in rel.devices else 0)
    if t == 10:  # pour A in B: a container that holds something, into another container
        if not rel.filled(a) or r == 0 or a in rel.holders or b not in rel.containers or b in rel.living:
            return None
        return 36 + 6 * r + 6 * rb
    if t == 13:  # use A on B: an instrument held, on something the task is about
        if a not in rel.scene.inventory or rb == 0:
            return None
        return 60 + 6 * rb
    return None


def _label(combo: Combo, scene: Scene) -> str:
    pattern = TEMPLATES.get(combo.template, combo.command)
    names = [scene.label(o) for o in combo.objects]
    if pattern.count("OBJ") != len(names) or not all(names):
        return combo.command
    for name in names:
        pattern = pattern.replace("OBJ", name, 1)
    return pattern


def short_list(scene: Scene, limit: int = LIMIT) -> list[Choice]:
    """At most ``limit`` actions for this scene, best first by score, shown in a fixed template order."""
    rel = Relevance(scene)
    ranked: list[tuple[float, int, Choice]] = []
    seen: set[str] = set()
    for i, combo in enumerate(scene.combos):
        s = score(combo, rel)
        if s is None:
            continue
        label = _label(combo, scene)
        if label in seen:
            continue
        seen.add(label)
        ranked.append((s, i, Choice(label, combo.command, combo.template, combo.objects)))
    ranked.sort(key=lambda x: (-x[0], x[1]))
    kept = [c for _, _, c in ranked[:limit]]
    rank = {t: i for i, t in enumerate(ORDER)}
    return sorted(kept, key=lambda c: (rank.get(c.template, len(ORDER)), c.label))


__all__ = ["LIMIT", "Choice", "Relevance", "score", "short_list"]
