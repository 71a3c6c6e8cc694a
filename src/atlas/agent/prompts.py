"""Prompt text for the task agent, kept compact for small local models (2–4k contexts).

The system prompt holds the role, the tools and the memory's advice; each turn's user message
holds the goal, a rolling window of recent steps and the current observation.
"""

from __future__ import annotations

from typing import Any

from atlas.protocols.llm import ToolSpec

SYSTEM = """You are an agent solving a task in the {env} environment. Each turn you choose exactly ONE tool call.
Tools:
{tools}
Rules: use only the tools above with exactly the listed arguments; read the latest observation carefully; \
errors explain what went wrong, so change your action instead of repeating it."""

JSON_FORMAT = """Reply with ONLY one JSON object, no other text:
{"thought": "<one short sentence>", "tool": "<tool name>", "args": {<arguments>}}
Example: {"thought": "The key is here.", "tool": "%s", "args": %s}"""

ADVICE = """Advice from memory of earlier tasks (may be incomplete or wrong):
{advice}"""

TURN = """Goal: {goal}
{history}Current observation: {observation}
What is your next action?"""


def tool_signature(spec: ToolSpec) -> str:
    """``move_to(room: string) — Move to an ADJACENT room ...``."""
    props: dict[str, Any] = spec.parameters.get("properties", {}) or {}
    parts = []
    for k, v in props.items():
        enum = v.get("enum")
        if enum and len(enum) <= 12:  # short choice lists help small models; long ones are in the observation
            parts.append(f"{k}: one of {', '.join(map(str, enum))}")
        else:
            parts.append(f"{k}: {v.get('type', 'any')}")
    return f"- {spec.name}({', '.join(parts)}) — {spec.description}"


def example_args(spec: ToolSpec) -> str:
    import json

    props: dict[str, Any] = spec.parameters.get("properties", {}) or {}
    example: dict[str, Any] = {}
    for k, v in props.items():
        if v.get("enum"):
            example[k] = v["enum"][0]
        else:
            example[k] = {"integer": 1, "number": 1, "boolean": True}.get(v.get("type", "string"), "...")
    return json.dumps(example)


def system_prompt(
    env_name: str, tools: list[ToolSpec], advice: str, *, json_mode: bool, advice_chars: int = 2000
) -> str:
    parts = [SYSTEM.format(env=env_name, tools="\n".join(tool_signature(t) for t in tools))]
    if json_mode and tools:
        pick = next((t for t in tools if t.parameters.get("properties")), tools[0])
        parts.append(JSON_FORMAT % (pick.name, example_args(pick)))
    advice = (advice or "").strip()
    if advice:
        if len(advice) > advice_chars:
            advice = advice[:advice_chars].rstrip() + " …"
        parts.append(ADVICE.format(advice=advice))
    return "\n\n".join(parts)


def turn_prompt(goal: str, history: list[str], omitted: int, observation: str) -> str:
    lines = ""
    if history:
        head = f"Recent steps ({omitted} earlier omitted):\n" if omitted else "Steps so far:\n"
        lines = head + "\n".join(history) + "\n"
    return TURN.format(goal=goal, history=lines, observation=observation)


__all__ = [
    "ADVICE",
    "JSON_FORMAT",
    "SYSTEM",
    "TURN",
    "example_args",
    "system_prompt",
    "tool_signature",
    "turn_prompt",
]
