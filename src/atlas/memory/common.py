"""Helpers shared by the memory components: input validation, trajectory rendering for prompts,
and the one way the LLM-backed strategies ask for JSON."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from atlas.core.types import Task, Trajectory
from atlas.errors import InvalidInputError, LLMResponseError

M = TypeVar("M", bound=BaseModel)


def _field_path(loc: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in loc) or "<root>"


def validate_trajectory(value: Any) -> Trajectory:
    """Return a validated ``Trajectory`` from a Trajectory, dict or JSON text.

    Raises InvalidInputError naming the offending field(s); callers validate *before* writing, so a
    bad trajectory leaves nothing behind.
    """
    try:
        if isinstance(value, Trajectory):
            # re-validate: model_construct() or mutation of nested dicts can bypass validation
            return Trajectory.model_validate(value.model_dump())
        if isinstance(value, str | bytes):
            return Trajectory.model_validate_json(value)
        if isinstance(value, dict):
            if "task" not in value:
                raise InvalidInputError("invalid trajectory: field 'task' is required")
            return Trajectory.model_validate(value)
    except ValidationError as exc:
        problems = "; ".join(f"{_field_path(tuple(e['loc']))}: {e['msg']}" for e in exc.errors()[:5])
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
        problems = "; ".join(f"{_field_path(tuple(e['loc']))}: {e['msg']}" for e in exc.errors()[:5])
        raise InvalidInputError(f"invalid task: {problems}") from exc
    raise InvalidInputError(f"invalid task: expected Task, dict or str, got {type(value).__name__}")


def render_trajectory(trajectory: Trajectory, max_steps: int = 30, max_chars: int = 300) -> str:
    """A compact text rendering of a trajectory for prompts (first/last steps when long)."""
    lines = [
        f"Task: {trajectory.task.description}",
        f"Outcome: {'success' if trajectory.success else 'failure'}"
        f" (score {trajectory.score:.2f}, {len(trajectory.steps)} steps)",
    ]
    steps = list(enumerate(trajectory.steps, 1))
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


async def ask_json(llm: Any, system: str, user: str, schema: type[M], *, retries: int = 2) -> M:
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


__all__ = ["ask_json", "render_trajectory", "validate_task", "validate_trajectory"]
