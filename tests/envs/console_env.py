"""A console whose readings are set by levers: what sets what is learned only from what changes.

A power button and three levers (positions 1-5). While the power is off the levers are locked. Once on,
one lever sets the ``colour`` reading (its positions show the family's colours in a hidden order), one
the ``level`` reading (position = level) and one does nothing. The goal names a colour and a level; the
score rises with power, the right colour and the right level, and is 1.0 once ``confirm`` is pressed
with both right. Importing this module registers it as ``console``.
"""

from __future__ import annotations

import random
from typing import Any

from atlas.core.types import Task
from atlas.envs import register_env
from atlas.protocols.env import Action, StepResult
from atlas.protocols.llm import ToolSpec

NAME = "console"
LEVERS = ("oak", "pine", "elm")
COLOURS = ("amber", "cyan", "violet", "olive", "scarlet")
POSITIONS = range(1, 6)


def wiring(family: int) -> tuple[str, str, tuple[str, ...]]:
    """The colour lever, the level lever and the colours the colour lever shows at positions 1-5."""
    rng = random.Random(f"console/{family}")
    colour, level = rng.sample(LEVERS, 2)
    return colour, level, tuple(rng.sample(COLOURS, len(COLOURS)))


class ConsoleEnv:
    name = NAME
    max_steps = 12

    def __init__(self, family_mode: bool = True) -> None:
        self.family_mode = family_mode

    def clone(self) -> ConsoleEnv:
        return ConsoleEnv(self.family_mode)

    def generate_tasks(self, n: int, seed: int) -> list[Task]:
        return self.generate_family_tasks(n, seed, seed)

    def generate_family_tasks(self, n: int, family: int, seed: int) -> list[Task]:
        out = []
        for i in range(n):
            rng = random.Random(f"console-task/{family}/{seed + i}")
            colour, level = rng.choice(COLOURS), rng.choice(POSITIONS)
            out.append(
                Task(
                    id=f"console-{family}-{seed + i}",
                    description=f"Show the {colour} colour at level {level}, then confirm.",
                    domain=NAME,
                    metadata={"family": family, "colour": colour, "level": level},
                )
            )
        return out

    def reset(self, task: Task) -> dict[str, Any]:
        self.task, self.steps, self.power, self.confirmed, self.message = task, 0, False, False, ""
        self.colour_lever, self.level_lever, self.colours = wiring(int(task.metadata["family"]))
        self.lever = dict.fromkeys(LEVERS, 1)
        return self.observe()

    def _right(self) -> tuple[bool, bool]:
        m = self.task.metadata
        return self.colours[self.lever[self.colour_lever] - 1] == m["colour"], self.lever[
            self.level_lever
        ] == int(m["level"])

    def step(self, action: Action) -> StepResult:
        label = self.label(action)
        if label not in self.labels():
            return StepResult(self.observe(), error=f"{label!r} is not a listed action")
        self.steps += 1
        if action.tool == "press":
            self.power = not self.power
            self.message = "The console lights up." if self.power else "The console goes dark."
        elif action.tool == "pull":
            lever, position = action.args["lever"], int(action.args["position"])
            if not self.power:
                self.message = f"The {lever} lever is locked."
            else:
                self.lever[lever] = position
                self.message = f"The {lever} lever clicks into notch {position}."
        else:
            self.confirmed = self.power and all(self._right())
            self.message = "Confirmed." if self.confirmed else "Nothing to confirm."
        done = self.confirmed or self.steps >= self.max_steps
        return StepResult(self.observe(), done=done, success=self.confirmed)

    @staticmethod
    def label(action: Action) -> str:
        if action.tool == "pull":
            return f"pull {action.args.get('lever')} {action.args.get('position')}"
        return str(action.tool)

    def labels(self) -> list[str]:
        pulls = [f"pull {lever} {p}" for lever in LEVERS for p in POSITIONS if self.lever[lever] != p]
        return ["press", *pulls, "confirm"]

    def observe(self) -> dict[str, Any]:
        obs: dict[str, Any] = {"message": self.message, "power": "on" if self.power else "off"}
        if self.power:
            obs.update(
                colour=self.colours[self.lever[self.colour_lever] - 1], level=self.lever[self.level_lever]
            )
        obs["steps_left"] = self.max_steps - self.steps
        return obs

    def success(self) -> bool:
        return self.confirmed

    def score(self) -> float:
        if self.confirmed:
            return 1.0
        colour, level = self._right() if self.power else (False, False)
        return round(0.2 * self.power + 0.3 * colour + 0.3 * level, 4)

    def steps_taken(self) -> int:
        return self.steps

    def tools(self) -> list[ToolSpec]:
        lever = {
            "type": "object",
            "properties": {"lever": {"type": "string"}, "position": {"type": "integer"}},
            "required": ["lever", "position"],
        }
        empty = {"type": "object", "properties": {}}
        return [
            ToolSpec("press", "Press the power button.", empty),
            ToolSpec("pull", "Pull a lever to a notch 1-5.", lever),
            ToolSpec("confirm", "Confirm the reading.", empty),
        ]

    def candidate_actions(self, observation: dict[str, Any]) -> list[Action]:
        out = []
        for label in self.labels():
            parts = label.split()
            out.append(
                Action("pull", {"lever": parts[1], "position": int(parts[2])})
                if len(parts) == 3
                else Action(label)
            )
        return out

    def format_goal(self, task: Task) -> str:
        return task.description

    def summarize_observation(self, observation: dict[str, Any]) -> str:
        said = [observation["message"]] if observation.get("message") else []
        said.append(f"Power: {observation['power']}.")
        if "colour" in observation:
            said.append(f"Colour: {observation['colour']}. Level: {observation['level']}.")
        return " ".join([*said, f"Steps left: {observation['steps_left']}."])


register_env(NAME, ConsoleEnv)
