"""ScienceWorld's explorer (no LLM): open doors and visit rooms it has not seen, pick up and focus
on what the task text names, put what it holds into what the task names; otherwise a random
listed action that is not a focus (focusing on the wrong thing ends a task)."""

from __future__ import annotations

import random
from typing import Any

from atlas.core.types import Task
from atlas.envs.scienceworld.scene import room_of
from atlas.protocols.env import Action, Environment


class ScienceWorldExplorer:
    def __init__(self, goal: str, rng: random.Random) -> None:
        self.goal = goal.lower()
        self.rng = rng
        self.visited: set[str] = set()
        self.done: set[str] = set()

    def _named(self, label: str, verb: str) -> bool:
        thing = label[len(verb) :].split(" to ")[-1] if verb == "move " else label[len(verb) :]
        return bool(thing) and thing.lower() in self.goal

    def next_action(self, observation: dict[str, Any]) -> Action | None:
        if here := room_of(str(observation.get("text", ""))):
            self.visited.add(here)
        actions = [a for a in observation.get("actions") or [] if a not in self.done]
        if not actions:
            return None

        def take(label: str) -> Action:
            if not label.startswith(("go to ", "look around", "wait")):
                self.done.add(label)
            return Action("act", {"command": label})

        for verb in ("focus on ", "pick up ", "move "):
            wanted = [a for a in actions if a.startswith(verb) and self._named(a, verb)]
            if wanted:
                return take(wanted[0])
        doors = [a for a in actions if a.startswith("open door to ")]
        if doors:
            return take(self.rng.choice(doors))
        fresh = [a for a in actions if a.startswith("go to ") and a[6:] not in self.visited]
        if fresh:
            return take(self.rng.choice(fresh))
        safe = [a for a in actions if not a.startswith("focus on ")]
        return take(self.rng.choice(safe or actions))


def make_planner(env: Environment, task: Task, rng: random.Random) -> ScienceWorldExplorer:
    """The explorer for one episode (registered in ``atlas.envs.registry``)."""
    return ScienceWorldExplorer(env.format_goal(task), rng)


__all__ = ["ScienceWorldExplorer", "make_planner"]
