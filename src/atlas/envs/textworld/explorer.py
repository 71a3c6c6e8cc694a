"""TextWorld's ExplorerPolicy: take what the objective names, open what is closed, explore exits
breadth-first by room name."""

from __future__ import annotations

import random
import re
from typing import Any

from atlas.core.types import Task
from atlas.protocols.env import Action, Environment

ROOM = re.compile(r"-= (.+?) =-")


class TextWorldExplorer:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.objective = ""
        self.room = ""
        self.tried: dict[str, set[str]] = {}
        self.done_cmds: set[str] = set()

    def next_action(self, obs: dict[str, Any]) -> Action | None:
        text = obs.get("text", "")
        if not self.objective:  # the intro before the first room header states the objective
            self.objective = ROOM.split(text, maxsplit=1)[0].lower()
        m = ROOM.search(text)
        if m:
            self.room = m.group(1)
        cmds = obs.get("admissible_commands") or []
        if not cmds:
            return None
        tried = self.tried.setdefault(self.room, set())

        def pick(options: list[str]) -> Action:
            choice = sorted(options)[0]
            tried.add(choice)
            self.done_cmds.add(f"{self.room}|{choice}")
            return Action("act", {"command": choice})

        wanted = [c for c in cmds if c.startswith("take ") and c[5:].split(" from ")[0] in self.objective]
        if wanted:
            return pick(wanted)
        for verb in ("eat ", "prepare meal", "cook ", "slice ", "dice ", "chop "):
            acts = [c for c in cmds if c.startswith(verb) and f"{self.room}|{c}" not in self.done_cmds]
            if acts:
                return pick(acts)
        opens = [c for c in cmds if c.startswith("open ") and f"{self.room}|{c}" not in self.done_cmds]
        if opens:
            return pick(opens)
        exits = [c for c in cmds if c.startswith("go ")]
        fresh = [c for c in exits if c not in tried]
        if fresh:
            return pick([self.rng.choice(fresh)])
        if exits:
            return Action("act", {"command": self.rng.choice(exits)})
        return Action("act", {"command": self.rng.choice(cmds)})


def make_planner(env: Environment, task: Task, rng: random.Random) -> TextWorldExplorer:
    """TextWorld's explorer for one episode (registered in ``atlas.envs.registry``)."""
    return TextWorldExplorer(rng)


__all__ = ["TextWorldExplorer", "make_planner"]
