"""Seeded ALFWorld-style households and tasks (the offline generator's world model).

A *household* is one ALFRED-like room (kitchen, living room, bedroom or bathroom) with numbered
receptacles and an inventory of objects; it comes from the family seed. A *task* places the
objects (each object type has a household "habit" receptacle it is usually found in, so
memory of a household transfers) and picks a goal of one of the six ALFWorld task types; it
comes from the task seed. Which object fits in which receptacle, and which objects can be
heated, cooled or cleaned, is read from the ``alfworld`` package's own ALFRED tables.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from atlas.errors import ConfigError

TASK_TYPES: tuple[str, ...] = (
    "pick_and_place_simple",
    "look_at_obj_in_light",
    "pick_clean_then_place_in_recep",
    "pick_heat_then_place_in_recep",
    "pick_cool_then_place_in_recep",
    "pick_two_obj_and_place",
)
# Short names accepted anywhere a task type is expected.
TASK_TYPE_ALIASES = {
    "pick_and_place": "pick_and_place_simple",
    "look_at_obj_in_light": "look_at_obj_in_light",
    "pick_clean_then_place": "pick_clean_then_place_in_recep",
    "pick_heat_then_place": "pick_heat_then_place_in_recep",
    "pick_cool_then_place": "pick_cool_then_place_in_recep",
    "pick_two_obj_and_place": "pick_two_obj_and_place",
}

OPENABLE = frozenset({"Cabinet", "Drawer", "Fridge", "Microwave", "Safe"})
LAMP_HOLDERS = ("Desk", "SideTable", "Dresser")

# kind -> receptacles (type, min, max) and candidate object types (type, min, max)
SCENES: dict[str, dict[str, list[tuple[str, int, int]]]] = {
    "kitchen": {
        "receptacles": [
            ("Cabinet", 3, 7),
            ("CounterTop", 1, 3),
            ("Drawer", 2, 4),
            ("Fridge", 1, 1),
            ("Microwave", 1, 1),
            ("SinkBasin", 1, 1),
            ("StoveBurner", 2, 4),
            ("CoffeeMachine", 1, 1),
            ("Toaster", 1, 1),
            ("GarbageCan", 1, 1),
            ("DiningTable", 0, 1),
            ("Shelf", 0, 2),
        ],
        "objects": [
            ("Apple", 1, 3),
            ("Bread", 1, 2),
            ("Potato", 1, 3),
            ("Tomato", 1, 3),
            ("Lettuce", 1, 2),
            ("Egg", 1, 3),
            ("Mug", 1, 3),
            ("Cup", 1, 3),
            ("Bowl", 1, 2),
            ("Plate", 1, 3),
            ("Pan", 1, 2),
            ("Pot", 1, 2),
            ("Knife", 1, 2),
            ("ButterKnife", 1, 2),
            ("Fork", 1, 3),
            ("Spoon", 1, 3),
            ("Spatula", 1, 2),
            ("Ladle", 1, 2),
            ("DishSponge", 1, 2),
            ("SaltShaker", 1, 2),
            ("PepperShaker", 1, 2),
            ("SoapBottle", 1, 2),
            ("WineBottle", 1, 2),
            ("Kettle", 1, 1),
        ],
    },
    "livingroom": {
        "receptacles": [
            ("Sofa", 1, 1),
            ("ArmChair", 0, 2),
            ("CoffeeTable", 1, 1),
            ("SideTable", 1, 2),
            ("TVStand", 0, 1),
            ("Dresser", 0, 1),
            ("Drawer", 0, 4),
            ("Cabinet", 0, 4),
            ("Shelf", 1, 3),
            ("GarbageCan", 1, 1),
            ("DiningTable", 0, 1),
            ("Ottoman", 0, 1),
        ],
        "objects": [
            ("RemoteControl", 1, 2),
            ("KeyChain", 1, 3),
            ("CreditCard", 1, 3),
            ("Newspaper", 1, 2),
            ("Laptop", 1, 2),
            ("Pillow", 1, 2),
            ("Statue", 1, 3),
            ("Vase", 1, 3),
            ("Box", 1, 2),
            ("Watch", 1, 2),
            ("CellPhone", 1, 2),
            ("TissueBox", 1, 2),
            ("Plate", 1, 2),
            ("Book", 1, 2),
        ],
    },
    "bedroom": {
        "receptacles": [
            ("Bed", 1, 1),
            ("Desk", 0, 1),
            ("SideTable", 1, 2),
            ("Dresser", 0, 1),
            ("Drawer", 2, 6),
            ("Shelf", 0, 3),
            ("GarbageCan", 1, 1),
            ("LaundryHamper", 0, 1),
            ("Safe", 0, 1),
            ("ArmChair", 0, 1),
        ],
        "objects": [
            ("Book", 1, 3),
            ("CD", 1, 3),
            ("CellPhone", 1, 3),
            ("Pen", 1, 3),
            ("Pencil", 1, 3),
            ("AlarmClock", 1, 2),
            ("KeyChain", 1, 2),
            ("CreditCard", 1, 2),
            ("Laptop", 1, 2),
            ("Pillow", 1, 2),
            ("BaseballBat", 1, 1),
            ("BasketBall", 1, 1),
            ("Mug", 1, 2),
            ("Bowl", 1, 2),
            ("Cloth", 1, 2),
            ("Watch", 1, 2),
        ],
    },
    "bathroom": {
        "receptacles": [
            ("Cabinet", 1, 4),
            ("CounterTop", 1, 1),
            ("Drawer", 0, 3),
            ("SinkBasin", 1, 2),
            ("BathtubBasin", 0, 1),
            ("Toilet", 1, 1),
            ("ToiletPaperHanger", 1, 1),
            ("HandTowelHolder", 0, 1),
            ("GarbageCan", 1, 1),
            ("Shelf", 0, 2),
        ],
        "objects": [
            ("SoapBar", 1, 3),
            ("SoapBottle", 1, 3),
            ("SprayBottle", 1, 3),
            ("ToiletPaper", 1, 3),
            ("Candle", 1, 3),
            ("Cloth", 1, 3),
            ("HandTowel", 1, 2),
            ("Plunger", 1, 1),
            ("TissueBox", 1, 2),
            ("DishSponge", 1, 2),
        ],
    },
}
SCENE_KINDS: tuple[str, ...] = tuple(SCENES)


@cache
def _tables() -> tuple[dict[str, frozenset[str]], dict[str, frozenset[str]]]:
    """(receptacle type -> object types it can contain, property -> object types) from alfworld."""
    try:
        import alfworld.gen.constants as c
    except ImportError as e:  # pragma: no cover - guarded by callers
        raise ConfigError(
            "the ALFWorld generator needs the optional extra: pip install 'atlas-memory[alfworld]'"
        ) from e
    contain = {k: frozenset(v) for k, v in c.VAL_RECEPTACLE_OBJECTS.items()}
    props = {k: frozenset(v) for k, v in c.VAL_ACTION_OBJECTS.items()}
    return contain, props


def can_contain(rtype: str, otype: str) -> bool:
    return otype in _tables()[0].get(rtype, frozenset())


def has_property(otype: str, prop: str) -> bool:
    """prop: Heatable, Coolable, Cleanable, Toggleable, Sliceable."""
    return otype in _tables()[1].get(prop, frozenset())


def normalize_task_type(name: str) -> str:
    name = name.strip()
    if name in TASK_TYPES:
        return name
    if name in TASK_TYPE_ALIASES:
        return TASK_TYPE_ALIASES[name]
    raise ConfigError(f"unknown ALFWorld task type {name!r}; known: {', '.join(TASK_TYPES)}")


@dataclass(frozen=True)
class Receptacle:
    id: str  # PDDL id, e.g. "cabinet_bar_03" or "sink_bar_01_bar_sinkbasin"
    type: str  # ALFRED type, e.g. "Cabinet"

    @property
    def openable(self) -> bool:
        return self.type in OPENABLE


@dataclass(frozen=True)
class Item:
    id: str  # PDDL id, e.g. "apple_bar_02"
    type: str  # ALFRED type, e.g. "Apple"


@dataclass
class Household:
    """The family part: room kind, receptacles, objects, each type's usual receptacle, the lamp."""

    kind: str
    receptacles: list[Receptacle]
    items: list[Item]
    habits: dict[str, str]  # object type -> receptacle id it is usually found in
    lamp: Item | None = None
    lamp_holder: str | None = None  # receptacle id the desk lamp stands on

    def receptacle_types(self) -> list[str]:
        return sorted({r.type for r in self.receptacles})

    def supports(self, task_type: str) -> bool:
        types = set(self.receptacle_types())
        return {
            "look_at_obj_in_light": self.lamp is not None,
            "pick_clean_then_place_in_recep": "SinkBasin" in types,
            "pick_heat_then_place_in_recep": "Microwave" in types,
            "pick_cool_then_place_in_recep": "Fridge" in types,
        }.get(task_type, True)


@dataclass
class TaskSpec:
    """The task part: where every object lies, the goal and the task type."""

    task_type: str
    object_type: str
    receptacle_type: str  # goal receptacle type ("" for look_at_obj_in_light)
    toggle_type: str  # "DeskLamp" for look_at_obj_in_light, else ""
    placements: dict[str, str]  # item id -> receptacle id
    goal_text: str
    extra: dict[str, Any] = field(default_factory=dict)


def _rid(rtype: str, k: int) -> str:
    base = rtype.lower()
    if rtype == "SinkBasin":
        return f"sink_bar_{k:02d}_bar_sinkbasin"
    if rtype == "BathtubBasin":
        return f"bathtub_bar_{k:02d}_bar_bathtubbasin"
    return f"{base}_bar_{k:02d}"


def build_household(family: int, kinds: tuple[str, ...] = SCENE_KINDS) -> Household:
    """The household of ``family`` (deterministic), its kind drawn from ``kinds``."""
    if not kinds:
        raise ConfigError("no household kind supports the requested task types")
    rng = random.Random(f"alfworld/household/{family}")
    kind = rng.choice(sorted(kinds))
    spec = SCENES[kind]
    receptacles = [
        Receptacle(_rid(t, k), t)
        for t, lo, hi in spec["receptacles"]
        for k in range(1, rng.randint(lo, hi) + 1)
    ]
    rtypes = {r.type for r in receptacles}
    pool = [(t, lo, hi) for t, lo, hi in spec["objects"] if any(can_contain(r, t) for r in rtypes)]
    chosen = rng.sample(pool, min(len(pool), rng.randint(8, 12)))
    items: list[Item] = []
    for t, lo, hi in sorted(chosen):
        for k in range(1, rng.randint(lo, hi) + 1):
            items.append(Item(f"{t.lower()}_bar_{k:02d}", t))
    # Guarantee pairs for pick_two tasks: the first two chosen types get at least two instances.
    for t, _, _ in chosen[:2]:
        if sum(i.type == t for i in items) < 2:
            items.append(Item(f"{t.lower()}_bar_{2:02d}", t))
    items.sort(key=lambda i: i.id)
    habits = {}
    for t in sorted({i.type for i in items}):
        fits = [r.id for r in receptacles if can_contain(r.type, t)]
        habits[t] = rng.choice(fits)
    lamp = lamp_holder = None
    holders = [r.id for r in receptacles if r.type in LAMP_HOLDERS]
    if kind in ("bedroom", "livingroom") and holders:
        lamp, lamp_holder = Item("desklamp_bar_01", "DeskLamp"), rng.choice(holders)
    return Household(kind, receptacles, items, habits, lamp, lamp_holder)


def kinds_supporting(task_types: tuple[str, ...], kinds: tuple[str, ...] = SCENE_KINDS) -> tuple[str, ...]:
    """Household kinds that can host at least one of ``task_types``."""
    ok = []
    for kind in kinds:
        rtypes = {t for t, lo, hi in SCENES[kind]["receptacles"] if hi > 0}
        musts = {t for t, lo, hi in SCENES[kind]["receptacles"] if lo > 0}
        lampable = kind in ("bedroom", "livingroom") and bool(musts & set(LAMP_HOLDERS))
        for tt in task_types:
            need = {
                "pick_clean_then_place_in_recep": "SinkBasin",
                "pick_heat_then_place_in_recep": "Microwave",
                "pick_cool_then_place_in_recep": "Fridge",
            }.get(tt)
            if (
                (tt == "look_at_obj_in_light" and lampable)
                or (need is None and tt != "look_at_obj_in_light")
                or (need is not None and need in musts and need in rtypes)
            ):
                ok.append(kind)
                break
    return tuple(ok)


def _place(h: Household, rng: random.Random, habit: float) -> dict[str, str]:
    placements = {}
    for item in h.items:
        fits = [r.id for r in h.receptacles if can_contain(r.type, item.type)]
        placements[item.id] = h.habits[item.type] if rng.random() < habit else rng.choice(fits)
    return placements


def _candidates(h: Household, task_type: str, placements: dict[str, str]) -> list[tuple[str, str]]:
    """(object type, goal receptacle type) pairs that make a sensible, not-yet-solved goal."""
    by_id = {r.id: r for r in h.receptacles}
    counts: dict[str, int] = {}
    held_in: dict[str, set[str]] = {}
    for item in h.items:
        counts[item.type] = counts.get(item.type, 0) + 1
        held_in.setdefault(item.type, set()).add(by_id[placements[item.id]].type)
    need, banned = {
        "pick_clean_then_place_in_recep": ("Cleanable", "SinkBasin"),
        "pick_heat_then_place_in_recep": ("Heatable", "Microwave"),
        "pick_cool_then_place_in_recep": ("Coolable", "Fridge"),
    }.get(task_type, ("", ""))
    pairs = []
    for otype in sorted(counts):
        if need and not has_property(otype, need):
            continue
        if task_type == "pick_two_obj_and_place" and counts[otype] < 2:
            continue
        if task_type == "look_at_obj_in_light":
            pairs.append((otype, ""))
            continue
        for rtype in h.receptacle_types():
            if rtype == banned or rtype in held_in[otype] or not can_contain(rtype, otype):
                continue
            pairs.append((otype, rtype))
    return pairs


def goal_text(task_type: str, otype: str, rtype: str, toggle: str, rng: random.Random) -> str:
    """The goal sentence, from the same templates ALFWorld uses (alfworld.gen.goal_library)."""
    templates = {
        "pick_and_place_simple": ["put a {obj} in {recep}", "put some {obj} on {recep}"],
        "pick_clean_then_place_in_recep": [
            "put a clean {obj} in {recep}",
            "clean some {obj} and put it in {recep}",
        ],
        "pick_heat_then_place_in_recep": [
            "put a hot {obj} in {recep}",
            "heat some {obj} and put it in {recep}",
        ],
        "pick_cool_then_place_in_recep": [
            "put a cool {obj} in {recep}",
            "cool some {obj} and put it in {recep}",
        ],
        "pick_two_obj_and_place": ["put two {obj} in {recep}", "find two {obj} and put them in {recep}"],
        "look_at_obj_in_light": ["look at {obj} under the {toggle}", "examine the {obj} with the {toggle}"],
    }[task_type]
    return rng.choice(templates).format(obj=otype.lower(), recep=rtype.lower(), toggle=toggle.lower())


def build_task(h: Household, *, seed: int, task_types: tuple[str, ...], habit: float = 0.5) -> TaskSpec:
    """Task ``seed`` in household ``h``: placements, then a task type among ``task_types`` the
    household supports and that has a sensible goal (deterministic)."""
    rng = random.Random(f"alfworld/task/{seed}")
    placements = _place(h, rng, habit)
    options = [(tt, _candidates(h, tt, placements)) for tt in task_types if h.supports(tt)]
    options = [(tt, c) for tt, c in options if c]
    if not options:
        raise ConfigError(f"household ({h.kind}) supports none of the task types {list(task_types)}")
    task_type, pairs = rng.choice(options)
    otype, rtype = rng.choice(pairs)
    toggle = "DeskLamp" if task_type == "look_at_obj_in_light" else ""
    text = goal_text(task_type, otype, rtype, toggle, rng)
    return TaskSpec(task_type, otype, rtype, toggle, placements, text)


__all__ = [
    "OPENABLE",
    "SCENES",
    "SCENE_KINDS",
    "TASK_TYPES",
    "Household",
    "Item",
    "Receptacle",
    "TaskSpec",
    "build_household",
    "build_task",
    "can_contain",
    "goal_text",
    "has_property",
    "kinds_supporting",
    "normalize_task_type",
]
