"""A whole environment in one module: the recipe of docs/environments.md, "Add an environment".

A number line of ``cells`` cells; the agent starts at 0 and must reach the goal cell by moving
left or right. No explorer is registered: the smoke run plays it with random valid actions
(``candidate_actions``). Importing this module registers it as ``toy_line``.
"""

from __future__ import annotations

import random
from typing import Any

from atlas.core.types import Task
from atlas.envs import EnvParam, register_env
from atlas.protocols.env import Action, Environment, StepResult
from atlas.protocols.llm import ToolSpec

NAME = "toy_line"


class ToyLineEnv:
    name = NAME
    max_steps = 10

    def __init__(self, cells: int = 5, family_mode: bool = True) -> None:
        self.cells, self.family_mode = cells, family_mode
        self.pos, self.goal, self.steps = 0, 0, 0

    def clone(self) -> ToyLineEnv:
        return ToyLineEnv(self.cells, self.family_mode)

    def generate_tasks(self, n: int, seed: int) -> list[Task]:
        return self.generate_family_tasks(n, seed, seed)

    def generate_family_tasks(self, n: int, family: int, seed: int) -> list[Task]:
        goals = [random.Random(f"{family}/{seed + i}").randrange(1, self.cells) for i in range(n)]
        return [
            Task(id=f"toy-{seed + i}", description=f"Reach cell {g}.", domain=NAME, metadata={"goal": g})
            for i, g in enumerate(goals)
        ]

    def reset(self, task: Task) -> dict[str, Any]:
        self.pos, self.goal, self.steps = 0, int(task.metadata["goal"]), 0
        return self.observe()

    def step(self, action: Action) -> StepResult:
        delta = {"left": -1, "right": 1}.get(action.args.get("direction", ""))
        if action.tool != "move" or delta is None:
            return StepResult(self.observe(), error="move(direction='left'|'right') is the only action")
        self.steps += 1
        self.pos = min(max(self.pos + delta, 0), self.cells - 1)
        return StepResult(
            self.observe(), done=self.success() or self.steps >= self.max_steps, success=self.success()
        )

    def observe(self) -> dict[str, Any]:
        return {"cell": self.pos, "cells": self.cells}

    def success(self) -> bool:
        return self.pos == self.goal

    def score(self) -> float:
        return max(0.5, 1 - self.steps / 20) if self.success() else 0.0

    def steps_taken(self) -> int:
        return self.steps

    def tools(self) -> list[ToolSpec]:
        params = {
            "type": "object",
            "properties": {"direction": {"type": "string", "enum": ["left", "right"]}},
            "required": ["direction"],
            "additionalProperties": False,
        }
        return [ToolSpec(name="move", description="Move one cell left or right.", parameters=params)]

    def candidate_actions(self, observation: dict[str, Any]) -> list[Action]:
        return [Action("move", {"direction": d}) for d in ("left", "right")]

    def format_goal(self, task: Task) -> str:
        return task.description

    def summarize_observation(self, observation: dict[str, Any]) -> str:
        return f"You are on cell {observation['cell']} of {observation['cells']}."


def schema(env: Environment) -> dict[str, Any]:
    """What the meta-agent is told about the domain."""
    return {
        "summary": "A number line; reach the goal cell by moving left or right.",
        "task": {"goal": "'Reach cell N.'", "observation": {"cell": "int", "cells": "int"}},
        "episode": {"steps": "[{action, observation}]", "success": "bool", "score": "float"},
    }


def oracle(env: Environment, task: Task, level: str) -> str:
    """Headroom advice: the answer (never shown to a design)."""
    return f"Move right {task.metadata['goal']} times."


register_env(
    NAME,
    ToyLineEnv,
    params=[EnvParam("cells", int, 5, "Cells of the toy line.", min=2)],
    context_schema=schema,
    oracle_advice=oracle,
)
