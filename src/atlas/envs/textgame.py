"""Shared machinery of the TextWorld-based environments (ALFWorld, TextWorld challenges).

The agent has one tool, ``act(command)``, constrained to the game's admissible commands:
during an episode ``tools()`` narrows the argument to an ``enum`` of the commands admissible
right now, so the JSON-mode agent decodes under that grammar. Observations are
``{"text", "admissible_commands", "steps_taken", "steps_left"}`` — what the player reads.
A command that is not admissible does not reach the game: the agent is told "Nothing happens."
plus what it may do, and the turn costs a step (as in ALFWorld) unless ``count_invalid=False``.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

from atlas.core.types import Task
from atlas.envs.base import COMMANDS_HEADER
from atlas.errors import EnvError
from atlas.protocols.env import Action, StepResult
from atlas.protocols.llm import ToolSpec

ACT_DESCRIPTION = (
    "Run one text command in the game. It must be one of the admissible commands listed in the "
    "observation, copied exactly (e.g. 'go to countertop 1', 'take apple 1 from countertop 1')."
)


class EnginePool:
    """Reusable game engines (TextWorld environments) per kind, so episodes do not each load a
    fresh copy of heavy native libraries (fast-downward for ALFWorld). Thread-safe."""

    def __init__(self) -> None:
        self._idle: dict[str, list[Any]] = {}
        self._lock = threading.Lock()

    def take(self, kind: str) -> Any | None:
        with self._lock:
            idle = self._idle.get(kind)
            return idle.pop() if idle else None

    def give(self, kind: str, engine: Any, limit: int = 8) -> None:
        with self._lock:
            idle = self._idle.setdefault(kind, [])
            if len(idle) < limit:
                idle.append(engine)
                return
        engine.close()


ENGINES = EnginePool()
# TextWorld, TatSu and fast-downward's translator keep shared module-level state, so engine work
# is serialized process-wide. This costs no throughput (it is CPU-bound Python under the GIL) and
# lets callers run steps in worker threads (``step_in_thread``) without blocking an event loop.
ENGINE_LOCK = threading.RLock()


class TextGameEnv:
    """Base class: subclasses provide task generation and ``_load(task) -> engine`` (a TextWorld
    environment already ``load``-ed with the task's game) plus ``engine_kind``."""

    name = "textgame"
    engine_kind = "textgame"
    step_in_thread = True  # steps take milliseconds to a few hundred ms: run them off the event loop

    def __init__(
        self,
        *,
        max_steps: int,
        score_floor: float = 0.5,
        score_horizon: int | None = None,
        count_invalid: bool = True,
    ) -> None:
        if max_steps < 1:
            raise EnvError("max_steps must be positive")
        self._max_steps = max_steps
        self.score_floor = score_floor
        self.score_horizon = score_horizon or 2 * max_steps
        self.count_invalid = count_invalid
        self._engine: Any = None
        self._state: Any = None
        self._task: Task | None = None
        self._steps = 0
        self._done = False
        self._won = False
        self._text = ""
        self._finalizer: weakref.finalize | None = None

    # --- to implement -------------------------------------------------------------------------

    def _load(self, task: Task, engine: Any | None) -> Any:
        """Load ``task``'s game into ``engine`` (or a new engine when None) and return it."""
        raise NotImplementedError

    def gold_plan(self) -> list[str] | None:
        """The current game's walkthrough, when known (tests and the gold policy; never designs)."""
        return None

    def learnable_advice(self, task: Task) -> str:
        """What a perfect memory of earlier games of ``task``'s family could know ("" if nothing)."""
        return ""

    def oracle_advice(self, task: Task, level: str) -> str:
        """Headroom advice, never shown to a design: ``full`` is the game's walkthrough (played on a
        clone), ``learnable`` what carries over between games of one family."""
        if level == "learnable":
            return self.learnable_advice(task)
        if level != "full":
            raise ValueError(f"level must be 'learnable' or 'full', got {level!r}")
        clone = self.clone()
        try:
            clone.reset(task)
            plan = clone.gold_plan()
        finally:
            clone.close()
        if not plan:
            return ""
        return "Do exactly these commands in order: " + "; ".join(plan) + "."

    # --- protocol -----------------------------------------------------------------------------

    @property
    def max_steps(self) -> int:
        return self._max_steps

    def tools(self) -> list[ToolSpec]:
        command: dict[str, Any] = {"type": "string", "description": "an admissible command"}
        if self._state is not None and not self._done:
            command["enum"] = list(self._admissible())
        return [
            ToolSpec(
                "act",
                ACT_DESCRIPTION,
                {
                    "type": "object",
                    "properties": {"command": command},
                    "required": ["command"],
                    "additionalProperties": False,
                },
            )
        ]

    def format_goal(self, task: Task) -> str:
        return task.description

    def reset(self, task: Task) -> dict[str, Any]:
        with ENGINE_LOCK:
            engine = self._engine if self._engine is not None else ENGINES.take(self.engine_kind)
            self._engine = None
            engine = self._load(task, engine)
            self._engine = engine
            state = engine.reset()
        if self._finalizer is None:
            self._finalizer = weakref.finalize(self, _release, self.engine_kind, [engine])
        else:
            self._finalizer.detach()
            self._finalizer = weakref.finalize(self, _release, self.engine_kind, [engine])
        self._state = state
        self._task = task
        self._steps = 0
        self._done = False
        self._won = bool(self._state.get("won"))
        self._text = self._clean(self._state.feedback or "")
        return self.observe()

    def clone(self) -> TextGameEnv:
        """A fresh instance with the same configuration (each game class builds its own)."""
        raise NotImplementedError

    def close(self) -> None:
        """Give the engine back to the pool (the env can be reset again later)."""
        if self._finalizer is not None:
            self._finalizer()
            self._finalizer = None
        self._engine = None

    def _clean(self, text: str) -> str:
        return text.strip()

    def _admissible(self) -> list[str]:
        return [c for c in (self._state.get("admissible_commands") or []) if c != "help"]

    def observe(self) -> dict[str, Any]:
        if self._state is None:
            raise EnvError(f"{self.name}: step/observe called before reset(task)")
        return {
            "text": self._text,
            "admissible_commands": [] if self._done else self._admissible(),
            "steps_taken": self._steps,
            "steps_left": max(0, self._max_steps - self._steps),
        }

    def step(self, action: Action) -> StepResult:
        if self._state is None:
            raise EnvError(f"{self.name}: step called before reset(task)")
        if self._done:
            return StepResult(
                self.observe(),
                done=True,
                success=self._won,
                counted=False,
                error="The episode is over; no more actions are accepted.",
            )
        if action.tool != "act":
            return StepResult(
                self.observe(),
                counted=False,
                error=f"unknown tool {action.tool!r}; the only tool is act(command)",
            )
        command = action.args.get("command") if isinstance(action.args, dict) else None
        extra = set(action.args) - {"command"} if isinstance(action.args, dict) else set()
        if not isinstance(command, str) or extra:
            return StepResult(
                self.observe(),
                counted=False,
                error='act takes exactly one string argument, e.g. {"command": "look"}',
            )
        command = " ".join(command.strip().split())
        admissible = self._admissible()
        error: str | None = None
        if command not in admissible:
            lowered = {c.lower(): c for c in admissible}
            if command.lower() in lowered:
                command = lowered[command.lower()]
            else:
                error = f"{command!r} is not an admissible command here. Admissible: {', '.join(admissible)}"
        if error is None:
            with ENGINE_LOCK:
                self._state, _, _ = self._engine.step(command)
            self._text = self._clean(self._state.feedback or "")
            self._won = bool(self._state.get("won"))
            self._steps += 1
        else:
            self._text = "Nothing happens."
            if not self.count_invalid:
                return StepResult(self.observe(), counted=False, error=error)
            self._steps += 1
        if self._won:
            self._done = True
        elif self._steps >= self._max_steps:
            self._done = True
            self._text += f"\n(Out of steps: {self._steps}/{self._max_steps}; the task failed.)"
        return StepResult(self.observe(), done=self._done, success=self._won, error=error)

    def success(self) -> bool:
        return self._won

    def score(self) -> float:
        if not self._won:
            return 0.0
        return max(self.score_floor, 1.0 - self._steps / self.score_horizon)

    def steps_taken(self) -> int:
        return self._steps

    @property
    def done(self) -> bool:
        return self._done

    def summarize_observation(self, observation: dict[str, Any]) -> str:
        text = observation.get("text", "")
        cmds = observation.get("admissible_commands") or []
        tail = f"{COMMANDS_HEADER} {', '.join(cmds)}" if cmds else ""
        return f"{text}{tail}\nSteps left: {observation.get('steps_left', 0)}."

    def candidate_actions(self, observation: dict[str, Any]) -> list[Action]:
        cmds = [c for c in observation.get("admissible_commands", []) if c not in ("look", "inventory")]
        return [Action("act", {"command": c}) for c in cmds]


def _release(kind: str, holder: list[Any]) -> None:
    if holder and holder[0] is not None:
        ENGINES.give(kind, holder[0])
        holder[0] = None


__all__ = ["ACT_DESCRIPTION", "ENGINES", "ENGINE_LOCK", "EnginePool", "TextGameEnv"]
