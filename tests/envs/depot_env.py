"""A plug-in environment that shares no wording with the built-ins, for checking that discovery is
environment-blind: a depot of places joined by paths (the layout is the family's), goods lying on the
floor (placed anew each task), and the goal "Deliver the <good> to the <place>." Actions: walk <place>,
grab <good>, drop <good>. No explorer is registered (like a plug-in a user writes); it has a context
schema and oracle advice as a held-out environment needs. Importing it registers ``depot``.
"""

from __future__ import annotations

import random
from typing import Any

from atlas.core.types import Task
from atlas.envs import EnvParam, register_env
from atlas.protocols.env import Action, Environment, StepResult
from atlas.protocols.llm import ToolSpec

NAME = "depot"
PLACES = ("yard", "office", "workshop", "cold_store", "loading_dock", "north_bay", "south_bay", "gatehouse")
GOODS = ("barrel", "crate", "drum", "coil", "sack", "pallet", "cask")


def _layout(family: int, places: int) -> dict[str, list[str]]:
    rng = random.Random(f"depot-layout/{family}")
    names = list(PLACES[:places])
    rng.shuffle(names)
    paths: dict[str, set[str]] = {p: set() for p in names}
    for i in range(1, len(names)):  # a random tree, then a couple of shortcuts
        other = names[rng.randrange(i)]
        paths[names[i]].add(other)
        paths[other].add(names[i])
    for _ in range(len(names) // 3):
        a, b = rng.sample(names, 2)
        paths[a].add(b)
        paths[b].add(a)
    return {p: sorted(v) for p, v in paths.items()}


def _arg(name: str, about: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {name: {"type": "string", "description": about}},
        "required": [name],
        "additionalProperties": False,
    }


class DepotEnv:
    name = NAME
    max_steps = 16

    def __init__(self, places: int = 7, family_mode: bool = True) -> None:
        self.places, self.family_mode = places, family_mode
        self.paths: dict[str, list[str]] = {}
        self.floor: dict[str, list[str]] = {}
        self.here, self.holding, self.good, self.target, self.steps = "", [], "", "", 0
        self.note = ""

    def clone(self) -> DepotEnv:
        return DepotEnv(self.places, self.family_mode)

    def generate_tasks(self, n: int, seed: int) -> list[Task]:
        return self.generate_family_tasks(n, seed, seed)

    def generate_family_tasks(self, n: int, family: int, seed: int) -> list[Task]:
        names = sorted(_layout(family, self.places))
        out = []
        for i in range(n):
            rng = random.Random(f"depot-task/{family}/{seed + i}")
            good, start, target = rng.choice(GOODS), rng.choice(names), rng.choice(names)
            out.append(
                Task(
                    id=f"depot-{family}-{seed + i}",
                    description=f"Deliver the {good} to the {target}.",
                    domain=NAME,
                    metadata={
                        "family": family,
                        "seed": seed + i,
                        "good": good,
                        "start": start,
                        "target": target,
                    },
                )
            )
        return out

    def reset(self, task: Task) -> dict[str, Any]:
        m = task.metadata
        self.paths = _layout(int(m["family"]), self.places)
        rng = random.Random(f"depot-floor/{m['seed']}")
        names = sorted(self.paths)
        self.floor = {p: [] for p in names}
        others = [g for g in GOODS if g != m["good"]]
        for g in [m["good"], *rng.sample(others, 2)]:
            self.floor[rng.choice([p for p in names if g != m["good"] or p != m["target"]])].append(g)
        self.here, self.holding, self.steps = m["start"], [], 0
        self.good, self.target, self.note = m["good"], m["target"], ""
        return self.observe()

    def step(self, action: Action) -> StepResult:
        arg = next(iter(action.args.values()), "") if action.args else ""
        if action.tool == "walk" and arg in self.paths[self.here]:
            self.here, self.note = arg, f"You walk to the {arg}."
        elif action.tool == "grab" and arg in self.floor[self.here] and not self.holding:
            self.floor[self.here].remove(arg)
            self.holding, self.note = [arg], f"You grab the {arg}."
        elif action.tool == "drop" and arg in self.holding:
            self.holding = []
            self.floor[self.here].append(arg)
            self.note = f"You drop the {arg}."
        else:
            return StepResult(self.observe(), error=f"cannot {action.tool} {arg!r} here")
        self.steps += 1
        done = self.success() or self.steps >= self.max_steps
        return StepResult(self.observe(), done=done, success=self.success())

    def observe(self) -> dict[str, Any]:
        return {
            "position": self.here,
            "paths": list(self.paths[self.here]),
            "floor": list(self.floor[self.here]),
            "holding": list(self.holding),
            "note": self.note,
            "steps_left": self.max_steps - self.steps,
        }

    def success(self) -> bool:
        return bool(self.good) and self.good in self.floor.get(self.target, [])

    def score(self) -> float:
        return max(0.5, 1 - self.steps / 32) if self.success() else 0.0

    def steps_taken(self) -> int:
        return self.steps

    def tools(self) -> list[ToolSpec]:
        return [
            ToolSpec(
                name="walk", description="Walk along a path to a place.", parameters=_arg("place", "a place")
            ),
            ToolSpec(
                name="grab", description="Grab a good lying on the floor.", parameters=_arg("good", "a good")
            ),
            ToolSpec(name="drop", description="Drop the good you hold.", parameters=_arg("good", "a good")),
        ]

    def candidate_actions(self, observation: dict[str, Any]) -> list[Action]:
        o = observation
        acts = [Action("walk", {"place": p}) for p in o["paths"]]
        acts += [] if o["holding"] else [Action("grab", {"good": g}) for g in o["floor"]]
        return acts + [Action("drop", {"good": g}) for g in o["holding"]]

    def format_goal(self, task: Task) -> str:
        return task.description

    def summarize_observation(self, observation: dict[str, Any]) -> str:
        o = observation
        lead = f"{o['note']} " if o.get("note") else ""
        return (
            f"{lead}Position: {o['position']}. Paths lead to: {', '.join(o['paths'])}. "
            f"On the floor: {', '.join(o['floor']) or 'nothing'}. Holding: {', '.join(o['holding']) or 'nothing'}. "
            f"Steps left: {o['steps_left']}."
        )


def schema(env: Environment) -> dict[str, Any]:
    return {
        "summary": "A depot of places joined by paths; deliver the named good to the named place.",
        "task": {
            "goal": "'Deliver the GOOD to the PLACE.'",
            "observation": "position, paths, floor, holding",
        },
        "episode": {"steps": "[{action, observation}]", "success": "bool", "score": "float"},
    }


def oracle(env: Environment, task: Task, level: str) -> str:
    m = task.metadata
    return f"Find the {m['good']}, grab it, walk to the {m['target']} and drop it there."


register_env(
    NAME,
    DepotEnv,
    params=[EnvParam("places", int, 7, "Places in the depot.", min=3)],
    context_schema=schema,
    oracle_advice=oracle,
)
