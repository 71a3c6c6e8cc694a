"""Turn what callers hand us (a Trajectory, its JSON, or an OpenAI-style message list with tool
calls) into a validated ``Trajectory``. Bad input raises ``InvalidInputError`` naming the field."""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from atlas.core import jsonsafe
from atlas.core.fields import not_a_field
from atlas.core.types import Step, Task, Trajectory
from atlas.errors import InvalidInputError
from atlas.memory.common import check_score_field, check_size, check_storable, check_success_field

_ROLES = {"system", "developer", "user", "assistant", "tool", "function"}
_ERROR_MARKERS = ("error", "exception", "traceback", "failed", "invalid", "not found", "cannot", "unknown")


def _loc(err: ErrorDetails) -> str:
    parts: list[str] = []
    for p in err.get("loc", ()):
        parts.append(f"[{p}]" if isinstance(p, int) else (f".{p}" if parts else str(p)))
    return "".join(parts) or "trajectory"


def _validation_error(exc: ValidationError, prefix: str = "") -> InvalidInputError:
    first = exc.errors()[0]
    field = _loc(first)
    field = f"{prefix}.{field}" if prefix and field != "trajectory" else (prefix or field)
    more = f" (+{len(exc.errors()) - 1} more)" if len(exc.errors()) > 1 else ""
    said = (
        not_a_field(Trajectory, tuple(first["loc"]))
        if first.get("type") == "extra_forbidden"
        else first.get("msg", "invalid")
    )
    return InvalidInputError(f"{field}: {said}{more}")


def looks_like_error(text: str) -> bool:
    """Heuristic used for tool results that carry no explicit error flag."""
    head = text.strip().lower()[:200]
    return any(head.startswith(m) or f"{m}:" in head for m in _ERROR_MARKERS) or "traceback" in head


def _content_text(content: Any, field: str) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI content parts
        out = []
        for j, part in enumerate(content):
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                out.append(part["text"])
            elif isinstance(part, str):
                out.append(part)
            else:
                raise InvalidInputError(f"{field}[{j}]: content part must be text")
        return "\n".join(out)
    raise InvalidInputError(f"{field}: must be a string or a list of text parts")


def _format_action(name: str, args: dict[str, Any]) -> str:
    inner = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in args.items())
    return f"{name}({inner})"


def messages_to_trajectory(
    messages: Any,
    *,
    task: str | None = None,
    success: bool | None = None,
    score: float | None = None,
    trajectory_id: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> Trajectory:
    """Convert an OpenAI chat transcript into a Trajectory.

    The first user message is the task (unless ``task`` is given); assistant text becomes the
    ``thought`` of the tool calls it accompanies; each tool call is a Step whose observation is the
    matching ``tool`` message. A tool result flagged ``is_error`` or reading like an error sets
    ``Step.error``. ``success=None`` infers success: the transcript ends with an assistant answer
    and its last tool result (if any) is not an error.
    """
    if not isinstance(messages, list) or not messages:
        raise InvalidInputError("messages: must be a non-empty list of message objects")
    steps: list[Step] = []
    by_call_id: dict[str, int] = {}
    task_text = task
    pending_thought: str | None = None
    for i, msg in enumerate(messages):
        field = f"messages[{i}]"
        if not isinstance(msg, dict):
            raise InvalidInputError(f"{field}: must be an object with 'role'")
        role = msg.get("role")
        if role not in _ROLES:
            raise InvalidInputError(f"{field}.role: must be one of {sorted(_ROLES)}, got {role!r}")
        text = _content_text(msg.get("content"), f"{field}.content")
        if role in ("system", "developer"):
            continue
        if role == "user":
            if task_text is None and text.strip():
                task_text = text.strip()
            continue
        if role == "assistant":
            calls = msg.get("tool_calls") or []
            if not isinstance(calls, list):
                raise InvalidInputError(f"{field}.tool_calls: must be a list")
            if not calls:
                pending_thought = text.strip() or None
                continue
            thought = text.strip() or pending_thought
            pending_thought = None
            for j, call in enumerate(calls):
                cf = f"{field}.tool_calls[{j}]"
                if not isinstance(call, dict):
                    raise InvalidInputError(f"{cf}: must be an object")
                fn = call.get("function", call)
                name = fn.get("name") if isinstance(fn, dict) else None
                if not isinstance(name, str) or not name:
                    raise InvalidInputError(f"{cf}.function.name: missing")
                raw = fn.get("arguments", {})
                if isinstance(raw, str):
                    try:
                        raw = json.loads(raw) if raw.strip() else {}
                    except json.JSONDecodeError as exc:
                        raise InvalidInputError(
                            f"{cf}.function.arguments: not valid JSON ({exc.msg})"
                        ) from exc
                if not isinstance(raw, dict):
                    raise InvalidInputError(f"{cf}.function.arguments: must be a JSON object")
                steps.append(
                    Step(
                        action=_format_action(name, raw),
                        tool=name,
                        args=raw,
                        thought=thought if j == 0 else None,
                    )
                )
                call_id = call.get("id")
                if isinstance(call_id, str) and call_id:
                    if call_id in by_call_id:
                        raise InvalidInputError(
                            f"{cf}.id: {call_id!r} is already used by an earlier tool call; ids must be unique"
                        )
                    by_call_id[call_id] = len(steps) - 1
            continue
        # tool / function result
        call_id = msg.get("tool_call_id")
        if call_id is not None:
            if call_id not in by_call_id:
                known = ", ".join(repr(c) for c in by_call_id) or "none (give each tool call an 'id')"
                raise InvalidInputError(
                    f"{field}.tool_call_id: {call_id!r} matches no earlier tool call (known ids: {known})"
                )
            idx = by_call_id[call_id]
        elif steps:
            idx = len(steps) - 1
        else:
            raise InvalidInputError(f"{field}: tool result before any tool call")
        is_error = msg.get("is_error")
        err = text if (is_error is True or (is_error is None and looks_like_error(text))) else None
        steps[idx] = steps[idx].model_copy(update={"observation": text, "error": err})
    if not task_text:
        raise InvalidInputError("messages: no user message with the task (or pass task=...)")
    if success is None:
        ends_with_answer = messages[-1].get("role") == "assistant" and not messages[-1].get("tool_calls")
        # a chat that ends with an answer succeeded, unless its last tool result was an error (a
        # chat without tool calls is not a failure for having none)
        success = ends_with_answer and (not steps or steps[-1].error is None)
    meta = dict(metadata or {})
    if pending_thought:
        meta.setdefault("final_answer", pending_thought)
    kwargs: dict[str, Any] = {
        "task": {"description": task_text},
        "steps": steps,
        "success": success,
        "score": score if score is not None else (1.0 if success else 0.0),
        "metadata": meta,
    }
    if trajectory_id is not None:
        kwargs["id"] = trajectory_id
    return _build(kwargs)


def _build(kwargs: dict[str, Any]) -> Trajectory:
    """A validated, storable Trajectory from converted fields (InvalidInputError names the field)."""
    try:
        traj = Trajectory.model_validate(kwargs)
    except ValidationError as exc:
        raise _validation_error(exc) from exc
    return check_storable(traj)


def parse_trajectory(data: Any, *, success: bool | None = None, task: str | None = None) -> Trajectory:
    """Accept a Trajectory, its dict/JSON form, an OpenAI message list, or
    ``{"messages": [...], "task"?, "success"?, "id"?, "metadata"?}``; raise InvalidInputError otherwise."""
    if isinstance(data, Trajectory):
        return _build(data.model_dump())
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidInputError(f"trajectory: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    check_size(data)
    if isinstance(data, str):
        data = jsonsafe.loads(data, what="trajectory")
    if isinstance(data, list):
        return messages_to_trajectory(data, task=task, success=success)
    if not isinstance(data, dict):
        raise InvalidInputError(
            f"trajectory: expected an object or a message list, got {type(data).__name__}"
        )
    check_score_field(data, "trajectory: ")
    if isinstance(data.get("task"), dict) and "goal" in data["task"]:
        return episode_to_trajectory(data)
    if "messages" in data and "steps" not in data:
        extra = set(data) - {"messages", "task", "success", "score", "id", "metadata"}
        if extra:
            raise InvalidInputError(f"{sorted(extra)[0]}: unexpected field next to 'messages'")
        t = data.get("task")
        if isinstance(t, dict):
            t = t.get("description")
        if t is not None and not isinstance(t, str):
            raise InvalidInputError("task: must be a string")
        s = data.get("success", success)
        if s is not None and not isinstance(s, bool):
            raise InvalidInputError(f"success: must be true or false, got {s!r}")
        meta = data.get("metadata")
        if meta is not None and not isinstance(meta, dict):
            raise InvalidInputError("metadata: must be an object")
        return messages_to_trajectory(
            data["messages"],
            task=t or task,
            success=s,
            score=data.get("score"),
            trajectory_id=data.get("id"),
            metadata=meta,
        )
    if "task" not in data:
        raise InvalidInputError("task: missing (a trajectory needs a task)")
    if isinstance(data.get("task"), str):
        data = {**data, "task": {"description": data["task"]}}
    check_success_field(data, prefix="")
    if success is not None and "success" not in data:
        data = {**data, "success": success}
    return _build(data)


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)


def episode_to_trajectory(episode: Any, *, trajectory_id: str | None = None) -> Trajectory:
    """Convert an ALMA episode view (``atlas.envs.views.episode_view``: ``{"task": {"goal",
    "observation", "domain"}, "steps": [{"action": {"tool", "args"}, "observation", "error"}],
    "success", "score", "steps_taken"}``) into a Trajectory. Bad shapes raise InvalidInputError."""
    if not isinstance(episode, dict):
        raise InvalidInputError("episode: must be an object")
    task = episode.get("task")
    if not isinstance(task, dict) or not isinstance(task.get("goal"), str) or not task["goal"].strip():
        raise InvalidInputError("episode.task.goal: missing")
    raw_steps = episode.get("steps", [])
    if not isinstance(raw_steps, list):
        raise InvalidInputError("episode.steps: must be a list")
    steps = []
    for i, s in enumerate(raw_steps):
        if not isinstance(s, dict):
            raise InvalidInputError(f"episode.steps[{i}]: must be an object")
        action = s.get("action")
        if isinstance(action, dict):
            tool = action.get("tool")
            args = action.get("args") or {}
            if not isinstance(tool, str) or not tool or not isinstance(args, dict):
                raise InvalidInputError(f"episode.steps[{i}].action: needs 'tool' (str) and 'args' (object)")
            text, tool_name, tool_args = _format_action(tool, args), tool, args
        elif isinstance(action, str) and action:
            text, tool_name, tool_args = action, None, None
        else:
            raise InvalidInputError(f"episode.steps[{i}].action: missing")
        obs = s.get("observation")
        steps.append(
            Step(
                action=text,
                tool=tool_name,
                args=tool_args,
                observation=_text(obs),
                data=obs if isinstance(obs, dict) else None,
                error=_text(s["error"]) if s.get("error") else None,
                thought=s.get("thought") if isinstance(s.get("thought"), str) else None,
            )
        )
    success = episode.get("success", False)
    if not isinstance(success, bool):
        raise InvalidInputError(f"episode.success: must be true or false, got {success!r}")
    kwargs: dict[str, Any] = {
        "task": Task(
            description=task["goal"],
            domain=str(task.get("domain") or "generic"),
            initial_observation=_text(task.get("observation")) or None,
        ),
        "steps": steps,
        "success": success,
        "score": episode.get("score") or 0.0,
        "metadata": {"steps_taken": episode.get("steps_taken", len(steps))},
    }
    if trajectory_id:
        kwargs["id"] = trajectory_id
    return _build(kwargs)


__all__ = ["episode_to_trajectory", "looks_like_error", "messages_to_trajectory", "parse_trajectory"]
