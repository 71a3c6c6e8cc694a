"""Trajectory and message builders shared by the guideline tests."""

from __future__ import annotations

import json

from atlas.core.types import Step, Task, Trajectory


def make_traj(
    kind: str = "clean", task: str = "bring the apple to room_C", tid: str | None = None
) -> Trajectory:
    """clean | recovery | failure | inefficient trajectories in a GraphWorld-like domain."""
    look = Step(
        action="look()",
        tool="look",
        args={},
        observation="rooms: room_A, room_B; apple in room_B",
        thought="First I should look around",
    )
    go_b = Step(
        action='move_to(room="room_B")', tool="move_to", args={"room": "room_B"}, observation="in room_B"
    )
    pick = Step(
        action='pick_up(obj="apple")',
        tool="pick_up",
        args={"obj": "apple"},
        observation="holding apple",
        thought="Let me verify I hold the apple",
    )
    go_c = Step(
        action='move_to(room="room_C")', tool="move_to", args={"room": "room_C"}, observation="in room_C"
    )
    bad = Step(
        action='move_to(room="room_C")',
        tool="move_to",
        args={"room": "room_C"},
        observation="",
        error="Error: room_C is not adjacent",
        thought="That was a mistake, I need a path",
    )
    if kind == "clean":
        steps, ok = [look, go_b, pick, go_c], True
    elif kind == "recovery":
        steps, ok = [look, bad, go_b, pick, go_c], True
    elif kind == "failure":
        steps, ok = [look, bad, bad], False
    elif kind == "inefficient":
        steps, ok = [look, look, look, go_b, pick, go_c], True
    else:
        raise ValueError(kind)
    kw = {"id": tid} if tid else {}
    return Trajectory(
        task=Task(description=task, domain="graphworld"),
        steps=steps,
        success=ok,
        score=0.8 if ok else 0.0,
        **kw,
    )


def openai_messages(task: str = "bring the apple to room_C", fail_first: bool = False) -> list[dict]:
    msgs: list[dict] = [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": task},
        {
            "role": "assistant",
            "content": "I will look around first.",
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "look", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "rooms: room_A, room_B; apple in room_B"},
    ]
    if fail_first:
        msgs += [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c2",
                        "type": "function",
                        "function": {"name": "move_to", "arguments": '{"room": "room_C"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c2", "content": "Error: room_C is not adjacent"},
        ]
    msgs += [
        {
            "role": "assistant",
            "content": "Go to room_B.",
            "tool_calls": [
                {
                    "id": "c3",
                    "type": "function",
                    "function": {"name": "move_to", "arguments": '{"room": "room_B"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c3", "content": "in room_B"},
        {"role": "assistant", "content": "Done: the apple is delivered."},
    ]
    return msgs


def reply(**obj) -> str:
    return json.dumps(obj)
