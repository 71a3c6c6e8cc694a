"""GraphWorld: carry an object through a random graph of rooms to a destination room.

Tools: ``look`` (free), ``move_to(room)``, ``pick_up(object)``, ``put_down(object)``.
Observations are dicts holding only what the agent can see from where it stands.
Invalid moves are explained in ``StepResult.error`` (and the observation's ``message``)
and cost a step (``count_invalid``); unknown tools or malformed arguments cost nothing.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

from atlas.core.types import Task
from atlas.envs.base import check_action
from atlas.envs.graphworld.world import GraphWorldParams, World, build_world
from atlas.errors import EnvError
from atlas.protocols.env import Action, StepResult
from atlas.protocols.llm import ToolSpec

NAME = "graphworld"

_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "look",
        "Look around: your room, the adjacent rooms, the objects here and what you carry. Free: uses no step.",
        {"type": "object", "properties": {}, "additionalProperties": False},
    ),
    ToolSpec(
        "move_to",
        "Move to an ADJACENT room (one step). Only rooms listed as adjacent can be entered.",
        {
            "type": "object",
            "properties": {"room": {"type": "string", "description": "an adjacent room, e.g. room_B"}},
            "required": ["room"],
            "additionalProperties": False,
        },
    ),
    ToolSpec(
        "pick_up",
        "Pick up an object lying in your current room (one step).",
        {
            "type": "object",
            "properties": {"object": {"type": "string", "description": "an object here, e.g. key"}},
            "required": ["object"],
            "additionalProperties": False,
        },
    ),
    ToolSpec(
        "put_down",
        "Put down an object you carry in your current room (one step). "
        "The task succeeds when the goal object lies in the goal room.",
        {
            "type": "object",
            "properties": {"object": {"type": "string", "description": "an object you carry"}},
            "required": ["object"],
            "additionalProperties": False,
        },
    ),
)


def _names(items: list[str]) -> str:
    return ", ".join(items) if items else "nothing"


class GraphWorldEnv:
    """One GraphWorld episode at a time; ``clone()`` for concurrent episodes.

    ``family_mode`` (default on): ``generate_tasks(n, seed)`` puts every task in family
    ``family`` (default: ``seed``), so they share a topology; off, each task is its own family.
    """

    name = NAME

    def __init__(
        self,
        params: GraphWorldParams | None = None,
        *,
        family_mode: bool = True,
        family: int | None = None,
        count_invalid: bool = True,
        constrain_args: bool = True,
        **overrides: Any,
    ) -> None:
        base = params or GraphWorldParams()
        if overrides:
            merged = base.to_dict()
            unknown = set(overrides) - set(merged)
            if unknown:
                raise EnvError(f"unknown GraphWorld parameter(s): {', '.join(sorted(unknown))}")
            merged.update(overrides)
            base = GraphWorldParams.from_dict(merged)
        self.params = base
        self.family_mode = family_mode
        self.family = family
        self.count_invalid = count_invalid
        self.constrain_args = constrain_args
        self._world: World | None = None
        self._task: Task | None = None
        self._params = base
        self._steps = 0
        self._done = False
        self._message = ""

    # --- protocol: configuration -------------------------------------------------------------

    @property
    def max_steps(self) -> int:
        return self._params.max_steps

    def clone(self) -> GraphWorldEnv:
        return GraphWorldEnv(
            self.params,
            family_mode=self.family_mode,
            family=self.family,
            count_invalid=self.count_invalid,
            constrain_args=self.constrain_args,
        )

    def tools(self) -> list[ToolSpec]:
        """The four tools. During an episode (``constrain_args``) each argument is narrowed to an
        ``enum`` of what is valid right now — adjacent rooms, objects here, objects carried — so a
        JSON-mode agent decodes under that grammar; an empty choice keeps the plain string (the
        call then gets the environment's explanation)."""
        if not self.constrain_args or self._world is None or self._done:
            return list(_TOOLS)
        w = self._world
        choices = {
            "move_to": w.adjacency[w.location],
            "pick_up": w.objects_in(w.location),
            "put_down": list(w.inventory),
        }
        out = []
        for spec in _TOOLS:
            values = choices.get(spec.name)
            if values:
                ((key, prop),) = spec.parameters["properties"].items()
                params = {**spec.parameters, "properties": {key: {**prop, "enum": list(values)}}}
                spec = ToolSpec(spec.name, spec.description, params)
            out.append(spec)
        return out

    # --- tasks -------------------------------------------------------------------------------

    def _make_task(self, seed: int, family: int) -> Task:
        world = build_world(self.params, seed=seed, family=family)
        return Task(
            id=f"{NAME}-f{family}-s{seed}",
            description=f"Bring the {world.target_object} to {world.destination}.",
            domain=NAME,
            metadata={"env": NAME, "seed": seed, "family": family, "params": self.params.to_dict()},
        )

    def generate_tasks(self, n: int, seed: int) -> list[Task]:
        """``n`` tasks with seeds ``seed, seed+1, …``; one family (``self.family`` or ``seed``)
        in family mode, else each task its own topology."""
        if not self.family_mode:
            return [self._make_task(seed + i, seed + i) for i in range(n)]
        family = self.family if self.family is not None else seed
        return self.generate_family_tasks(n, family, seed)

    def generate_family_tasks(self, n: int, family: int, seed: int) -> list[Task]:
        return [self._make_task(seed + i, family) for i in range(n)]

    def format_goal(self, task: Task) -> str:
        return task.description

    # --- episode -----------------------------------------------------------------------------

    def reset(self, task: Task) -> dict[str, Any]:
        meta = task.metadata
        if "seed" not in meta or "family" not in meta:
            raise EnvError(f"task {task.id!r} is not a GraphWorld task (metadata needs seed and family)")
        self._params = GraphWorldParams.from_dict(meta["params"]) if "params" in meta else self.params
        self._world = build_world(self._params, seed=int(meta["seed"]), family=int(meta["family"]))
        self._task = task
        self._steps = 0
        self._done = False
        self._message = f"You are in {self._world.location}."
        return self.observe()

    def _require(self) -> World:
        if self._world is None:
            raise EnvError("GraphWorld.step/observe called before reset(task)")
        return self._world

    def observe(self) -> dict[str, Any]:
        w = self._require()
        return {
            "location": w.location,
            "adjacent_rooms": list(w.adjacency[w.location]),
            "objects_here": w.objects_in(w.location),
            "inventory": list(w.inventory),
            "message": self._message,
            "steps_taken": self._steps,
            "steps_left": max(0, self._params.max_steps - self._steps),
        }

    def step(self, action: Action) -> StepResult:
        w = self._require()
        if self._done:
            return StepResult(
                self.observe(),
                done=True,
                success=self.success(),
                counted=False,
                error="The episode is over; no more actions are accepted.",
            )
        problem = check_action(list(_TOOLS), action)  # the env explains semantic errors itself
        if problem is not None:
            self._message = problem
            return StepResult(self.observe(), counted=False, error=problem)
        if action.tool == "look":
            self._message = "You look around."
            return StepResult(self.observe(), counted=False)
        error = getattr(self, f"_do_{action.tool}")(w, str(next(iter(action.args.values()))))
        if error is None or self.count_invalid:
            self._steps += 1
        counted = error is None or self.count_invalid
        if self.success():
            self._done = True
            self._message += " Task complete!"
        elif self._steps >= self._params.max_steps:
            self._done = True
            self._message += f" Out of steps ({self._steps}/{self._params.max_steps}); the task failed."
        return StepResult(
            self.observe(), done=self._done, success=self.success(), counted=counted, error=error
        )

    def _fail(self, message: str) -> str:
        self._message = message
        return message

    def _do_move_to(self, w: World, room: str) -> str | None:
        adjacent = w.adjacency[w.location]
        if room == w.location:
            return self._fail(f"You are already in {room}. Adjacent rooms: {_names(adjacent)}.")
        if room not in w.adjacency:
            return self._fail(
                f"There is no room called {room!r}. You are in {w.location}; adjacent rooms: {_names(adjacent)}."
            )
        if room not in adjacent:
            return self._fail(
                f"{room} is not adjacent to {w.location}. You can only move to an adjacent room: "
                f"{_names(adjacent)}."
            )
        w.location = room
        self._message = f"You move to {room}."
        return None

    def _do_pick_up(self, w: World, obj: str) -> str | None:
        here = w.objects_in(w.location)
        if obj in w.inventory:
            return self._fail(f"You already carry the {obj}.")
        if obj not in here:
            return self._fail(f"There is no {obj} in {w.location}. Objects here: {_names(here)}.")
        w.object_rooms[obj] = None
        w.inventory.append(obj)
        self._message = f"You pick up the {obj}."
        return None

    def _do_put_down(self, w: World, obj: str) -> str | None:
        if obj not in w.inventory:
            return self._fail(f"You do not carry a {obj}. You carry: {_names(w.inventory)}.")
        w.inventory.remove(obj)
        w.object_rooms[obj] = w.location
        self._message = f"You put down the {obj} in {w.location}."
        return None

    def success(self) -> bool:
        w = self._world
        return w is not None and w.object_rooms.get(w.target_object) == w.destination

    def score(self) -> float:
        if not self.success():
            return 0.0
        return max(self._params.score_floor, 1.0 - self._steps / self._params.score_horizon)

    def steps_taken(self) -> int:
        return self._steps

    @property
    def done(self) -> bool:
        return self._done

    # --- text and design support -------------------------------------------------------------

    def summarize_observation(self, observation: dict[str, Any]) -> str:
        """The observation as text; during an episode the goal room is marked where it is in sight
        (the goal is public: it is in the task's text)."""
        o = observation
        goal = self._world.destination if self._world is not None else None

        def mark(room: str) -> str:
            return f"{room} (goal room)" if room == goal else room

        message = o.get("message", "").strip()
        if message == f"You are in {o['location']}.":
            message = ""  # the first observation: the line below says it
        parts = [message] if message else []
        parts.append(
            f"You are in {mark(o['location'])}. Adjacent rooms: {_names([mark(r) for r in o['adjacent_rooms']])}. "
            f"Objects here: {_names(o['objects_here'])}. You carry: {_names(o['inventory'])}. "
            f"Steps left: {o['steps_left']}."
        )
        return " ".join(parts)

    def candidate_actions(self, observation: dict[str, Any]) -> list[Action]:
        """Every valid step-costing action from ``observation`` (used by RandomPolicy)."""
        o = observation
        acts = [Action("move_to", {"room": r}) for r in o["adjacent_rooms"]]
        acts += [Action("pick_up", {"object": x}) for x in o["objects_here"]]
        acts += [Action("put_down", {"object": x}) for x in o["inventory"]]
        return acts

    def task_instructions(self) -> str:
        """How a GraphWorld task is solved, for the task agent's prompt (the same for every design)."""
        return (
            "To bring an object to a room: move between adjacent rooms until the object is in your room, "
            "pick_up the object, move to the goal room, then put_down the object there. "
            "Every action uses one step."
        )

    def oracle_advice(self, task: Task, level: str) -> str:
        """Advice for the headroom measurement (``atlas.envs.graphworld.oracle``); never shown to a design."""
        from atlas.envs.graphworld.oracle import oracle_advice

        return oracle_advice(task, level, self.params)

    def seed_design(self) -> str:
        return resources.files("atlas.envs.graphworld").joinpath("design_seed.py").read_text()

    def context_schema(self) -> dict[str, Any]:
        from atlas.envs.graphworld.schema import context_schema

        return context_schema(self)


__all__ = ["NAME", "GraphWorldEnv"]
