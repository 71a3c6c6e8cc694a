"""A plug-in environment whose learnable structure is a procedure, not a place: each gadget is
built by mounting three components in an order that is the family's (the recipe), and the goal
never names them. A component out of order does not seat and wastes a step, so an agent without
memory rarely finishes in time, and what a failed episode teaches is which mounts seated. Shares no
wording with the built-ins or the depot; no explorer is registered. Importing it registers
``workbench``.
"""

from __future__ import annotations

import random
from typing import Any

from atlas.core.types import Task
from atlas.envs import EnvParam, register_env
from atlas.protocols.env import Action, Environment, StepResult
from atlas.protocols.llm import ToolSpec

NAME = "workbench"
GADGETS = ("lantern", "metronome", "periscope", "bellows", "sextant", "barometer")
COMPONENTS = ("hinge", "spring", "cog", "prism", "valve", "rotor", "clasp", "wick", "dial")
RECIPE_LENGTH = 3


def recipes(family: int) -> dict[str, list[str]]:
    rng = random.Random(f"workbench-recipes/{family}")
    return {g: rng.sample(COMPONENTS, RECIPE_LENGTH) for g in GADGETS}


class WorkbenchEnv:
    name = NAME

    def __init__(self, gadgets: int = 1, max_steps: int = 8, family_mode: bool = True) -> None:
        self.gadgets, self.max_steps, self.family_mode = gadgets, max_steps, family_mode
        self.recipe: list[str] = []
        self.gadget, self.mounted, self.tray, self.note, self.steps = "", [], [], "", 0

    def clone(self) -> WorkbenchEnv:
        return WorkbenchEnv(self.gadgets, self.max_steps, self.family_mode)

    def generate_tasks(self, n: int, seed: int) -> list[Task]:
        return self.generate_family_tasks(n, seed, seed)

    def generate_family_tasks(self, n: int, family: int, seed: int) -> list[Task]:
        out = []
        for i in range(n):
            rng = random.Random(f"workbench-task/{family}/{seed + i}")
            gadget = rng.choice(GADGETS[: self.gadgets])
            out.append(
                Task(
                    id=f"workbench-{family}-{seed + i}",
                    description=f"Put together a working {gadget}.",
                    domain=NAME,
                    metadata={"family": family, "seed": seed + i, "gadget": gadget},
                )
            )
        return out

    def reset(self, task: Task) -> dict[str, Any]:
        m = task.metadata
        self.gadget = str(m["gadget"])
        self.recipe = recipes(int(m["family"]))[self.gadget]
        self.tray = sorted(COMPONENTS, key=lambda c: random.Random(f"tray/{m['seed']}/{c}").random())
        self.mounted, self.note, self.steps = [], "", 0
        return self.observe()

    def step(self, action: Action) -> StepResult:
        part = next(iter(action.args.values()), "") if action.args else ""
        if action.tool != "mount" or part not in self.tray:
            return StepResult(self.observe(), error=f"cannot {action.tool} {part!r}: not on the tray")
        self.steps += 1
        if part == self.recipe[len(self.mounted)]:
            self.tray.remove(part)
            self.mounted.append(part)
            self.note = f"The {part} seats firmly."
        else:
            self.note = f"The {part} will not seat; you set it back on the tray."
        done = self.success() or self.steps >= self.max_steps
        return StepResult(self.observe(), done=done, success=self.success())

    def observe(self) -> dict[str, Any]:
        return {
            "gadget": self.gadget,
            "mounted": list(self.mounted),
            "tray": list(self.tray),
            "note": self.note,
            "steps_left": self.max_steps - self.steps,
        }

    def success(self) -> bool:
        return bool(self.recipe) and self.mounted == self.recipe

    def score(self) -> float:
        return max(0.5, 1 - self.steps / (2 * self.max_steps)) if self.success() else 0.0

    def steps_taken(self) -> int:
        return self.steps

    def tools(self) -> list[ToolSpec]:
        return [
            ToolSpec(
                name="mount",
                description="Mount a component from the tray onto the gadget.",
                parameters={
                    "type": "object",
                    "properties": {"component": {"type": "string", "description": "a component"}},
                    "required": ["component"],
                    "additionalProperties": False,
                },
            )
        ]

    def candidate_actions(self, observation: dict[str, Any]) -> list[Action]:
        return [Action("mount", {"component": c}) for c in observation["tray"]]

    def format_goal(self, task: Task) -> str:
        return task.description

    def summarize_observation(self, observation: dict[str, Any]) -> str:
        o = observation
        lead = f"{o['note']} " if o.get("note") else ""
        return (
            f"{lead}Building: {o['gadget']}. Mounted: {', '.join(o['mounted']) or 'nothing'}. "
            f"On the tray: {', '.join(o['tray'])}. Steps left: {o['steps_left']}."
        )


def schema(env: Environment) -> dict[str, Any]:
    return {
        "summary": "A workbench: build the named gadget by mounting components from the tray in the right order.",
        "task": {"goal": "'Put together a working GADGET.'", "observation": "gadget, mounted, tray"},
        "episode": {"steps": "[{action, observation}]", "success": "bool", "score": "float"},
    }


def oracle(env: Environment, task: Task, level: str) -> str:
    recipe = recipes(int(task.metadata["family"]))[str(task.metadata["gadget"])]
    # the actions as the agent's list writes them ("Mount the wick, then the hinge" names none of them)
    return "The recipe, in order: " + ", ".join("mount " + c for c in recipe) + "."


register_env(
    NAME,
    WorkbenchEnv,
    params=[
        EnvParam("gadgets", int, 1, "Gadgets a family's tasks ask for.", min=1, max=len(GADGETS)),
        EnvParam("max_steps", int, 8, "Mounts allowed per task.", min=RECIPE_LENGTH),
    ],
    context_schema=schema,
    oracle_advice=oracle,
)
