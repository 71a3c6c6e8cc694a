"""LLM doubles for the ALMA tests: ScriptedLLM callables that answer from the prompt.

- ``task_policy``: plays GraphWorld from the observation text in the TaskAgent's prompt (pick up
  the goal object when seen, carry it to the goal room, follow a route given in the advice, else
  explore the least-visited adjacent room). Advice containing ``GIVE_UP`` makes it only ``look``
  until it runs out of turns (a known outcome: score 0). Designs' summarize/analyze calls get a
  short text.
- ``debug_policy``: one grep for errors, then a valid final critique.
- ``meta_policy(designs)``: returns, per generation, the listed replies turn by turn.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

GOAL = re.compile(r"Goal: Bring the (\S+) to (room_\w+)\.")
OBS = re.compile(
    r"You are in (room_\w+)(?: \(goal room\))?\. Adjacent rooms: ([^.]*)\. Objects here: ([^.]*)\. You carry: ([^.]*)\."
)


def _items(text: str) -> list[str]:
    text = text.strip()
    return [] if text in ("", "nothing") else [x.replace("(goal room)", "").strip() for x in text.split(",")]


def _call(tool: str, **args: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": tool, "arguments": args}], "text": ""}


MENU = re.compile(r"^- ((\w+) ?(.*))$", re.MULTILINE)


def _choice_policy(messages: list[dict[str, Any]], choices: list[str]) -> str:
    """The same policy for the choice format: read the menu of the last message, answer one action."""
    first, user = messages[1]["content"], messages[-1]["content"]
    menu = {(tool, arg): label for label, tool, arg in MENU.findall(user.split("Actions:", 1)[-1])}

    def pick(tool: str, arg: str) -> str | None:
        return menu.get((tool, arg))

    if "GIVE_UP" in first:
        return "I give up."  # not a choice: an invalid reply every turn, score 0
    goal = GOAL.search(first)
    obs = list(OBS.finditer(user))
    if not goal or not obs:
        return choices[0]
    target, dest = goal.groups()
    here, adjacent, objects, carry = obs[-1].groups()
    adjacent, objects, carry = _items(adjacent), _items(objects), _items(carry)
    if target in carry and here == dest and (label := pick("put_down", target)):
        return label
    if target in objects and target not in carry and (label := pick("pick_up", target)):
        return label
    for route in re.findall(r"(room_\w+(?: -> room_\w+)+)", first):
        hops = route.split(" -> ")
        if here in hops[:-1] and (label := pick("move_to", hops[hops.index(here) + 1])):
            return label
    phase = f"the {target}" if target in carry else "nothing"
    for room, when, nxt in re.findall(
        r"In (room_\w+) when you carry (nothing|the \w+): move_to (room_\w+)", first
    ):
        if room == here and when == phase and (label := pick("move_to", nxt)):
            return label
    convo = " ".join(str(m["content"]) for m in messages)
    visits = {r: len(re.findall(rf"You move to {r}\.", convo)) for r in adjacent}
    for room in sorted(visits, key=lambda r: (visits[r], r)):
        if label := pick("move_to", room):
            return label
    return choices[0]


def task_policy(messages: list[dict[str, Any]], **kwargs: Any) -> Any:
    if kwargs.get("choices"):
        return _choice_policy(messages, kwargs["choices"])
    if not kwargs.get("tools"):
        return "summary: nothing notable" if not kwargs.get("json_schema") else "{}"
    user = messages[-1]["content"]
    notes = user.split("</notes>", 1)[0] if "<notes>" in user else ""  # the advice, framed as data
    if "GIVE_UP" in notes:
        return _call("look")
    goal = GOAL.search(user)
    obs = list(OBS.finditer(user.split("Current observation:", 1)[-1]))
    if not goal or not obs:
        return _call("look")
    target, dest = goal.groups()
    here, adjacent, objects, carry = obs[-1].groups()
    adjacent, objects, carry = _items(adjacent), _items(objects), _items(carry)
    if target in carry and here == dest:
        return _call("put_down", object=target)
    if target in objects and target not in carry:
        return _call("pick_up", object=target)
    for route in re.findall(r"(room_\w+(?: -> room_\w+)+)", notes):
        hops = route.split(" -> ")
        if here in hops[:-1]:
            nxt = hops[hops.index(here) + 1]
            if nxt in adjacent:
                return _call("move_to", room=nxt)
    visits = {r: len(re.findall(rf'move_to\(room="{r}"\)', user)) for r in adjacent}
    if not visits:
        return _call("look")
    return _call("move_to", room=min(sorted(visits), key=lambda r: visits[r]))


FINAL = {
    "analysis": "The logs show what recall returned; see the RETURN lines.",
    "constraints": ["recall must return non-empty advice", "update must store the rooms it saw"],
    "evidence": [],
}


def debug_policy(messages: list[dict[str, Any]], **kwargs: Any) -> str:
    if kwargs.get("json_schema"):
        return json.dumps(FINAL)
    turns = sum(1 for m in messages if m["role"] == "assistant")
    if turns == 0:
        return json.dumps({"tool": "grep", "args": {"pattern": "RETURN|ERROR", "context": 0}})
    return json.dumps({"final": FINAL})


def meta_policy(script: dict[int, list[str]]) -> Callable[..., str]:
    """``script[generation]`` = replies for turn 1, 2, … (the last one repeats)."""

    def reply(messages: list[dict[str, Any]], **kwargs: Any) -> str:
        m = re.search(r"Generation (\d+)\.", messages[1]["content"])
        gen = int(m.group(1)) if m else 0
        turn = sum(1 for x in messages if x["role"] == "assistant")
        replies = script.get(gen) or script[max(script)]
        return replies[min(turn, len(replies) - 1)]

    return reply


def fenced(name: str, source: str) -> str:
    return f"Name: {name}\nPlan: test design.\n```python\n{source.strip()}\n```\n"


GIVE_UP_DESIGN = """
def update(memory, episode, tools):
    memory["n"] = memory.get("n", 0) + 1
    print("episodes seen", memory["n"])


def recall(memory, task, tools):
    return "GIVE_UP: stop and only look around"
"""

ROUTE_DESIGN = """
def update(memory, episode, tools):
    edges = []
    for obs in [episode["task"]["observation"]] + [s["observation"] for s in episode["steps"]]:
        here = obs.get("location")
        for other in obs.get("adjacent_rooms", []):
            edges.append([here, other])
    if edges:
        tools.graph_update(edges)
    print("stored", len(edges), "edges")


def recall(memory, task, tools):
    start = task["observation"].get("location", "")
    dest = task["goal"].rstrip(".").split(" to ")[-1]
    path = tools.graph_path(start, dest)
    return ("Route: " + " -> ".join(path)) if path else "explore"
"""

INVALID_DESIGN = """
import os


def update(memory, episode, tools):
    os.remove("x")


def recall(memory, task, tools):
    return ""
"""
