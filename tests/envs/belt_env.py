"""A sorting hall whose belt is routed by a panel of switches: where each setting leads is read only from
what the texts say.

Five numbered switches (``press switch N`` turns one on or off): two each set one gate of the belt, one
opens the guard, two do nothing; which is which is the family's. The two gates route the belt to one of
four bins. ``ride the belt`` (with whatever crate is held) follows the route and reports where it ended; with
the guard shut the belt jams and the task ends. At a bin, ``pick up`` takes the crate there, ``put down``
leaves the crate held, ``walk back`` returns to the dock. A task: carry a crate to a bin. The score rises
at the crate's bin (0.2), with it held (0.4), back at the dock with it (0.5), at the goal's bin with it
(0.8) and is 1.0 once it is put down there. Importing this module registers it as ``belt``.
"""

from __future__ import annotations

import random
from typing import Any

from atlas.core.types import Task
from atlas.envs import register_env
from atlas.protocols.env import Action, StepResult
from atlas.protocols.llm import ToolSpec

NAME = "belt"
BINS = ("amber", "cobalt", "jade", "umber")
CRATES = ("red crate", "blue crate", "green crate")
SWITCHES = (1, 2, 3, 4, 5)


def wiring(family: int) -> tuple[int, int, int, tuple[str, ...]]:
    """The first gate's switch, the second gate's, the guard's, and the bin of each route 0-3 (gate bits)."""
    rng = random.Random(f"belt/{family}")
    first, second, guard = rng.sample(SWITCHES, 3)
    return first, second, guard, tuple(rng.sample(BINS, 4))


class BeltEnv:
    name = NAME
    max_steps = 20

    def __init__(self, family_mode: bool = True) -> None:
        self.family_mode = family_mode

    def clone(self) -> BeltEnv:
        return BeltEnv(self.family_mode)

    def generate_tasks(self, n: int, seed: int) -> list[Task]:
        return self.generate_family_tasks(n, seed, seed)

    def generate_family_tasks(self, n: int, family: int, seed: int) -> list[Task]:
        out = []
        for i in range(n):
            rng = random.Random(f"belt-task/{family}/{seed + i}")
            crate = rng.choice(CRATES)
            source, goal = rng.sample(BINS, 2)
            out.append(
                Task(
                    id=f"belt-{family}-{seed + i}",
                    description=f"Carry the {crate} to the {goal} bin and put it down.",
                    domain=NAME,
                    metadata={"family": family, "crate": crate, "source": source, "goal": goal,
                              "on": sorted(rng.sample(SWITCHES, rng.randint(0, 2)))},
                )
            )  # fmt: skip
        return out

    def reset(self, task: Task) -> dict[str, Any]:
        m = task.metadata
        self.task, self.steps, self.best, self.jammed = task, 0, 0.0, False
        self.first, self.second, self.guard, self.bins = wiring(int(m["family"]))
        self.on = set(m["on"]) - {self.guard}
        self.at, self.held, self.crates = "dock", None, {m["crate"]: m["source"]}
        self.message = "You stand at the dock by the switch panel."
        return self.observe()

    def _route(self) -> str:
        return self.bins[2 * (self.first in self.on) + (self.second in self.on)]

    def step(self, action: Action) -> StepResult:
        label = self.label(action)
        if label not in {self.label(a) for a in self.candidate_actions(self.observe())}:
            return StepResult(self.observe(), counted=False, error=f"{label!r} is not a listed action")
        self.steps += 1
        error = None
        if label.startswith("press switch"):
            n = int(label.split()[-1])
            self.on ^= {n}
            self.message = f"Switch {n} clicks {'on' if n in self.on else 'off'}."
            if n in (self.first, self.second):
                self.message += f" The belt now runs to the {self._route()} bin."
            elif n == self.guard:
                self.message += " The guard " + ("opens." if n in self.on else "shuts.")
        elif label.startswith("ride the belt"):
            if self.guard not in self.on:
                self.message, self.jammed = "The belt jams against the shut guard. The shift ends.", True
            else:
                self.at = self._route()
                if self.held:
                    self.crates[self.held] = self.at
                self.message = f"The belt carries you to the {self.at} bin."
        elif label == "walk back":
            self.at, self.message = "dock", "You walk back to the dock."
        elif label == "pick up":
            here = [c for c, b in self.crates.items() if b == self.at and c != self.held]
            if self.held or not here:
                error = self.message = "There is nothing here to pick up."
            else:
                self.held, self.message = here[0], f"You pick up the {here[0]}."
        elif self.held:  # put down
            self.crates[self.held], self.message, self.held = self.at, f"You put down the {self.held}.", None
        else:
            error = self.message = "You hold nothing."
        self._score()
        done = self.success() or self.jammed or self.steps >= self.max_steps
        return StepResult(self.observe(), done=done, success=self.success(), error=error)

    def _score(self) -> None:
        m, s = self.task.metadata, 0.0
        if self.success():
            s = 1.0
        elif self.held == m["crate"]:
            s = 0.8 if self.at == m["goal"] else 0.5 if self.at == "dock" else 0.4
        elif self.at == m["source"]:
            s = 0.2
        self.best = max(self.best, s)

    @staticmethod
    def label(action: Action) -> str:
        return str(action.args.get("command", action.tool))

    def observe(self) -> dict[str, Any]:
        return {
            "message": self.message,
            "at": self.at,
            "held": self.held,
            "switches_on": sorted(self.on),
            "guard": "open" if self.guard in self.on else "shut",
            "crates": {c: b for c, b in self.crates.items() if c != self.held},
            "steps_left": self.max_steps - self.steps,
        }

    def success(self) -> bool:
        m = self.task.metadata
        return not self.jammed and self.held is None and self.crates[m["crate"]] == m["goal"]

    def score(self) -> float:
        return 1.0 if self.success() else self.best

    def steps_taken(self) -> int:
        return self.steps

    def tools(self) -> list[ToolSpec]:
        params = {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}
        return [ToolSpec("act", "Do one listed thing in the hall.", params)]

    def candidate_actions(self, observation: dict[str, Any]) -> list[Action]:
        held = observation.get("held")
        if observation.get("at") == "dock":
            cmds = [f"press switch {n}" for n in SWITCHES]
            cmds.append(f"ride the belt with the {held}" if held else "ride the belt empty")
        else:
            cmds = ["walk back", "pick up"]
        return [Action("act", {"command": c}) for c in [*cmds, "put down"]]

    def format_goal(self, task: Task) -> str:
        return task.description

    def summarize_observation(self, observation: dict[str, Any]) -> str:
        crates = "; ".join(f"the {c} is in the {b} bin" for c, b in observation["crates"].items())
        on = ", ".join(map(str, observation["switches_on"])) or "none"
        return (
            f"{observation['message']} You are at the {observation['at']}"
            f"{', holding the ' + observation['held'] if observation['held'] else ''}. Switches on: {on}. "
            f"The guard is {observation['guard']}. "
            f"Crates: {crates or 'none left'}. Steps left: {observation['steps_left']}."
        )


register_env(NAME, BeltEnv)
