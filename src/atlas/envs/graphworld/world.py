"""GraphWorld's world model and seeded generator (pure Python, deterministic per seed).

Topology comes from the *family* seed and placements / goal / start from the *task* seed,
so tasks of one family share their room layout (spatial memory transfers) while objects
and goals change.
"""

from __future__ import annotations

import random
import string
from dataclasses import asdict, dataclass, field
from typing import Any

from atlas.errors import ConfigError

OBJECT_POOL: tuple[str, ...] = (
    "key", "book", "lamp", "gem", "scroll", "compass", "flask", "map", "coin", "ring",
    "torch", "candle", "mirror", "bell", "feather", "dagger", "shield", "helmet", "rope",
    "lantern", "crown", "chalice", "amulet", "hourglass", "quill", "potion", "orb", "flute",
    "statue", "vase", "apple", "bottle",
)  # fmt: skip


@dataclass(frozen=True)
class GraphWorldParams:
    """Every knob of a GraphWorld; stored in each task's metadata so a task rebuilds itself."""

    rooms: int = 8
    objects: int = 3
    connectivity: float = 0.3
    max_steps: int = 20
    score_floor: float = 0.5  # success scores at least this much
    score_horizon: int = 40  # success score = max(floor, 1 - steps / horizon)
    object_pool: tuple[str, ...] = OBJECT_POOL

    def __post_init__(self) -> None:
        if self.rooms < 2:
            raise ConfigError(f"GraphWorld needs at least 2 rooms, got {self.rooms}")
        if not 1 <= self.objects <= len(self.object_pool):
            raise ConfigError(f"objects must be in 1..{len(self.object_pool)}, got {self.objects}")
        if len(set(self.object_pool)) != len(self.object_pool):
            raise ConfigError("object_pool has duplicate names")
        if not 0.0 <= self.connectivity <= 1.0:
            raise ConfigError(f"connectivity must be within [0, 1], got {self.connectivity}")
        if self.max_steps < 1 or self.score_horizon < 1:
            raise ConfigError("max_steps and score_horizon must be positive")

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["object_pool"] = list(self.object_pool)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> GraphWorldParams:
        d = dict(d)
        if "object_pool" in d:
            d["object_pool"] = tuple(d["object_pool"])
        return cls(**d)


def room_names(n: int) -> list[str]:
    """room_A … room_Z, then room_AA, room_AB, … (spreadsheet-style)."""
    names = []
    for i in range(n):
        label, k = "", i
        while True:
            label = string.ascii_uppercase[k % 26] + label
            k = k // 26 - 1
            if k < 0:
                break
        names.append(f"room_{label}")
    return names


@dataclass
class World:
    """The full (hidden) state of one GraphWorld episode."""

    rooms: list[str]
    adjacency: dict[str, list[str]]
    object_rooms: dict[str, str | None]  # object -> room, None while carried
    start: str
    target_object: str
    destination: str
    location: str = ""
    inventory: list[str] = field(default_factory=list)

    def edges(self) -> list[tuple[str, str]]:
        return sorted({tuple(sorted((a, b))) for a, ns in self.adjacency.items() for b in ns})  # type: ignore[misc]

    def objects_in(self, room: str) -> list[str]:
        return sorted(o for o, r in self.object_rooms.items() if r == room)


def generate_topology(rooms: list[str], connectivity: float, rng: random.Random) -> dict[str, list[str]]:
    """Each pair connected with probability ``connectivity``; then every component that is not
    the main one is attached by one edge to a random room of the growing graph (so isolated rooms
    are reachable and every task is solvable)."""
    adj: dict[str, set[str]] = {r: set() for r in rooms}
    for i, a in enumerate(rooms):
        for b in rooms[i + 1 :]:
            if rng.random() < connectivity:
                adj[a].add(b)
                adj[b].add(a)
    # Components in a deterministic order (by their first room).
    seen: set[str] = set()
    components: list[list[str]] = []
    for r in rooms:
        if r in seen:
            continue
        comp, frontier = [], [r]
        seen.add(r)
        while frontier:
            x = frontier.pop()
            comp.append(x)
            for y in sorted(adj[x]):
                if y not in seen:
                    seen.add(y)
                    frontier.append(y)
        components.append(sorted(comp, key=rooms.index))
    connected = list(components[0])
    for comp in components[1:]:
        a = rng.choice(comp)
        b = rng.choice(connected)
        adj[a].add(b)
        adj[b].add(a)
        connected.extend(comp)
    return {r: sorted(adj[r], key=rooms.index) for r in rooms}


def build_world(params: GraphWorldParams, *, seed: int, family: int) -> World:
    """The world of task ``seed`` in family ``family`` (deterministic)."""
    rooms = room_names(params.rooms)
    topo_rng = random.Random(f"graphworld/topology/{family}/{params.rooms}/{params.connectivity}")
    adjacency = generate_topology(rooms, params.connectivity, topo_rng)
    rng = random.Random(f"graphworld/task/{seed}")
    objects = rng.sample(list(params.object_pool), params.objects)
    object_rooms: dict[str, str | None] = {o: rng.choice(rooms) for o in objects}
    target = rng.choice(objects)
    destination = rng.choice([r for r in rooms if r != object_rooms[target]])
    start = rng.choice(rooms)
    return World(
        rooms=rooms,
        adjacency=adjacency,
        object_rooms=object_rooms,
        start=start,
        target_object=target,
        destination=destination,
        location=start,
    )


__all__ = ["OBJECT_POOL", "GraphWorldParams", "World", "build_world", "generate_topology", "room_names"]
