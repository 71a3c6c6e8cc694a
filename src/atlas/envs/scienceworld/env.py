"""ScienceWorld (Wang et al. 2022) behind ATLAS's environment protocol (optional extra
``atlas-memory[scienceworld]``; needs a Java runtime).

A task is one variation of one task type (``boil``, ``find-living-thing``, ``use-thermometer`` …);
task types are the families. The agent has one tool, ``act(command)``, and a short list of
commands a turn (``actions.short_list``: at most 30 of the simulator's hundreds of valid ones).
``score()`` is ScienceWorld's score / 100, readable after every step; success is the task
completed. Splits are the benchmark's own (``split_tasks``). A simulator that dies or hangs
mid-episode is replaced and the episode's commands replayed once (the simulator is
deterministic); if that fails too, the episode ends as failed with the reason in its last step.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

from atlas.core.types import Task
from atlas.envs.scienceworld import catalog
from atlas.envs.scienceworld.actions import LIMIT, Choice, short_list
from atlas.envs.scienceworld.scene import Scene, read_scene, room_of
from atlas.envs.scienceworld.simulator import SIMULATORS, STEP_TIMEOUT_S, Simulator, SimulatorDied
from atlas.errors import ConfigError, EnvError
from atlas.protocols.env import Action, StepResult
from atlas.protocols.llm import ToolSpec

NAME = "scienceworld"
ACT = (
    "Run one ScienceWorld command. Copy one of the listed actions exactly "
    "(e.g. 'open door to kitchen', 'pick up thermometer', 'focus on red light bulb')."
)
# Steps a task type gets by default: a little more than the benchmark's longest gold paths of the
# type (the supported types' gold paths: find 5-16, lifespan 4-9, use-thermometer 14-22).
MAX_STEPS = {
    "find-living-thing": 20,
    "find-animal": 20,
    "find-plant": 20,
    "find-non-living-thing": 15,
    "lifespan-longest-lived": 12,
    "lifespan-shortest-lived": 12,
    "lifespan-longest-lived-then-shortest-lived": 12,
    "use-thermometer": 30,
    "chemistry-mix-paint-secondary-color": 30,
    "chemistry-mix-paint-tertiary-color": 40,
}
DEFAULT_MAX_STEPS = 60
_descriptions: dict[tuple[str, int], str] = {}
_descriptions_lock = threading.Lock()


def _ids(task: Task) -> tuple[str, int]:
    try:
        return str(task.metadata["task_type"]), int(task.metadata["variation"])
    except (KeyError, TypeError, ValueError) as exc:
        raise EnvError(f"task {task.id!r} is not a ScienceWorld task (metadata lacks {exc})") from exc


class ScienceWorldEnv:
    """Parameters: ``task_type`` (one name or a comma list; default ``find-living-thing``),
    ``max_steps`` (per task type, see ``MAX_STEPS``), ``split`` (what ``generate_tasks`` draws from
    when the caller names no split), ``step_timeout`` (seconds before a silent simulator is
    killed), ``limit`` (actions offered a turn)."""

    name = NAME
    step_in_thread = True  # a step is a JVM round trip: run it off the event loop

    def __init__(
        self,
        *,
        task_type: str | list[str] | tuple[str, ...] | None = None,
        max_steps: int | None = None,
        split: str = "test",
        family_mode: bool = True,
        family: int | None = None,
        step_timeout: float = STEP_TIMEOUT_S,
        limit: int = LIMIT,
    ) -> None:
        self.task_types = catalog.task_types(task_type)
        if split not in catalog.SPLITS:
            raise ConfigError(f"ScienceWorld splits are {', '.join(catalog.SPLITS)}, got {split!r}")
        if max_steps is not None and max_steps < 1:
            raise ConfigError("max_steps must be positive")
        if not 1 <= limit <= 200:
            raise ConfigError(f"limit is 1..200 actions a turn, got {limit}")
        self._max_steps_set = max_steps
        self.split = split
        self.family_mode = family_mode
        self.family = family
        self.step_timeout = step_timeout
        self.limit = limit
        self._sim: Simulator | None = None
        self._finalizer: weakref.finalize | None = None
        self._task: Task | None = None
        self._goal = ""
        self._commands: list[str] = []  # sent this episode, for a replay after a simulator death
        self._scene: Scene | None = None
        self._choices: dict[str, Choice] = {}
        self._text = ""
        self._raw_score = 0.0
        self._completed = False
        self._done = False
        self._steps = 0
        self._focused: set[int] = set()
        self.failure: str | None = None  # why the simulator could not finish the episode
        self.restarts = 0

    # --- configuration -------------------------------------------------------------------------

    @property
    def max_steps(self) -> int:
        if self._max_steps_set is not None:
            return self._max_steps_set
        types = [self._task.metadata["task_type"]] if self._task is not None else list(self.task_types)
        return max(MAX_STEPS.get(t, DEFAULT_MAX_STEPS) for t in types)

    def clone(self) -> ScienceWorldEnv:
        return ScienceWorldEnv(
            task_type=self.task_types,
            max_steps=self._max_steps_set,
            split=self.split,
            family_mode=self.family_mode,
            family=self.family,
            step_timeout=self.step_timeout,
            limit=self.limit,
        )

    # --- tasks ---------------------------------------------------------------------------------

    def _task_of(self, task_type: str, variation: int) -> Task:
        split = catalog.split_of(task_type, variation)
        return Task(
            id=f"{NAME}-{task_type}-v{variation}",
            description=f"ScienceWorld {task_type} (variation {variation})",
            domain=NAME,
            metadata={
                "env": NAME,
                "task_type": task_type,
                "variation": variation,
                "split": split,
                "family": sorted(catalog.SPLIT_SIZES).index(task_type),
                "scenario": task_type,
                "seed": f"{task_type}/{variation}",
            },
        )

    def split_tasks(self, split: str, n: int, seed: int) -> list[Task]:
        """``n`` tasks of the benchmark's ``split`` (train / dev / test), spread over the task types;
        ``seed`` picks the variations and their order. Never a task of another split."""
        return [self._task_of(t, v) for t, v in catalog.pick(self.task_types, split, n, seed)]

    def generate_tasks(self, n: int, seed: int) -> list[Task]:
        """Tasks of ``split`` (the constructor's, default ``test``) for callers that name no split."""
        return self.split_tasks(self.split, n, seed)

    def generate_family_tasks(self, n: int, family: int, seed: int) -> list[Task]:
        """Tasks of one task type (``family`` indexes the configured types). A caller that names no
        split gets ``train`` when ``seed == family`` (the collection tasks of a family-mode run) and
        ``self.split`` otherwise, so collection and deployment never share a variation."""
        task_type = self.task_types[family % len(self.task_types)]
        split = "train" if seed == family and self.split != "train" else self.split
        return [self._task_of(t, v) for t, v in catalog.pick((task_type,), split, n, seed)]

    def format_goal(self, task: Task) -> str:
        """The task description ScienceWorld gives for this variation (read once, then cached)."""
        key = _ids(task)
        with _descriptions_lock:
            known = _descriptions.get(key)
        if known is not None:
            return known
        sim = SIMULATORS.take()
        try:
            sim.call(lambda s: s.load(key[0], key[1], "", False), self.step_timeout)
            text = str(sim.call(lambda s: s.getTaskDescription(), self.step_timeout))
        finally:
            SIMULATORS.give(sim)
        with _descriptions_lock:
            _descriptions[key] = text
        return text

    # --- the simulator -------------------------------------------------------------------------

    def _simulator(self) -> Simulator:
        if self._sim is None or not self._sim.alive:
            self._sim = SIMULATORS.take()
            if self._finalizer is not None:
                self._finalizer.detach()
            self._finalizer = weakref.finalize(self, SIMULATORS.give, self._sim)
        return self._sim

    def _load(self, task: Task, gold: bool) -> list[str]:
        """Load ``task`` (its gold path generated when ``gold``) and play the opening ``look around``."""
        task_type, variation = _ids(task)
        sim = self._simulator()
        timeout = max(self.step_timeout, 60.0)
        sim.call(lambda s: s.load(task_type, variation, "", gold), timeout)
        path = [str(a) for a in sim.call(lambda s: list(s.getGoldActionSequence()), timeout)] if gold else []
        self._text = str(sim.call(lambda s: s.step("look around"), self.step_timeout))
        self._goal = str(sim.call(lambda s: s.getTaskDescription(), self.step_timeout))
        with _descriptions_lock:
            _descriptions[(task_type, variation)] = self._goal
        return path

    def _refresh(self) -> None:
        sim = self._simulator()
        self._raw_score = float(sim.call(lambda s: s.getScore(), self.step_timeout))
        self._completed = bool(sim.call(lambda s: s.getCompleted(), self.step_timeout))
        scene = sim.call(lambda s: read_scene(s, self._goal), self.step_timeout)
        scene.focused = frozenset(self._focused)
        self._scene = scene
        self._choices = {c.label: c for c in short_list(scene, self.limit)}

    def _begin(self, task: Task, gold: bool) -> list[str]:
        self._task = task
        self._commands, self._focused = [], set()
        self._steps, self._done, self.failure = 0, False, None
        self._raw_score, self._completed = 0.0, False
        path: list[str] = []
        for attempt in range(2):
            try:
                path = self._load(task, gold)
                self._refresh()
                return path
            except SimulatorDied as exc:
                self.restarts += 1
                if attempt == 1:
                    self._fail(f"the simulator could not load the task: {exc}")
        return path

    def _fail(self, reason: str) -> None:
        self.failure = reason
        self._done = True
        self._choices = {}
        self._text = f"The ScienceWorld simulator failed ({reason}); the episode ends."

    def reset(self, task: Task) -> dict[str, Any]:
        self._begin(task, gold=False)
        return self.observe()

    def gold_path(self, task: Task) -> list[str]:
        """Reset to ``task`` and return the benchmark's gold path for it (tests, the benchmark and
        the oracle advice; never a design or the agent)."""
        return self._begin(task, gold=True)

    def _send(self, command: str) -> str:
        sim = self._simulator()
        text = str(sim.call(lambda s: s.step(command), self.step_timeout))
        if text.startswith("Ambiguous request"):  # the parser asks which object: take its first reading
            text = str(sim.call(lambda s: s.step("0"), self.step_timeout))
        return text

    def _replay(self) -> None:
        """A new simulator at the state the dead one was in: reload the task, resend the commands."""
        assert self._task is not None
        if self._sim is not None:
            self._sim.kill("replaced after a failure")
        self._sim = None
        self.restarts += 1
        self._load(self._task, gold=False)
        for command in self._commands:
            self._send(command)

    def close(self) -> None:
        """Give the simulator back to the pool (the env can be reset again later)."""
        if self._finalizer is not None:
            self._finalizer()
            self._finalizer = None
        self._sim = None

    def kill_simulator(self) -> int | None:
        """End this env's simulator process now (tests of the recovery path); its pid, if any."""
        pid = self._sim.pid if self._sim is not None else None
        if self._sim is not None and self._sim._proc is not None:
            self._sim._proc.kill()
        return pid

    # --- protocol ------------------------------------------------------------------------------

    def tools(self) -> list[ToolSpec]:
        command: dict[str, Any] = {"type": "string", "description": "one of the listed actions"}
        if self._task is not None and not self._done and self._choices:
            command["enum"] = list(self._choices)
        return [
            ToolSpec(
                "act",
                ACT,
                {
                    "type": "object",
                    "properties": {"command": command},
                    "required": ["command"],
                    "additionalProperties": False,
                },
            )
        ]

    def observe(self) -> dict[str, Any]:
        if self._task is None:
            raise EnvError(f"{NAME}: step/observe called before reset(task)")
        scene = self._scene
        return {
            "text": self._text,
            "inventory": scene.inventory_text.strip() if scene is not None else "",
            "location": room_of(scene.look) if scene is not None else "",
            "score": round(self.score(), 4),
            "actions": [] if self._done else list(self._choices),
            "steps_taken": self._steps,
            "steps_left": max(0, self.max_steps - self._steps),
        }

    def step(self, action: Action) -> StepResult:
        if self._task is None:
            raise EnvError(f"{NAME}: step called before reset(task)")
        if self._done:
            return StepResult(
                self.observe(), done=True, success=self.success(), counted=False, error="The episode is over."
            )
        command = action.args.get("command") if isinstance(action.args, dict) else None
        if action.tool != "act" or not isinstance(command, str) or not command.strip():
            return StepResult(
                self.observe(),
                counted=False,
                error='the only tool is act(command), e.g. {"command": "look around"}',
            )
        command = " ".join(command.strip().split())
        choice = self._choices.get(command)
        sent = choice.command if choice is not None else command
        error: str | None = None
        for attempt in range(2):
            try:
                if attempt:
                    self._replay()
                self._text = self._send(sent)
                self._commands.append(sent)
                if choice is not None and choice.template == 11:
                    self._focused.update(choice.objects)
                self._refresh()
                break
            except SimulatorDied as exc:
                if attempt == 1:
                    self._fail(str(exc))
                    error = f"simulator failure: {exc}"
        self._steps += 1
        if self._text.startswith("No known action matches"):
            error = f"{command!r} is not a command ScienceWorld understands here; choose a listed action."
        if not self._done:
            if self._raw_score < 0 or self._completed or self.success():
                self._done = True
            elif self._steps >= self.max_steps:
                self._done = True
                self._text += f"\n(Out of steps: {self._steps}/{self.max_steps}.)"
        if self._done:
            self._choices = {}
        return StepResult(self.observe(), done=self._done, success=self.success(), error=error)

    def success(self) -> bool:
        return self._raw_score >= 1.0

    def score(self) -> float:
        """ScienceWorld's score / 100 in [0, 1] (a failed task, -100 in ScienceWorld, is 0)."""
        return min(1.0, max(0.0, self._raw_score))

    def steps_taken(self) -> int:
        return self._steps

    @property
    def done(self) -> bool:
        return self._done

    def candidate_actions(self, observation: dict[str, Any]) -> list[Action]:
        return [Action("act", {"command": label}) for label in observation.get("actions") or []]

    def summarize_observation(self, observation: dict[str, Any]) -> str:
        parts = [str(observation.get("text", "")).strip()]
        location = str(observation.get("location", "")).strip()
        if location and location not in parts[0]:
            parts.append(f"You are in the {location}.")
        inventory = str(observation.get("inventory", "")).strip()
        if inventory and inventory not in parts[0]:
            parts.append(" ".join(inventory.split()))
        parts.append(f"Score: {round(100 * float(observation.get('score', 0.0)))}/100.")
        return "\n".join(p for p in parts if p)

    def task_instructions(self) -> str:
        return (
            "You are in a simulated house with rooms joined by doors (open a door before going through "
            "it). Read the goal carefully. 'focus on X' tells the simulator what the task is about: focusing "
            "on the wrong thing ends the task, so focus only when the goal asks for it. The score rises as "
            "you complete parts of the task."
        )

    # --- what the search gets ------------------------------------------------------------------

    def oracle_advice(self, task: Task, level: str) -> str:
        from atlas.envs.scienceworld.advice import oracle_advice

        return oracle_advice(self, task, level)

    def context_schema(self) -> dict[str, Any]:
        from atlas.envs.scienceworld.schema import context_schema

        return context_schema(self)


__all__ = ["MAX_STEPS", "NAME", "ScienceWorldEnv"]
