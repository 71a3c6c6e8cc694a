"""What the simulator says about the current state, read once per step: the valid action–object
combinations, the visible objects and their names, the room and the inventory text.

``Scene`` is plain data (no simulator handle), so the short action list (``actions.py``) and the
gold-path matcher (``gold.py``) are pure functions of it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

#: ScienceWorld's action templates (``get_possible_actions_with_IDs``), by id.
TEMPLATES: dict[int, str] = {
    0: "open OBJ",
    1: "close OBJ",
    2: "go to OBJ",
    3: "look around",
    4: "look at OBJ",
    5: "look in OBJ",
    6: "activate OBJ",
    7: "deactivate OBJ",
    8: "eat OBJ",
    9: "move OBJ to OBJ",
    10: "pour OBJ in OBJ",
    11: "focus on OBJ",
    12: "reset task",
    13: "use OBJ on OBJ",
    14: "read OBJ",
    15: "flush OBJ",
    16: "connect OBJ to OBJ",
    17: "disconnect OBJ",
    18: "wait1",
    19: "wait",
    20: "inventory",
    21: "pick up OBJ",
    22: "put down OBJ",
    23: "mix OBJ",
    24: "task",
    26: "dunk OBJ in OBJ",
}
DOOR_TO = re.compile(r"^door to (.+)$")
X_DOOR = re.compile(r"^(.+) door$")
SEEN_DOOR = re.compile(r"A door to the (.+?) \(that is (open|closed)\)")
HERE = re.compile(r"This (?:room|outside location) is called the ([^.]+)\.")


def room_of(text: str) -> str:
    """The room a 'look around' text describes ("" if it describes none)."""
    found = HERE.search(text)
    return found.group(1).strip() if found else ""


@dataclass(frozen=True)
class Combo:
    """One valid action: the simulator's text, its template and its objects."""

    command: str
    template: int
    objects: tuple[int, ...]


@dataclass
class Scene:
    """The state as the short action list needs it. ``names``: each visible object's canonical
    name (the simulator's unique referent); ``referents``: every name it answers to; ``inventory``:
    ids of objects the agent holds."""

    task: str
    look: str
    inventory_text: str
    combos: list[Combo]
    names: dict[int, str]
    referents: dict[int, tuple[str, ...]] = field(default_factory=dict)
    inventory: frozenset[int] = frozenset()
    labels: dict[int, str] = field(default_factory=dict)  # display names (see ``display_names``)
    focused: frozenset[int] = frozenset()  # what the agent has focused on this episode

    def label(self, obj: int) -> str:
        return self.labels.get(obj) or self.names.get(obj, "")


def read_scene(server: Any, task: str) -> Scene:
    """Query a simulator (its py4j ``PythonInterface``) for the current scene."""
    valid = json.loads(server.getValidActionObjectCombinationsJSON())["validActions"]
    combos = in_order(
        [Combo(v["action"], int(v["template_id"]), tuple(int(o) for o in v["obj_ids"])) for v in valid]
    )
    names = names_from(combos)
    for k, v in json.loads(server.getPossibleObjectReferentLUTJSON()).items():
        names.setdefault(int(k), str(v))
    everything = json.loads(server.getAllObjectIdsTypesReferentsLUTJSON())
    referents = {
        i: tuple(r for r in everything.get(str(i), {}).get("referents", []) if not r.startswith("ERROR"))
        for i in names
    }
    held = frozenset(c.objects[0] for c in combos if c.template == 22 and c.objects)
    scene = Scene(
        task=task,
        look=str(server.freeActionLook()),
        inventory_text=str(server.freeActionInventory()),
        combos=combos,
        names=names,
        referents=referents,
        inventory=held,
    )
    scene.labels = display_names(scene)
    return scene


def in_order(combos: list[Combo]) -> list[Combo]:
    """The valid actions in a fixed order. The simulator lists them in an order that changes from one
    start of it to the next, and the short list keeps the first of equally scored ones: the same
    variation showed other actions on another play (7 of 11 played more than once in one search), so a
    design's collection games, played again for its test, went otherwise and the replay cache missed."""
    return sorted(combos, key=lambda c: (c.command, c.template, c.objects))


def names_from(combos: list[Combo]) -> dict[int, str]:
    """Each object's canonical name, read off the one-object commands that name it."""
    names: dict[int, str] = {}
    for c in combos:
        if len(c.objects) != 1 or c.objects[0] in names:
            continue
        head, _, tail = TEMPLATES.get(c.template, "").partition("OBJ")
        if head and c.command.startswith(head) and c.command.endswith(tail):
            names[c.objects[0]] = c.command[len(head) : len(c.command) - len(tail)]
    return names


def door_label(name: str, look: str) -> str | None:
    """``door to X`` for a door named ``door to X`` / ``X door``, or the room's one door."""
    if m := DOOR_TO.match(name):
        return name
    if m := X_DOOR.match(name):
        return f"door to {m.group(1)}"
    if name == "door":
        seen = SEEN_DOOR.findall(look)
        if len(seen) == 1:
            return f"door to {seen[0][0]}"
    return None


def is_door(scene: Scene, obj: int) -> bool:
    name = scene.names.get(obj, "")
    if scene.referents.get(obj):  # a door (a portal) answers to no referent of its own
        return False
    return name == "door" or bool(DOOR_TO.match(name) or X_DOOR.match(name))


def display_names(scene: Scene) -> dict[int, str]:
    """A readable name per visible object: the longest name it answers to that the room or the
    inventory text shows and no other visible object answers to; doors as ``door to ROOM``; else
    the simulator's canonical name."""
    text = f"{scene.look}\n{scene.inventory_text}".lower()
    owners: dict[str, set[int]] = {}
    for obj, name in scene.names.items():
        for r in {name, *scene.referents.get(obj, ())}:
            owners.setdefault(r.lower(), set()).add(obj)
    out: dict[int, str] = {}
    for obj, name in scene.names.items():
        if is_door(scene, obj):
            out[obj] = door_label(name, scene.look) or name
            continue
        best = name
        for r in sorted({name, *scene.referents.get(obj, ())}, key=len, reverse=True):
            if owners.get(r.lower()) == {obj} and _shown(r.lower(), text):
                best = r
                break
        out[obj] = best
    taken: dict[str, int] = {}
    for obj, label in list(out.items()):
        if label in taken and taken[label] != obj:  # two objects would read the same: canonical names
            out[obj] = scene.names[obj]
            out[taken[label]] = scene.names[taken[label]]
        taken[label] = obj
    return out


def _shown(phrase: str, text: str) -> bool:
    return re.search(rf"(?<![a-z0-9]){re.escape(phrase)}(?![a-z0-9])", text) is not None


__all__ = ["TEMPLATES", "Combo", "Scene", "display_names", "door_label", "in_order", "is_door", "read_scene"]
