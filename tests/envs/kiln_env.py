"""A potter's kiln whose firings work only after the right preparation: what each clay needs before each
firing is read only from whether the firing took.

Three clays; per family, each clay needs one preparation before each of its three firings, and one
preparation cracks it (the task ends). ``fire the kiln`` moves the pot one stage on (raw, bisque, glazed,
stoneware) when the stage's preparation was done since the last firing, and otherwise leaves it as it
was. A task: fire one clay's pot to stoneware. The score is the stage reached over three. Importing this
module registers it as ``kiln``.
"""

from __future__ import annotations

import random
from typing import Any

from atlas.core.types import Task
from atlas.envs import register_env
from atlas.protocols.env import Action, StepResult
from atlas.protocols.llm import ToolSpec

NAME = "kiln"
CLAYS = ("red clay", "grey clay", "white clay")
PREPS = ("wedge the {}", "wet the {}", "trim the {} pot", "brush slip on the {} pot", "dry the {} pot")
STAGES = ("raw", "bisque", "glazed", "stoneware")
FIRE = "fire the kiln"


def needs(family: int) -> dict[str, tuple[tuple[str, ...], str]]:
    """Per clay: the preparation each firing needs (three, in order) and the one that cracks it."""
    rng = random.Random(f"kiln/{family}")
    out = {}
    for clay in CLAYS:
        order = rng.sample(PREPS, 4)
        out[clay] = (tuple(p.format(clay) for p in order[:3]), order[3].format(clay))
    return out


class KilnEnv:
    name = NAME
    max_steps = 14

    def __init__(self, family_mode: bool = True) -> None:
        self.family_mode = family_mode

    def clone(self) -> KilnEnv:
        return KilnEnv(self.family_mode)

    def generate_tasks(self, n: int, seed: int) -> list[Task]:
        return self.generate_family_tasks(n, seed, seed)

    def generate_family_tasks(self, n: int, family: int, seed: int) -> list[Task]:
        out = []
        for i in range(n):
            clay = random.Random(f"kiln-task/{family}/{seed + i}").choice(CLAYS)
            out.append(
                Task(
                    id=f"kiln-{family}-{seed + i}",
                    description=f"Fire the {clay} pot to stoneware.",
                    domain=NAME,
                    metadata={"family": family, "clay": clay},
                )
            )
        return out

    def reset(self, task: Task) -> dict[str, Any]:
        self.task, self.steps, self.stage, self.cracked = task, 0, 0, False
        self.clay = task.metadata["clay"]
        self.wants, self.spoiler = needs(int(task.metadata["family"]))[self.clay]
        self.done: list[str] = []
        self.message = f"A {self.clay} pot stands by the kiln."
        return self.observe()

    def step(self, action: Action) -> StepResult:
        label = str(action.args.get("command", action.tool))
        if label not in {str(a.args["command"]) for a in self.candidate_actions(self.observe())}:
            return StepResult(self.observe(), counted=False, error=f"{label!r} is not a listed action")
        self.steps += 1
        if label == FIRE:
            took = self.wants[self.stage] in self.done
            self.stage += took
            self.done = []
            self.message = (
                f"The firing took: the pot is {STAGES[self.stage]} now."
                if took
                else "The firing changed nothing."
            )
        elif label == self.spoiler:
            self.cracked, self.message = True, "The pot cracks from rim to foot. The work is lost."
        else:
            self.done.append(label)
            self.message = "Done."
        done = self.cracked or self.success() or self.steps >= self.max_steps
        return StepResult(self.observe(), done=done, success=self.success())

    def observe(self) -> dict[str, Any]:
        return {
            "message": self.message,
            "pot": f"{self.clay} pot",
            "stage": STAGES[self.stage],
            "done_since_firing": list(self.done),
            "steps_left": self.max_steps - self.steps,
        }

    def success(self) -> bool:
        return self.stage == len(STAGES) - 1 and not self.cracked

    def score(self) -> float:
        return self.stage / (len(STAGES) - 1)

    def steps_taken(self) -> int:
        return self.steps

    def tools(self) -> list[ToolSpec]:
        params = {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}
        return [ToolSpec("act", "Do one listed thing at the kiln.", params)]

    def candidate_actions(self, observation: dict[str, Any]) -> list[Action]:
        clay = observation["pot"].removesuffix(" pot")
        return [Action("act", {"command": c}) for c in [*(p.format(clay) for p in PREPS), FIRE]]

    def format_goal(self, task: Task) -> str:
        return task.description

    def summarize_observation(self, observation: dict[str, Any]) -> str:
        done = ", ".join(observation["done_since_firing"]) or "nothing"
        return (
            f"{observation['message']} The {observation['pot']} is {observation['stage']}. "
            f"Done since the last firing: {done}. Steps left: {observation['steps_left']}."
        )


register_env(NAME, KilnEnv)
