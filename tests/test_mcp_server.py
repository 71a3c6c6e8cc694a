"""The MCP server: in process with a ScriptedLLM, and a real stdio round trip through the MCP client."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

TRAJ_MESSAGES = [
    {"role": "user", "content": "bring the apple to room_C"},
    {
        "role": "assistant",
        "content": "I will look first.",
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "look", "arguments": "{}"}}],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "apple in room_B"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c2",
                "type": "function",
                "function": {"name": "move_to", "arguments": '{"room": "room_B"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "c2", "content": "in room_B"},
    {"role": "assistant", "content": "Delivered."},
]

TRAJ_OBJECT = {
    "task": {"description": "bring the key to room_C", "domain": "graphworld"},
    "success": True,
    "steps": [
        {"action": "look()", "observation": "key in room_A"},
        {"action": 'move_to(room="room_A")', "observation": "in room_A"},
        {"action": 'pick_up(obj="key")', "observation": "holding key"},
    ],
}

REPLIES = {
    "stages": {
        "segmentation": {
            "segments": [
                {"description": "Navigate to the room that holds the target object", "start": 0, "end": 1}
            ]
        },
        "tips": {
            "tips": [
                {
                    "category": "strategy",
                    "content": "Look around before the first move to find the target object",
                    "purpose": "saves steps",
                    "implementation_steps": ["look", "move"],
                    "trigger": "start of a task",
                    "application_context": "navigation",
                    "task_category": "delivery",
                    "priority": "high",
                },
                {
                    "category": "strategy",
                    "content": "Move only to adjacent rooms listed in the observation",
                    "trigger": "when moving",
                    "task_category": "delivery",
                },
            ]
        },
        "consolidate": {"decisions": [{"tip": 0, "action": "ADD"}, {"tip": 1, "action": "ADD"}]},
    }
}


def _data(result) -> dict:
    assert not result.isError, result.content
    if result.structuredContent is not None:
        return result.structuredContent
    return json.loads(result.content[0].text)


async def test_in_process_tools(embedder):
    from atlas.infra.llm import ScriptedLLM
    from atlas.mcp_server import MemoryHub, create_server
    from guideline_doubles import auto_responder

    hub = MemoryHub(None, llm=ScriptedLLM(auto_responder()), embedder=embedder)
    server = create_server(hub)
    names = {t.name for t in await server.list_tools()}
    assert names == {
        "get_guidelines",
        "save_trajectory",
        "search_experiences",
        "store_experience",
        "list_guidelines",
        "delete_guideline",
    }

    async def call(name, **args):
        out = await server.call_tool(name, args)
        structured = out[1] if isinstance(out, tuple) else None
        return structured if structured is not None else json.loads(out[0].text)

    saved = await call("save_trajectory", trajectory=TRAJ_OBJECT, namespace="A")
    assert saved["status"] == "processed" and saved["guideline_ids"]
    got = await call("get_guidelines", task="bring the key to room_B", namespace="A")
    assert got["guidelines"] and got["text"].startswith("Guidelines")
    assert (await call("get_guidelines", task="bring the key to room_B", namespace="B"))["guidelines"] == []
    listed = await call("list_guidelines", namespace="A")
    assert listed["count"] == len(saved["guideline_ids"])
    gid = listed["guidelines"][0]["id"]
    assert (await call("delete_guideline", guideline_id=gid, namespace="A"))["deleted"] is True
    assert (await call("delete_guideline", guideline_id=gid, namespace="A"))["deleted"] is False
    stored = await call("store_experience", trajectory=TRAJ_MESSAGES, namespace="A")
    assert stored["experience_id"]
    found = await call("search_experiences", task="bring the apple to room_D", namespace="A")
    assert [e["id"] for e in found["experiences"]] == [stored["experience_id"]]
    assert (await call("search_experiences", task="bring the apple to room_D", namespace="B"))[
        "experiences"
    ] == []


@pytest.mark.slow
async def test_stdio_round_trip(tmp_path):
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps(REPLIES))
    from scripted_provider import subprocess_env

    env = subprocess_env(
        PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
        HF_HUB_OFFLINE="1",
        ANONYMIZED_TELEMETRY="False",
    )
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "atlas.mcp_server", "--model", f"scripted:{replies}", "--path", str(tmp_path / "mem")],
        env=env,
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = {t.name for t in (await session.list_tools()).tools}
        assert {
            "get_guidelines",
            "save_trajectory",
            "search_experiences",
            "store_experience",
            "list_guidelines",
            "delete_guideline",
        } <= tools
        first = _data(
            await session.call_tool("save_trajectory", {"trajectory": TRAJ_MESSAGES, "namespace": "A"})
        )
        second = _data(
            await session.call_tool("save_trajectory", {"trajectory": TRAJ_OBJECT, "namespace": "A"})
        )
        assert first["status"] == second["status"] == "processed"
        got_a = _data(
            await session.call_tool("get_guidelines", {"task": "bring the key to room_D", "namespace": "A"})
        )
        got_b = _data(
            await session.call_tool("get_guidelines", {"task": "bring the key to room_D", "namespace": "B"})
        )
        assert got_a["guidelines"] and got_b["guidelines"] == []
        assert {g["source_trajectory_ids"][0] for g in got_a["guidelines"]} <= {
            first["trajectory_id"],
            second["trajectory_id"],
        }
        bad = await session.call_tool("save_trajectory", {"trajectory": [{"role": "bot"}], "namespace": "A"})
        assert bad.isError and "messages[0].role" in bad.content[0].text


@pytest.mark.slow
async def test_streamable_http_transport(tmp_path):
    import asyncio
    import socket
    import subprocess

    from mcp import ClientSession
    from mcp.client.streamable_http import streamablehttp_client

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "atlas.mcp_server",
            "--transport",
            "streamable-http",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        for _ in range(150):
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                await asyncio.sleep(0.2)
        async with (
            streamablehttp_client(f"http://127.0.0.1:{port}/mcp") as (read, write, _),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            listed = _data(await session.call_tool("list_guidelines", {"namespace": "A"}))
            assert listed["count"] == 0
    finally:
        proc.terminate()
        proc.wait(timeout=10)


async def test_bad_arguments_are_clear_errors_not_empty_results(embedder):
    from mcp.server.fastmcp.exceptions import ToolError

    from atlas.infra.llm import ScriptedLLM
    from atlas.mcp_server import MemoryHub, create_server
    from guideline_doubles import auto_responder

    hub = MemoryHub(None, llm=ScriptedLLM(auto_responder()), embedder=embedder)
    server = create_server(hub)

    async def count() -> int:
        out = await server.call_tool("list_guidelines", {"namespace": "A"})
        return (out[1] if isinstance(out, tuple) else json.loads(out[0].text))["count"]

    await server.call_tool("save_trajectory", {"trajectory": TRAJ_OBJECT, "namespace": "A"})
    before = await count()
    bad = [
        ("get_guidelines", {"task": "t", "namespace": "../x"}, "namespace"),
        ("get_guidelines", {"task": "t", "namespace": "a" * 500}, "namespace: 'aaaa"),
        ("get_guidelines", {"task": "t", "namespace": ""}, "namespace"),
        ("get_guidelines", {"task": "t", "namespace": "A", "category": "bogus"}, "category: must be one of"),
        ("search_experiences", {"task": "t", "k": 0}, "k: must be an integer >= 1"),
        ("search_experiences", {"task": "t", "k": -1}, "k: must be an integer >= 1"),
        ("list_guidelines", {"namespace": "A", "limit": 0}, "limit"),
        ("list_guidelines", {"namespace": "A", "limit": -1}, "limit"),
        ("save_trajectory", {"trajectory": TRAJ_OBJECT, "success": "yes"}, "success"),
        ("save_trajectory", {"trajectory": {**TRAJ_OBJECT, "score": float("nan")}}, "score"),
        ("store_experience", {"trajectory": {**TRAJ_OBJECT, "score": float("inf")}}, "score"),
        ("store_experience", {"trajectory": {**TRAJ_OBJECT, "score": "0.9"}}, "score: must be a number"),
        (
            "store_experience",
            {"trajectory": {**TRAJ_OBJECT, "metadata": {"x": "y" * 2_100_000}}},
            "over the limit",
        ),
        ("get_guidelines", {"task": "t" * 30_000, "namespace": "A"}, "task: 30000 characters"),
        ("search_experiences", {"task": "t", "k": 10**9}, "k: at most 100"),
        ("list_guidelines", {"namespace": "A", "limit": 10**9}, "limit: at most"),
        ("list_guidelines", {"namespace": "alice\n"}, "namespace"),
    ]
    for name, args, expected in bad:
        with pytest.raises(ToolError, match=expected) as info:
            await server.call_tool(name, args)
        assert len(str(info.value)) < 400, "an error message must not echo huge input"
    assert before and await count() == before  # the refused saves wrote nothing
