"""A plug-in environment where things are made from other things, and what makes what can be read only
from the result messages: gather raw materials, combine two held things; a family's recipes are fixed,
the goal names only the thing to make. The score is partial (the share of the thing's recipe tree held
so far), so an action's effect on the task shows in the score. Shares no wording with the built-ins;
no explorer is registered. Importing it registers ``crafting``.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

from atlas.core.types import Task
from atlas.envs import EnvParam, register_env
from atlas.protocols.env import Action, Environment, StepResult
from atlas.protocols.llm import ToolSpec

NAME = "crafting"
RAW = ("ore", "coal", "sand", "flax", "clay", "resin", "reed", "salt")
MADE = ("ingot", "glass", "rope", "brick", "lens", "lantern", "anchor", "kiln", "compass", "bell", "mirror")


def recipes(family: int) -> dict[str, tuple[str, str]]:
    """product -> its two inputs: four products of two raw materials, then four of a product and another
    thing (raw or made): up to three levels."""
    rng = random.Random(f"crafting-recipes/{family}")
    raw = rng.sample(RAW, 6)
    made = rng.sample(MADE, 8)
    out: dict[str, tuple[str, str]] = {}
    pairs = rng.sample(list(itertools.combinations(raw, 2)), 4)
    for product, pair in zip(made[:4], pairs, strict=True):
        out[product] = pair
    for product in made[4:]:
        first = rng.choice(list(out))
        second = rng.choice([x for x in raw + list(out) if x not in (first, product)])
        out[product] = (first, second)
    return out


def tree(product: str, book: dict[str, tuple[str, str]]) -> list[str]:
    """Every thing below ``product`` in its recipe (with repeats: a thing needed twice is listed twice)."""
    out = []
    for x in book.get(product, ()):
        out += [x, *tree(x, book)]
    return out


class CraftingEnv:
    name = NAME

    def __init__(self, max_steps: int = 14, family_mode: bool = True) -> None:
        self.max_steps, self.family_mode = max_steps, family_mode
        self.book: dict[str, tuple[str, str]] = {}
        self.sources: list[str] = []
        self.target, self.held, self.message, self.steps = "", [], "", 0
        self.best = 0.0

    def clone(self) -> CraftingEnv:
        return CraftingEnv(self.max_steps, self.family_mode)

    def generate_tasks(self, n: int, seed: int) -> list[Task]:
        return self.generate_family_tasks(n, seed, seed)

    def generate_family_tasks(self, n: int, family: int, seed: int) -> list[Task]:
        book = recipes(family)
        out = []
        for i in range(n):
            rng = random.Random(f"crafting-task/{family}/{seed + i}")
            target = rng.choice(sorted(book))
            out.append(
                Task(
                    id=f"crafting-{family}-{seed + i}",
                    description=f"Make a {target}.",
                    domain=NAME,
                    metadata={"family": family, "seed": seed + i, "target": target},
                )
            )
        return out

    def reset(self, task: Task) -> dict[str, Any]:
        self.book = recipes(int(task.metadata["family"]))
        self.target = str(task.metadata["target"])
        self.sources = sorted({x for pair in self.book.values() for x in pair if x not in self.book})
        self.held, self.message, self.steps, self.best = [], "", 0, 0.0
        return self.observe()

    def step(self, action: Action) -> StepResult:
        self.steps += 1
        if action.tool == "gather" and action.args.get("material") in self.sources:
            thing = str(action.args["material"])
            self.held.append(thing)
            self.message = f"You gather some {thing}."
        elif action.tool == "combine":
            a, b = str(action.args.get("first", "")), str(action.args.get("second", ""))
            if a not in self.held or b not in self.held or (a == b and self.held.count(a) < 2):
                self.steps -= 1
                return StepResult(self.observe(), error=f"you do not have both {a} and {b}")
            product = next((p for p, pair in self.book.items() if sorted(pair) == sorted([a, b])), "")
            if product:
                self.held.remove(a)
                self.held.remove(b)
                self.held.append(product)
                self.message = f"The {a} and the {b} become a {product}."
            else:
                self.message = f"The {a} and the {b} will not go together."
        else:
            self.steps -= 1
            return StepResult(self.observe(), error=f"unknown action {action.tool}")
        self.best = max(self.best, self._progress())
        done = self.success() or self.steps >= self.max_steps
        return StepResult(self.observe(), done=done, success=self.success())

    def _progress(self) -> float:
        """The share of the target's recipe tree held now (each thing held counts once per need)."""
        need = tree(self.target, self.book)
        held = list(self.held)
        got = 0
        for x in need:
            if x in held:
                held.remove(x)
                got += 1
        return got / len(need) if need else 0.0

    def observe(self) -> dict[str, Any]:
        return {
            "message": self.message,
            "held": sorted(self.held),
            "sources": list(self.sources),
            "steps_left": self.max_steps - self.steps,
        }

    def success(self) -> bool:
        return self.target in self.held

    def score(self) -> float:
        if self.success():
            return max(0.5, 1 - self.steps / (2 * self.max_steps))
        return round(0.4 * self.best, 4)

    def steps_taken(self) -> int:
        return self.steps

    def tools(self) -> list[ToolSpec]:
        return [
            ToolSpec(
                name="gather",
                description="Gather a raw material from the sources.",
                parameters={
                    "type": "object",
                    "properties": {"material": {"type": "string"}},
                    "required": ["material"],
                    "additionalProperties": False,
                },
            ),
            ToolSpec(
                name="combine",
                description="Combine two things you hold.",
                parameters={
                    "type": "object",
                    "properties": {"first": {"type": "string"}, "second": {"type": "string"}},
                    "required": ["first", "second"],
                    "additionalProperties": False,
                },
            ),
        ]

    def candidate_actions(self, observation: dict[str, Any]) -> list[Action]:
        held = observation["held"]
        out = [Action("gather", {"material": m}) for m in observation["sources"]]
        for a, b in sorted({tuple(sorted(p)) for p in itertools.combinations(held, 2)}):
            out.append(Action("combine", {"first": a, "second": b}))
        return out

    def format_goal(self, task: Task) -> str:
        return task.description

    def summarize_observation(self, observation: dict[str, Any]) -> str:
        o = observation
        lead = f"{o['message']} " if o.get("message") else ""
        return (
            f"{lead}You have: {', '.join(o['held']) or 'nothing'}. Sources: {', '.join(o['sources'])}. "
            f"Steps left: {o['steps_left']}."
        )


def schema(env: Environment) -> dict[str, Any]:
    return {
        "summary": "Make the named thing: gather raw materials, combine two things you hold.",
        "task": {"goal": "'Make a THING.'", "observation": "message, held, sources"},
        "episode": {"steps": "[{action, observation, score}]", "success": "bool", "score": "float"},
    }


def oracle(env: Environment, task: Task, level: str) -> str:
    book = recipes(int(task.metadata["family"]))
    steps: list[str] = []

    def make(x: str) -> None:
        if x not in book:
            steps.append(f"gather {x}")
            return
        a, b = sorted(book[x])
        make(a)
        make(b)
        steps.append(f"combine {a} {b}")

    make(str(task.metadata["target"]))
    return "Steps in order: " + ", ".join(steps) + "."


register_env(
    NAME,
    CraftingEnv,
    params=[EnvParam("max_steps", int, 14, "Actions allowed per task.", min=4)],
    context_schema=schema,
    oracle_advice=oracle,
)
