"""ALFWorld's ExplorerPolicy: an admissible-command heuristic that reads only what a player sees.

It parses the goal ("put a hot mug in countertop"), visits receptacles (likely ones for the
object first), opens closed ones, takes a matching object, uses the microwave / fridge / sink /
desk lamp as the task needs, and puts the object in a receptacle of the goal type. (``ExplorerPolicy(use_gold=True)``
replays the game's walkthrough instead, when the game has one.)
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Any

from atlas.core.types import Task
from atlas.protocols.env import Action, Environment

_PATTERNS: list[tuple[str, str]] = [
    (r"^look at (?P<obj>\w+) under the (?P<tool>\w+)$", "look"),
    (r"^examine the (?P<obj>\w+) with the (?P<tool>\w+)$", "look"),
    (r"^put a clean (?P<obj>\w+) in (?P<recep>\w+)$", "clean"),
    (r"^clean some (?P<obj>\w+) and put it in (?P<recep>\w+)$", "clean"),
    (r"^put a hot (?P<obj>\w+) in (?P<recep>\w+)$", "heat"),
    (r"^heat some (?P<obj>\w+) and put it in (?P<recep>\w+)$", "heat"),
    (r"^put a cool (?P<obj>\w+) in (?P<recep>\w+)$", "cool"),
    (r"^cool some (?P<obj>\w+) and put it in (?P<recep>\w+)$", "cool"),
    (r"^put two (?P<obj>\w+) in (?P<recep>\w+)$", "two"),
    (r"^find two (?P<obj>\w+) and put them in (?P<recep>\w+)$", "two"),
    (r"^put (?:a|an|some) (?P<obj>\w+) (?:in|on) (?P<recep>\w+)$", "place"),
]
_APPLIANCE = {"clean": "sinkbasin", "heat": "microwave", "cool": "fridge"}
# Where things usually are: visited first.
_LIKELY = (
    "countertop",
    "diningtable",
    "sidetable",
    "desk",
    "coffeetable",
    "shelf",
    "dresser",
    "fridge",
    "cabinet",
    "drawer",
    "sinkbasin",
    "stoveburner",
    "bed",
    "sofa",
    "armchair",
    "toilet",
    "garbagecan",
)


@dataclass
class Goal:
    kind: str  # place | clean | heat | cool | two | look
    obj: str
    recep: str = ""
    tool: str = ""


def parse_goal(text: str) -> Goal | None:
    text = text.strip().lower().rstrip(".")
    for pattern, kind in _PATTERNS:
        m = re.match(pattern, text)
        if m:
            d = m.groupdict()
            return Goal(kind, d["obj"], d.get("recep") or "", d.get("tool") or "")
    return None


def _base(name: str) -> str:
    return name.rsplit(" ", 1)[0] if name[-1:].isdigit() else name


class AlfExplorer:
    def __init__(self, goal: Goal | None, rng: random.Random) -> None:
        self.goal = goal
        self.rng = rng
        self.here = ""
        self.holding = ""
        self.visited: set[str] = set()
        self.seen: dict[str, str] = {}  # object name -> receptacle where last seen
        self.placed: set[str] = set()  # objects already delivered (pick_two)
        self.processed = False
        self.lamp_at = ""
        self.order: list[str] | None = None

    def _observe(self, obs: dict[str, Any], last: Action | None) -> None:
        text = obs.get("text", "")
        m = re.search(r"You arrive at ([\w ]+?\d+)\.", text)
        if m:
            self.here = m.group(1)
            self.visited.add(self.here)
        m = re.search(r"You pick up the ([\w ]+?\d+) from", text)
        if m:
            self.holding = m.group(1)
            self.seen.pop(self.holding, None)
        m = re.search(r"You move the ([\w ]+?\d+) to", text)
        if m:
            if self.goal and _base(m.group(1)) == self.goal.obj:
                self.placed.add(m.group(1))
            self.holding = ""
        if re.search(r"You (clean|heat|cool) the", text):
            self.processed = True
        for found in re.findall(r"(?:you see|In it, you see) ([^.]*)", text):
            for item in re.split(r", and |, | and ", found):
                item = item.strip()
                item = re.sub(r"^(a|an|some) ", "", item)
                if item and item != "nothing" and item[-1:].isdigit():
                    if self.here:
                        self.seen[item] = self.here
                    if _base(item) in ("desklamp", "floorlamp") and self.here:
                        self.lamp_at = self.here

    def _goto(self, cmds: list[str], target_base: str) -> Action | None:
        options = sorted(c for c in cmds if c.startswith("go to ") and _base(c[6:]) == target_base)
        return Action("act", {"command": options[0]}) if options else None

    def _explore(self, cmds: list[str]) -> Action | None:
        gos = [c for c in cmds if c.startswith("go to ")]
        if self.order is None:
            names = [c[6:] for c in gos]
            self.rng.shuffle(names)
            rank = {b: i for i, b in enumerate(_LIKELY)}
            self.order = sorted(names, key=lambda n: rank.get(_base(n), len(rank)))
        for name in self.order:
            if name not in self.visited and f"go to {name}" in cmds:
                return Action("act", {"command": f"go to {name}"})
        return None

    def _pick(self, cmds: list[str]) -> Action | None:
        assert self.goal
        takes = [
            c
            for c in cmds
            if c.startswith("take ")
            and _base(c[5:].split(" from ")[0]) == self.goal.obj
            and c[5:].split(" from ")[0] not in self.placed
        ]
        if takes:
            return Action("act", {"command": sorted(takes)[0]})
        opens = [c for c in cmds if c == f"open {self.here}"]
        if opens:
            return Action("act", {"command": opens[0]})
        for item, where in sorted(self.seen.items()):
            if _base(item) == self.goal.obj and item not in self.placed and where != self.here:
                go = f"go to {where}"
                if go in cmds:
                    return Action("act", {"command": go})
        return self._explore(cmds)

    def next_action(self, obs: dict[str, Any]) -> Action | None:
        self._observe(obs, None)
        cmds = obs.get("admissible_commands") or []
        if not cmds:
            return None
        g = self.goal
        if g is None:
            return Action("act", {"command": self.rng.choice(cmds)})
        if not self.holding or _base(self.holding) != g.obj:
            if self.holding:  # wrong thing in hand: put it down here
                puts = [c for c in cmds if c.startswith(f"move {self.holding} to ")]
                if puts:
                    return Action("act", {"command": puts[0]})
            self.processed = False
            return self._pick(cmds)
        if g.kind == "look":
            use = [c for c in cmds if c.startswith("use ") and _base(c[4:]) == g.tool]
            if use:
                return Action("act", {"command": use[0]})
            if self.lamp_at and self.here != self.lamp_at:
                return Action("act", {"command": f"go to {self.lamp_at}"})
            return self._explore(cmds)
        if g.kind in _APPLIANCE and not self.processed:
            tool = _APPLIANCE[g.kind]
            do = [c for c in cmds if c.startswith(f"{g.kind} {self.holding} with ")]
            if do:
                return Action("act", {"command": do[0]})
            return self._goto(cmds, tool) or self._explore(cmds)
        if _base(self.here) == g.recep:
            put = f"move {self.holding} to {self.here}"
            if put in cmds:
                return Action("act", {"command": put})
            if f"open {self.here}" in cmds:
                return Action("act", {"command": f"open {self.here}"})
        return self._goto(cmds, g.recep) or self._explore(cmds)


def make_planner(env: Environment, task: Task, rng: random.Random) -> AlfExplorer:
    """ALFWorld's explorer for one episode (registered in ``atlas.envs.registry``)."""
    return AlfExplorer(parse_goal(env.format_goal(task)), rng)


__all__ = ["AlfExplorer", "Goal", "make_planner", "parse_goal"]
