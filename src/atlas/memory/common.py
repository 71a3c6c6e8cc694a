"""Helpers shared by the memory components: input validation, trajectory rendering for prompts,
and the one way the LLM-backed strategies ask for JSON."""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError

from atlas.core import jsonsafe
from atlas.core.fields import not_a_field
from atlas.core.types import Step, Task, Trajectory
from atlas.errors import InvalidInputError, LLMResponseError

if TYPE_CHECKING:
    from atlas.infra.llm.client import LLMClient

M = TypeVar("M", bound=BaseModel)


def _field_path(loc: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in loc) or "<root>"


def _problem(root: type[BaseModel], err: Any) -> str:
    loc = tuple(err["loc"])
    said = not_a_field(root, loc) if err["type"] == "extra_forbidden" else err["msg"]
    return f"{_field_path(loc)}: {said}"


def _unstorable(value: Any, path: str) -> str | None:
    """The first value under ``value`` that cannot be stored as JSON text (a NaN/infinite number or
    a string with a lone UTF-16 surrogate), as ``"path: problem"``; None when everything is fine."""
    if isinstance(value, float) and not math.isfinite(value):
        return f"{path}: {value} is not a finite number"
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            return f"{path}: contains a lone surrogate {value[exc.start]!r} at position {exc.start}, not valid UTF-8"
        return None
    if isinstance(value, dict):
        items: Any = value.items()
    elif isinstance(value, list | tuple):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        found = _unstorable(item, f"{path}.{key}" if path else str(key))
        if found:
            return found
    return None


MAX_TRAJECTORY_CHARS = 2_000_000  # one trajectory as JSON; a bigger one is refused, not stored whole


def check_size(value: Any, what: str = "trajectory") -> None:
    """Refuse a trajectory over ``MAX_TRAJECTORY_CHARS`` (as JSON text or as parsed data) or nested
    deeper than ``jsonsafe.MAX_DEPTH``, before any work is done on it."""
    if isinstance(value, str | bytes):
        size = len(value)
    else:
        jsonsafe.check_depth(value, what=f"invalid {what}")
        size = len(json.dumps(value, default=str, ensure_ascii=False))
    if size > MAX_TRAJECTORY_CHARS:
        raise InvalidInputError(
            f"invalid {what}: {size} characters of JSON, over the limit of "
            f"{MAX_TRAJECTORY_CHARS}; store a shorter or summarized trajectory"
        )


def check_score_field(data: dict[str, Any], prefix: str = "invalid trajectory: ") -> None:
    """``score`` must be a JSON number: pydantic would read the string "0.9" as one."""
    if "score" in data and (isinstance(data["score"], bool) or not isinstance(data["score"], int | float)):
        raise InvalidInputError(f"{prefix}score: must be a number from 0 to 1, got {data['score']!r}")


def check_storable(traj: Trajectory) -> Trajectory:
    """Refuse what would fail (or mislead) only when written: a score outside 0..1, NaN/infinite
    numbers and strings that are not valid UTF-8, anywhere in the trajectory. Raises
    InvalidInputError naming the field, before anything is written."""
    if not math.isfinite(traj.score) or not 0.0 <= traj.score <= 1.0:
        raise InvalidInputError(
            f"invalid trajectory: score: must be a number from 0 to 1, got {traj.score} "
            "(normalize the reward into 0..1)"
        )
    problem = _unstorable(traj.model_dump(), "")
    if problem:
        raise InvalidInputError(f"invalid trajectory: {problem}; fix or remove that value")
    return traj


def check_success_field(data: dict[str, Any], prefix: str = "invalid trajectory: ") -> None:
    """``success`` must be a JSON boolean: pydantic would read "yes", "no", 1 or 0 as one."""
    if "success" in data and not isinstance(data["success"], bool):
        raise InvalidInputError(f"{prefix}success: must be true or false, got {data['success']!r}")


def validate_k(k: Any, name: str = "k") -> int:
    """``k`` must be an int >= 1: asking for 0 or -3 items is a caller bug, not "nothing found"."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InvalidInputError(f"{name}: must be an integer >= 1, got {k!r}")
    return k


def validate_trajectory(value: Any) -> Trajectory:
    """Return a validated ``Trajectory`` from a Trajectory, dict or JSON text.

    Raises InvalidInputError naming the offending field(s); callers validate *before* writing, so a
    bad trajectory leaves nothing behind.
    """
    if isinstance(value, str | bytes):
        check_size(value)
        value = jsonsafe.loads(value, what="invalid trajectory")
        if not isinstance(value, dict):
            raise InvalidInputError(f"invalid trajectory: expected a JSON object, got {type(value).__name__}")
    try:
        if isinstance(value, Trajectory):
            # re-validate: model_construct() or mutation of nested dicts can bypass validation
            data = value.model_dump()
            check_size(data)
            return check_storable(Trajectory.model_validate(data))
        if isinstance(value, dict):
            if "task" not in value:
                raise InvalidInputError("invalid trajectory: field 'task' is required")
            check_size(value)
            check_success_field(value)
            check_score_field(value)
            return check_storable(Trajectory.model_validate(value))
    except ValidationError as exc:
        problems = "; ".join(_problem(Trajectory, e) for e in exc.errors()[:5])
        raise InvalidInputError(f"invalid trajectory: {problems}") from exc
    raise InvalidInputError(
        f"invalid trajectory: expected Trajectory, dict or JSON, got {type(value).__name__}"
    )


def validate_task(value: Any) -> Task:
    """Accept a Task, a dict or a plain description string."""
    if isinstance(value, Task):
        return value
    try:
        if isinstance(value, str):
            return Task(description=value)
        if isinstance(value, dict):
            return Task.model_validate(value)
    except ValidationError as exc:
        problems = "; ".join(_problem(Task, e) for e in exc.errors()[:5])
        raise InvalidInputError(f"invalid task: {problems}") from exc
    raise InvalidInputError(f"invalid task: expected Task, dict or str, got {type(value).__name__}")


def render_trajectory(trajectory: Trajectory, max_steps: int = 30, max_chars: int = 300) -> str:
    """A compact text rendering of a trajectory for prompts (first/last steps when long)."""
    lines = [
        f"Task: {trajectory.task.description}",
        f"Outcome: {'success' if trajectory.success else 'failure'}"
        f" (score {trajectory.score:.2f}, {len(trajectory.steps)} steps)",
    ]
    steps: list[tuple[int | None, Step | None]] = list(enumerate(trajectory.steps, 1))
    if len(steps) > max_steps:
        half = max_steps // 2
        steps = [*steps[:half], (None, None), *steps[-half:]]
    for i, step in steps:
        if step is None:
            lines.append("  ...")
            continue
        obs = (step.observation or "")[:max_chars]
        line = f"  {i}. {step.action[:max_chars]} -> {obs}"
        if step.thought:
            line = f"  {i}. (thought: {step.thought[:max_chars]}) {step.action[:max_chars]} -> {obs}"
        if step.error:
            line += f" [error: {step.error[:max_chars]}]"
        lines.append(line)
    return "\n".join(lines)


async def ask_json(llm: LLMClient, system: str, user: str, schema: type[M], *, retries: int = 2) -> M:
    """Ask ``llm`` for a reply that validates against ``schema``.

    ``LLMClient.astructured`` extracts JSON from prose/fences, repairs it and re-asks with the
    validation error; after ``retries`` it raises LLMResponseError, which callers let propagate as the
    clear error (MemorySystemImpl records it per component instead of crashing the agent loop).
    """
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    result = await llm.astructured(messages, schema, retries=retries)
    if isinstance(result, schema):
        return result
    try:
        return schema.model_validate(result)
    except ValidationError as exc:
        raise LLMResponseError(f"reply does not match {schema.__name__}: {exc}", raw=str(result)) from exc


__all__ = [
    "MAX_TRAJECTORY_CHARS",
    "ask_json",
    "check_score_field",
    "check_size",
    "check_storable",
    "check_success_field",
    "render_trajectory",
    "validate_k",
    "validate_task",
    "validate_trajectory",
]
