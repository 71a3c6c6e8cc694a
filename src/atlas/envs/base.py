"""Helpers every environment shares: canonical action text, tiny argument validation, and an
episode recorder that turns (action, StepResult) pairs into a ``Trajectory``.

Kept free of any domain knowledge so GraphWorld, ALFWorld, TextWorld, the policies and the
task agent all record episodes the same way (the ``Trajectory.steps[i]`` contract).
"""

from __future__ import annotations

import json
import re
from typing import Any

from atlas.core.types import Step, Task, Trajectory
from atlas.protocols.env import Action, EnumeratesActions, Environment, StepResult
from atlas.protocols.llm import ToolSpec

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
}


def action_text(tool: str, args: dict[str, Any] | None = None) -> str:
    """The canonical text of an action: ``move_to(room="room_B")``, ``look()``."""
    parts = [f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in (args or {}).items()]
    return f"{tool}({', '.join(parts)})"


def action_label(tool: str, args: dict[str, Any] | None = None) -> str:
    """An action as the agent's action list writes it: ``move_to room_B``, ``pick_up key``, ``go north``
    (a lone ``act`` tool's command alone). Advice that names actions this way is what the agent acts on."""
    values = [str(v) for v in (args or {}).values()]
    if tool == "act" and len(values) == 1:
        return values[0]
    return " ".join([tool, *values])


def listed_actions(env: Environment, observation: dict[str, Any]) -> list[str]:
    """The actions the agent is shown for ``observation``, as its list writes them (``action_label``);
    [] where the environment lists none. Read while the episode is live: a simulator's list depends on
    its state, not only on the observation."""
    if not isinstance(env, EnumeratesActions):
        return []
    return [action_label(a.tool, a.args) for a in env.candidate_actions(observation)]


def validate_args(spec: ToolSpec, args: Any) -> str | None:
    """Check ``args`` against a tool's (flat, object) JSON schema.

    Returns None when valid, else a message meant for the agent. Supports what our tool
    schemas use: ``type``, ``required``, ``properties`` with ``type``/``enum``, and
    ``additionalProperties: false``.
    """
    if not isinstance(args, dict):
        return f"arguments of {spec.name} must be a JSON object, got {type(args).__name__}"
    schema = spec.parameters or {}
    props: dict[str, Any] = schema.get("properties", {}) or {}
    missing = [k for k in schema.get("required", []) if k not in args]
    if missing:
        return f"{spec.name} is missing required argument(s): {', '.join(missing)}"
    if schema.get("additionalProperties", True) is False:
        extra = sorted(set(args) - set(props))
        if extra:
            allowed = ", ".join(props) or "none"
            return f"{spec.name} got unexpected argument(s): {', '.join(extra)} (allowed: {allowed})"
    for key, value in args.items():
        sub = props.get(key)
        if not sub:
            continue
        want = sub.get("type")
        if want in _JSON_TYPES:
            ok = isinstance(value, _JSON_TYPES[want]) and not (
                want in ("integer", "number") and isinstance(value, bool)
            )
            if not ok:
                return f"argument {key!r} of {spec.name} must be a {want}, got {json.dumps(value)}"
        if "enum" in sub and value not in sub["enum"]:
            return f"argument {key!r} of {spec.name} must be one of {sub['enum']}, got {json.dumps(value)}"
    return None


def check_action(tools: list[ToolSpec], action: Action) -> str | None:
    """None if ``action`` names a known tool with valid arguments, else the reason."""
    by_name = {t.name: t for t in tools}
    spec = by_name.get(action.tool)
    if spec is None:
        return f"unknown tool {action.tool!r}; available tools: {', '.join(by_name)}"
    return validate_args(spec, action.args)


COMMANDS_HEADER = "\nAdmissible commands:"


_WORD = re.compile(r"[a-z0-9_]+")


def words(text: str) -> list[str]:
    """Lower-case word tokens of ``text`` (names with digits and underscores stay whole)."""
    return _WORD.findall(text.lower())


def without_commands(observation_text: str) -> str:
    """An observation's text without the command list that follows ``COMMANDS_HEADER`` (the agent is
    shown the current list on its own; a memory design reads the actions from the steps)."""
    return observation_text.split(COMMANDS_HEADER, 1)[0]


NEW_ACTIONS_PER_STEP = 30
NEW_ACTIONS_PER_EPISODE = 300


class EpisodeRecorder:
    """Builds a ``Trajectory`` step by step while an episode runs (policies and the agent).

    The first observation is kept in ``metadata["initial_observation"]`` so
    ``atlas.envs.views.episode_view`` can rebuild the design's ``task`` view without
    touching the environment again.
    """

    def __init__(self, env: Environment, task: Task, first_observation: dict[str, Any]) -> None:
        self.env = env
        self.task = task
        self.first_observation = first_observation
        self.first_actions = listed_actions(env, first_observation)
        self._listed = set(self.first_actions)  # every action listed so far in this episode
        self.steps: list[Step] = []

    def record(
        self,
        tool: str | None,
        args: dict[str, Any] | None,
        result: StepResult | None,
        *,
        thought: str | None = None,
        error: str | None = None,
        raw: str | None = None,
    ) -> Step:
        """Record one turn. ``result`` is None when the action never reached the environment
        (bad JSON, unknown tool); then ``error`` explains and ``raw`` holds what was produced."""
        if result is not None:
            text = self.env.summarize_observation(result.observation)
            data: dict[str, Any] | None = result.observation
            err = error or result.error
            score: float | None = float(self.env.score())
            limit = getattr(self.env, "max_steps", None)
            ended = bool(result.done) and (not isinstance(limit, int) or self.env.steps_taken() < limit)
            new_actions = self._newly_listed(result.observation) if not result.done else []
        else:
            text = error or ""
            data = None
            err = error
            score = None
            ended = False
            new_actions = []
        action = action_text(tool, args) if tool else (raw or "(no action)")
        step = Step(
            action=action,
            observation=text,
            thought=thought,
            error=err,
            tool=tool,
            args=args,
            data=data,
            score=score,
            ended=ended,
            new_actions=new_actions or None,
        )
        self.steps.append(step)
        return step

    def _newly_listed(self, observation: dict[str, Any]) -> list[str]:
        """The actions listed for ``observation`` that no earlier list of this episode held, at most
        ``NEW_ACTIONS_PER_STEP`` and ``NEW_ACTIONS_PER_EPISODE`` in all (a simulator that lists every
        object in reach stays small)."""
        room = NEW_ACTIONS_PER_EPISODE - (len(self._listed) - len(self.first_actions))
        if room <= 0:
            return []
        new = [a for a in dict.fromkeys(listed_actions(self.env, observation)) if a not in self._listed]
        new = new[: min(NEW_ACTIONS_PER_STEP, room)]
        self._listed.update(new)
        return new

    def finish(self, **metadata: Any) -> Trajectory:
        meta = {
            "env": self.env.name,
            "steps_taken": self.env.steps_taken(),
            "initial_observation": self.first_observation,
            "initial_text": self.env.summarize_observation(self.first_observation),
            "initial_actions": self.first_actions,
            **metadata,
        }
        return Trajectory(
            task=self.task,
            steps=list(self.steps),
            success=self.env.success(),
            score=float(self.env.score()),
            metadata=meta,
        )


__all__ = [
    "EpisodeRecorder",
    "action_text",
    "check_action",
    "listed_actions",
    "validate_args",
    "without_commands",
    "words",
]
