"""Two transfer examples, end to end with the real embedder and real Chroma: after one
trajectory for "Bring the key to room_C", the sibling task "Bring the lamp to room_D" gets its tips
and experience, and "compile the linux kernel with clang" gets nothing — over MCP and on the CLI."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from atlas.cli import app

KEY_TASK = "Bring the key to room_C"
SIBLING = "Bring the lamp to room_D"
UNRELATED = "compile the linux kernel with clang"

TRAJECTORY = {
    "task": {"description": KEY_TASK, "domain": "graphworld"},
    "success": True,
    "steps": [
        {"action": "look()", "observation": "rooms: room_A, room_B; key in room_B"},
        {"action": 'move_to(room="room_B")', "observation": "in room_B"},
        {"action": 'pick_up(obj="key")', "observation": "holding key"},
        {"action": 'move_to(room="room_C")', "observation": "in room_C"},
        {"action": 'put_down(obj="key")', "observation": "key in room_C"},
    ],
}


def _tip(content: str, trigger: str) -> dict:
    return {"category": "strategy", "content": content, "trigger": trigger, "task_category": "delivery"}


REPLIES = {
    "stages": {
        "segmentation": {
            "segments": [
                {"description": "Find which room holds the target object", "start": 0, "end": 2},
                {"description": "Carry the object to the goal room", "start": 3, "end": 4},
            ]
        },
        "tips": [
            {
                "tips": [
                    _tip("Call look first to see the objects and exits before moving", "start of a task"),
                    _tip("Pick up the object as soon as you are in its room", "object in this room"),
                ]
            },
            {
                "tips": [
                    _tip("Plan the shortest path to the goal room before moving", "holding the object"),
                    _tip("Put the object down only in the goal room", "in the goal room"),
                ]
            },
        ],
        "consolidate": {"decisions": [{"tip": 0, "action": "ADD"}, {"tip": 1, "action": "ADD"}]},
        "attribution": {"key_decisions": [{"description": "looked before moving", "step": 0}]},
    }
}


@pytest.fixture
def replies(tmp_path):
    path = tmp_path / "replies.json"
    path.write_text(json.dumps(REPLIES))
    return path


async def test_mcp_sibling_gets_the_tips_and_the_kernel_task_gets_nothing(embedder, replies):
    from atlas.mcp_server import MemoryHub, create_server
    from scripted_provider import scripted_from_file

    server = create_server(MemoryHub(None, llm=scripted_from_file(replies), embedder=embedder))

    async def call(name, **args):
        out = await server.call_tool(name, args)
        structured = out[1] if isinstance(out, tuple) else None
        return structured if structured is not None else json.loads(out[0].text)

    saved = await call("save_trajectory", trajectory=TRAJECTORY)
    assert saved["status"] == "processed" and len(saved["guideline_ids"]) == 4
    sibling = await call("get_guidelines", task=SIBLING)
    assert len(sibling["guidelines"]) == 4 and sibling["text"]
    assert (await call("get_guidelines", task=UNRELATED))["guidelines"] == []

    stored = await call("store_experience", trajectory=TRAJECTORY)
    found = await call("search_experiences", task=SIBLING)
    assert [e["id"] for e in found["experiences"]] == [stored["experience_id"]]
    assert (await call("search_experiences", task=UNRELATED))["experiences"] == []


def test_cli_sibling_gets_the_tips_and_the_kernel_task_gets_nothing(tmp_path, replies):
    runner = CliRunner()
    traj = tmp_path / "traj.json"
    traj.write_text(json.dumps(TRAJECTORY))
    gl = ["--path", str(tmp_path / "gl")]
    res = runner.invoke(app, ["guidelines", "save", str(traj), *gl, "--model", f"scripted:{replies}"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["guidelines", "get", SIBLING, *gl, "--json"])
    assert res.exit_code == 0 and len(json.loads(res.stdout)) == 4
    res = runner.invoke(app, ["guidelines", "get", UNRELATED, *gl, "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout) == []

    mem = ["--path", str(tmp_path / "mem")]
    assert runner.invoke(app, ["memory", "store", str(traj), *mem]).exit_code == 0
    res = runner.invoke(app, ["memory", "query", SIBLING, *mem])
    assert res.exit_code == 0 and KEY_TASK in res.stdout
    res = runner.invoke(app, ["memory", "query", UNRELATED, *mem])
    assert res.exit_code == 0 and res.stdout.strip() == "(nothing relevant in memory)"
