"""Turning a model reply into an action, or into a message telling the model what was wrong.

Small models produce many shapes for "call move_to with room_B"; we accept the common ones
({"tool", "args"}, {"name", "arguments"}, {"action": {...}}, arguments flattened next to
"tool") and then validate strictly against the tool's JSON schema. Every failure is an
``InvalidAction`` whose message goes back to the model as an observation.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from atlas.envs.base import check_action
from atlas.errors import LLMResponseError
from atlas.protocols.env import Action
from atlas.protocols.llm import Completion, ToolSpec


class InvalidAction(Exception):
    """A reply that is not a valid tool call; ``str(exc)`` is shown to the model."""


@dataclass
class ParsedAction:
    tool: str
    args: dict[str, Any] = field(default_factory=dict)
    thought: str | None = None


_TOOL_KEYS = ("tool", "name", "tool_name", "function", "action")
_ARG_KEYS = ("args", "arguments", "parameters", "input")
_SKIP = {"thought", "reasoning", "reason", "plan"}


def _from_obj(obj: Any) -> ParsedAction:
    if isinstance(obj, list) and len(obj) == 1:
        obj = obj[0]
    if not isinstance(obj, dict):
        raise InvalidAction(
            'the reply must be one JSON object like {"thought": "...", "tool": "<tool name>", "args": {...}}'
        )
    thought = obj.get("thought") or obj.get("reasoning")
    nested = obj.get("action")
    if isinstance(nested, dict):
        inner = _from_obj(nested)
        inner.thought = inner.thought or (str(thought) if thought else None)
        return inner
    tool = next((obj[k] for k in _TOOL_KEYS if isinstance(obj.get(k), str)), None)
    if isinstance(obj.get("function"), dict):  # OpenAI-style {"function": {"name", "arguments"}}
        return _from_obj({**obj["function"], "thought": thought})
    if not tool:
        raise InvalidAction('the reply has no "tool" field naming the tool to call')
    args = next((obj[k] for k in _ARG_KEYS if k in obj), None)
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except json.JSONDecodeError as e:
            raise InvalidAction(f'"args" must be a JSON object, got the string {args!r}') from e
    if args is None:  # arguments flattened next to "tool"
        args = {k: v for k, v in obj.items() if k not in _SKIP and k not in _TOOL_KEYS}
    if not isinstance(args, dict):
        raise InvalidAction(f'"args" must be a JSON object, got {json.dumps(args)}')
    return ParsedAction(tool=tool.strip(), args=args, thought=str(thought) if thought else None)


def parse_text_action(text: str) -> ParsedAction:
    """Parse a JSON action out of a reply (also inside fences or prose)."""
    if not text or not text.strip():
        raise InvalidAction("the reply was empty; answer with one JSON action")
    try:
        obj = json.loads(text)
    except json.JSONDecodeError:
        from atlas.infra.llm import parse_json_reply

        try:
            obj = parse_json_reply(text)
        except LLMResponseError as e:
            raise InvalidAction(
                'the reply is not JSON; answer with ONLY {"thought": "...", "tool": "...", "args": {...}}'
            ) from e
    return _from_obj(obj)


def parse_completion(completion: Completion, tools: list[ToolSpec], *, native: bool) -> ParsedAction:
    """The action of a completion, validated against ``tools``; raises InvalidAction."""
    if native and completion.tool_calls:
        call = completion.tool_calls[0]  # one action per turn: extra calls are ignored
        parsed = ParsedAction(call.name, dict(call.arguments or {}), completion.text.strip() or None)
    else:
        parsed = parse_text_action(completion.text)
    problem = check_action(tools, Action(parsed.tool, parsed.args))
    if problem is not None:
        raise InvalidAction(problem)
    return parsed


def action_schema(tools: list[ToolSpec]) -> dict[str, Any]:
    """The JSON schema of a JSON-mode reply: thought, then one tool with its own arguments.
    Passed as ``json_schema=`` so local models decode under a grammar."""
    variants = []
    for t in tools:
        params = dict(t.parameters or {"type": "object", "properties": {}})
        params.setdefault("type", "object")
        variants.append(
            {
                "type": "object",
                "properties": {
                    "thought": {"type": "string"},
                    "tool": {"type": "string", "enum": [t.name]},
                    "args": params,
                },
                "required": ["thought", "tool", "args"],
                "additionalProperties": False,
            }
        )
    return variants[0] if len(variants) == 1 else {"anyOf": variants}


__all__ = ["InvalidAction", "ParsedAction", "action_schema", "parse_completion", "parse_text_action"]
