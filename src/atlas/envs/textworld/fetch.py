"""``tw-fetch``: a TextWorld challenge with the family structure a memory can learn.

TextWorld's own challenges print the way to the goal in the objective (treasure hunter, coin
collector) or change the whole map with every game, so memory of earlier games has nothing to add.
Here a *family* is a house: its rooms, how they join (north / south / east / west on a grid) and
the few things the household owns (``things``, 4 of the ten object names) and where each usually lies.
A *task* starts the player in some room and asks for one of them ("Find the lantern and take it.") in
another room; it lies in its usual room with probability ``habit``, elsewhere otherwise, and so do the
two other things lying about. A memory that learned the map and the habits can walk straight there;
without one the player searches room by room. Room descriptions are written anew each game
(TextWorld's grammar, seeded by the task).

Houses owned all ten objects before ``things`` existed (``LEGACY_THINGS``; the same houses and
errands as then): three collection games then saw about six of the ten, once each, so the habit of
the object a later task asked for was mostly unknown (headroom +0.26 on 12 tasks, the best search
+0.16 with its interval below 0). With four, each game lays out three of them.

Things kept to their usual room three times in four (``habit`` 0.75) before ``HABIT``: then the few games
a run collects showed a thing out of place about as often as in it (the no-memory agent's first three,
or six, games of the run's house put two of its four things in the wrong room;
``scripts/fetch_collection_reach.py``), so what the learnable advice knew, no memory of them could.
Now every thing has its place; where a game starts, and which thing it asks for, still change.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass
from typing import Any

CHALLENGE = "tw-fetch"
VERSION = 2  # in the cached game file names: a change to the generator writes new files
GOAL = "Find the object the first observation names and take it."
ROOM_NAMES = (
    "kitchen",
    "pantry",
    "study",
    "cellar",
    "attic",
    "hallway",
    "library",
    "workshop",
    "garage",
    "bedroom",
    "bathroom",
    "parlor",
    "laundry",
    "office",
    "studio",
    "lounge",
)
OBJECTS = ("coin", "key", "lantern", "book", "compass", "hammer", "candle", "scarf", "ring", "whistle")
THINGS = 4  # the things a household owns, by default
HABIT = 1.0  # how often a thing lies in its usual room, by default (0.75 before; see the module docstring)
LEGACY_THINGS = len(OBJECTS)  # what every house owned before ``things`` existed
STEP = {"north": (0, 1), "south": (0, -1), "east": (1, 0), "west": (-1, 0)}
REVERSE = {"north": "south", "south": "north", "east": "west", "west": "east"}
MAX_ROOMS = len(ROOM_NAMES)


@dataclass(frozen=True)
class House:
    rooms: tuple[str, ...]
    exits: dict[str, dict[str, str]]  # room -> direction -> room
    habits: dict[str, str]  # thing -> the room it usually lies in

    @property
    def things(self) -> tuple[str, ...]:
        return tuple(self.habits)


@dataclass(frozen=True)
class Errand:
    start: str
    target: str
    placement: dict[str, str]  # object -> room, the target first

    @property
    def goal(self) -> str:
        return f"Find the {self.target} and take it."


def house(family: int, rooms: int, things: int = THINGS) -> House:
    """The family's house: rooms grown on a grid (a tree, then a few loops), the things it owns and
    each one's usual room."""
    if not 1 <= things <= len(OBJECTS):
        raise ValueError(f"a house owns 1..{len(OBJECTS)} things, got {things}")
    rng = random.Random(f"tw-fetch/house/{family}/{rooms}")
    names = rng.sample(ROOM_NAMES, rooms)
    at = {names[0]: (0, 0)}
    taken = {(0, 0): names[0]}
    exits: dict[str, dict[str, str]] = {n: {} for n in names}

    def join(a: str, b: str, d: str) -> None:
        exits[a][d], exits[b][REVERSE[d]] = b, a

    for name in names[1:]:
        options = [
            (room, d)
            for room in at
            for d, (dx, dy) in STEP.items()
            if (at[room][0] + dx, at[room][1] + dy) not in taken
        ]
        room, d = rng.choice(sorted(options))
        x, y = at[room][0] + STEP[d][0], at[room][1] + STEP[d][1]
        at[name], taken[(x, y)] = (x, y), name
        join(room, name, d)
    loops = [
        (room, d, taken[(at[room][0] + dx, at[room][1] + dy)])
        for room in names
        for d, (dx, dy) in STEP.items()
        if (at[room][0] + dx, at[room][1] + dy) in taken and d not in exits[room]
    ]
    for room, d, other in rng.sample(loops, min(len(loops), rooms // 4)):
        if d not in exits[room]:
            join(room, other, d)
    owned = OBJECTS if things == LEGACY_THINGS else tuple(sorted(rng.sample(OBJECTS, things)))
    habits = {obj: rng.choice(names) for obj in owned}
    return House(tuple(names), exits, habits)


def errand(h: House, seed: int, habit: float) -> Errand:
    rng = random.Random(f"tw-fetch/errand/{seed}")
    target = rng.choice(h.things)

    def place(obj: str) -> str:  # its usual room with probability habit, another room otherwise
        usual = h.habits[obj]
        return usual if rng.random() < habit else rng.choice([r for r in h.rooms if r != usual])

    placement = {target: place(target)}
    others = [o for o in h.things if o != target]
    for other in rng.sample(others, min(2, len(others))):
        placement[other] = place(other)
    start = rng.choice([r for r in h.rooms if r != placement[target]])
    return Errand(start, target, placement)


def route(h: House, start: str, goal: str) -> list[str]:
    """The shortest walk from ``start`` to ``goal`` as commands ("go east", ...)."""
    back: dict[str, tuple[str, str] | None] = {start: None}
    queue = deque([start])
    while queue:
        room = queue.popleft()
        for d, nxt in sorted(h.exits[room].items()):
            if nxt not in back:
                back[nxt] = (room, d)
                queue.append(nxt)
    steps: list[str] = []
    at = goal
    while (prev := back[at]) is not None:
        at, d = prev
        steps.append(f"go {d}")
    return steps[::-1]


def walkthrough(h: House, e: Errand) -> list[str]:
    return [*route(h, e.start, e.placement[e.target]), f"take {e.target}"]


def make_game(family: int, seed: int, rooms: int, habit: float, options: Any, things: int = THINGS) -> Any:
    """The TextWorld game of one errand (compiled by the caller)."""
    import textworld
    from textworld.generator.game import Event, Quest

    h = house(family, rooms, things)
    e = errand(h, seed, habit)
    maker = textworld.GameMaker(options)
    made = {name: maker.new_room(name) for name in h.rooms}
    for name in h.rooms:
        for d, other in h.exits[name].items():
            if d in ("north", "east"):  # each passage once
                maker.connect(made[name].exits[d], made[other].exits[REVERSE[d]])
    maker.set_player(made[e.start])
    items = {}
    for obj, room in e.placement.items():
        items[obj] = maker.new(type="o", name=obj)
        made[room].add(items[obj])
    maker.quests = [
        Quest(win_events=[Event(conditions={maker.new_fact("in", items[e.target], maker.inventory)})])
    ]
    maker.set_walkthrough(walkthrough(h, e))
    game = maker.build()
    game.objective = e.goal
    return game


def learnable_advice(family: int, seed: int, rooms: int, habit: float, things: int = THINGS) -> str:
    """What a memory of this house could know: where the object usually lies and the way there."""
    h = house(family, rooms, things)
    e = errand(h, seed, habit)
    usual = h.habits[e.target]
    lines = [f"The {e.target} is usually in the {usual}; if it is not there, search the other rooms."]
    at = e.start
    for command in route(h, e.start, usual):
        lines.append(f"In the {at}: {command}.")
        at = h.exits[at][command.removeprefix("go ")]
    return "\n".join([*lines, f"In the {usual}: take {e.target}."])


__all__ = [
    "CHALLENGE",
    "GOAL",
    "HABIT",
    "LEGACY_THINGS",
    "THINGS",
    "Errand",
    "House",
    "errand",
    "house",
    "learnable_advice",
    "make_game",
    "route",
    "walkthrough",
]
