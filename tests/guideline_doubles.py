"""A rule-following stand-in for the LLM, for tests and benchmarks: ``auto_responder()`` tells the
stage (``prompts.stage_of``) and the prompt and returns a *valid* reply for that stage, derived from the prompt
text (no model involved). Use it as ``ScriptedLLM(auto_responder())``."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from atlas.memory.guidelines.prompts import stage_of


def _user(messages: list[dict[str, Any]]) -> str:
    return "\n".join(str(m.get("content") or "") for m in messages if m.get("role") == "user")


def _task(text: str) -> str:
    m = re.search(r"^Task: (.+)$", text, re.M)
    return m.group(1).strip() if m else "the task"


_SEGMENTS = [
    "Explore the environment to locate the needed items",
    "Carry the located item to its destination",
    "Verify that the goal state has been reached",
    "Recover from an invalid action",
]
_TIPS = [
    "Read the available exits and objects before choosing a move",
    "Plan the whole route first and follow it without detours",
    "Confirm the effect of each action in the next observation",
    "Stop repeating an action that keeps failing and try another tool",
]


def auto_responder(*, segments: int = 2, tips: int = 2, select: int = 3) -> Callable[..., str]:
    """Valid replies for every stage: ``segments`` subtasks, ``tips`` tips per call, ADD decisions,
    the first ``select`` candidates in LLM selection."""

    def respond(messages: list[dict[str, Any]], **_: Any) -> str:
        stage = stage_of(messages)
        text = _user(messages)
        task = _task(text)
        if stage == "thoughts":
            n = int(re.search(r"exactly (\d+) labels", text).group(1))  # type: ignore[union-attr]
            return json.dumps({"labels": ["planning"] * n})
        if stage == "attribution":
            ref = {"description": f"a decision while working on: {task}", "step": 0}
            if "The agent failed" in text:
                return json.dumps(
                    {
                        "immediate_cause": ref,
                        "proximate_cause": ref,
                        "root_cause": ref,
                        "contributing_factors": [],
                    }
                )
            if "recovered" in text:
                return json.dumps(
                    {
                        "failure_enabler": ref,
                        "recognition": ref,
                        "corrective_action": ref,
                        "why_it_worked": "it addressed the cause",
                    }
                )
            return json.dumps(
                {
                    "suboptimal": "repeated the same action",
                    "steps": [0],
                    "efficient_alternative": "act once after checking the state",
                }
            )
        if stage == "segmentation":
            last = int(re.search(r"<= (\d+), segments", text).group(1))  # type: ignore[union-attr]
            n = max(1, min(segments, last + 1))
            bounds = [round(i * (last + 1) / n) for i in range(n + 1)]
            return json.dumps(
                {
                    "segments": [
                        {
                            "description": _SEGMENTS[i % len(_SEGMENTS)],
                            "start": bounds[i],
                            "end": bounds[i + 1] - 1,
                        }
                        for i in range(n)
                    ]
                }
            )
        if stage == "tips":
            cats = re.search(r"Allowed categories: ([a-z, ]+)", text).group(1).strip().split(", ")  # type: ignore[union-attr]
            focus = re.search(r"Focus: (.+)", text)
            where = focus.group(1)[:80] if focus else task
            return json.dumps(
                {
                    "tips": [
                        {
                            "category": cats[0],
                            "content": _TIPS[i % len(_TIPS)],
                            "purpose": "avoids wasted steps",
                            "implementation_steps": ["observe", "act"],
                            "trigger": f"when working on {where}",
                            "negative_example": "acting blindly" if i else None,
                            "application_context": where,
                            "task_category": "general",
                            "priority": "medium",
                        }
                        for i in range(tips)
                    ]
                }
            )
        if stage == "consolidate":
            new = re.search(r"New tips[^\n]*\n(.*?)\n\nReply", text, re.S)
            n = len([ln for ln in (new.group(1) if new else "").splitlines() if re.match(r"\d+\.", ln)])
            return json.dumps(
                {"decisions": [{"tip": i, "action": "ADD", "reason": "distinct"} for i in range(n)]}
            )
        if stage == "select":
            ids = re.findall(r"- id=(\S+)", text)
            return json.dumps({"selected": ids[:select], "reason": "relevant"})
        if stage == "generalize":
            items = re.findall(r"^\d+\. (.+)$", text, re.M)
            return json.dumps({"descriptions": items})
        return "{}"

    return respond


__all__ = ["auto_responder"]
