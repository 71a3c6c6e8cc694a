"""`atlas mcp --design DIR`: the done-when check (scripted search → export --best → MCP stdio client
gets the advice the design gave in the run), namespaces, and the error paths."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from atlas.alma.deploy.export import export_design, load_export
from atlas.alma.state.archive import Archive
from atlas.cli import app
from atlas.errors import ArchiveError

SRC = Path(__file__).resolve().parents[2] / "src"


def _data(result) -> dict:
    assert not result.isError, result.content[0].text
    return json.loads(result.content[0].text)


def _learning_server(exp, embedder):
    """A learning DesignHub for ``exp`` and ``call(tool, **args) -> dict`` through its MCP server."""
    from atlas.mcp_design import DesignHub, create_design_server

    hub = DesignHub(exp, embedder=embedder, learn=True)
    server = create_design_server(hub)

    async def call(name: str, **args) -> dict:
        out = await server.call_tool(name, args)
        return out[1] if isinstance(out, tuple) else json.loads(out[0].text)

    return hub, call


def _params(*args: str):
    from mcp import StdioServerParameters

    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
        "HF_HUB_OFFLINE": "1",
        "ANONYMIZED_TELEMETRY": "False",
    }
    return StdioServerParameters(command=sys.executable, args=["-m", "atlas.cli", "mcp", *args], env=env)


@pytest.mark.slow
async def test_mcp_design_serves_the_advice_the_design_gave_in_the_run(scripted_run, tmp_path):
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    out = tmp_path / "exported"
    res = CliRunner().invoke(app, ["archive", "export", str(scripted_run), "--best", "--out", str(out)])
    assert res.exit_code == 0, res.output
    best = Archive.load(scripted_run).best()
    # what the design gave in the run, from the run's own logs (not from the export)
    episodes = [
        json.loads(x) for x in (scripted_run / best.logs_dir / "episodes.jsonl").read_text().splitlines()
    ]
    ran = [(e["task"], e["advice"]) for e in episodes if e["phase"] == "deployment"]
    assert ran and [(a["task"], a["advice"]) for a in load_export(out).advice] == ran

    async with (
        stdio_client(_params("--design", str(out))) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        assert {t.name for t in (await session.list_tools()).tools} == {"recall", "update", "memory_info"}
        for task, advice in ran:
            got = _data(await session.call_tool("recall", {"task": task}))
            assert got == {"namespace": "default", "advice": advice}
        info = _data(await session.call_tool("memory_info", {"namespace": "A"}))
        assert info["design"]["id"] == best.id and info["learn"] is False
        refused = await session.call_tool(
            "update",
            {"episode": {"task": ran[0][0], "steps": [], "success": True, "score": 1.0, "steps_taken": 0}},
        )
        assert refused.isError and "served frozen" in refused.content[0].text
        bad = await session.call_tool("recall", {"task": ran[0][0], "namespace": "../x"})
        assert bad.isError and "namespace" in bad.content[0].text


async def test_learning_namespaces_keep_their_own_copy(scripted_run, tmp_path, embedder):
    from mcp.server.fastmcp.exceptions import ToolError

    design_id = Archive.load(scripted_run).find(name="route_map")[0].id
    exp = load_export(export_design(scripted_run, tmp_path / "e", design_id=design_id))
    hub, call = _learning_server(exp, embedder)
    try:
        task = exp.advice[0]["task"]
        episode = {"task": task, "steps": [], "success": True, "score": 0.9, "steps_taken": 0}
        assert (await call("update", episode=episode, namespace="A"))["holds"]["memory_keys"] == {
            "episodes": "int"
        }
        assert "Episodes learned: 3" in (await call("recall", task=task, namespace="A"))["advice"]
        assert "Episodes learned: 2" in (await call("recall", task=task, namespace="B"))["advice"]
        assert (await call("memory_info", namespace="A"))["holds"]["vector_items"] == 3
        assert (await call("memory_info", namespace="B"))["holds"]["vector_items"] == 2
        # route_map needs the start room: for a bare goal its recall fails, and the client is told why
        with pytest.raises(
            ToolError,
            match=r"the design.s recall failed: ToolError: src must not be empty \(design line 17\)",
        ):
            await call("recall", task="Bring the key to room_B.", namespace="A")
    finally:
        hub.close()


def test_cli_reports_a_bad_export_clearly(tmp_path):
    res = CliRunner().invoke(app, ["mcp", "--design", str(tmp_path)])
    assert res.exit_code == 2 and "not a design export" in res.output


def test_learning_namespaces_are_kept_on_disk_across_restarts(scripted_run, tmp_path, embedder):
    from atlas.mcp_design import DesignHub

    design_id = Archive.load(scripted_run).find(name="route_map")[0].id
    exp = load_export(export_design(scripted_run, tmp_path / "e", design_id=design_id))
    task = exp.advice[0]["task"]
    episode = {"task": task, "steps": [], "success": True, "score": 0.9, "steps_taken": 0}
    hub = DesignHub(exp, embedder=embedder, learn=True, path=tmp_path / "state")
    try:
        hub.update("A", episode)
    finally:
        hub.close()
    assert sorted(p.name for p in (tmp_path / "state").iterdir()) == ["A.json"]
    again = DesignHub(exp, embedder=embedder, learn=True, path=tmp_path / "state")
    try:
        assert "Episodes learned: 3" in again.served("A").recall(task)
        assert "Episodes learned: 2" in again.served("B").recall(task)
    finally:
        again.close()
    (tmp_path / "state" / "A.json").write_text("{torn")
    broken = DesignHub(exp, embedder=embedder, learn=True, path=tmp_path / "state")
    try:
        with pytest.raises(ArchiveError, match="cannot read the learned memory of namespace A"):
            broken.served("A")
    finally:
        broken.close()


# Passes the static check (no attribute is set): it keeps the goal in a dict of the json module,
# which every call in a worker shares. One namespace must never see another's goal through it.
STASHING_DESIGN = """
from json import decoder


def update(memory, episode, tools):
    decoder.BACKSLASH["stash"] = episode["task"]["goal"]
    memory["n"] = memory.get("n", 0) + 1


def recall(memory, task, tools):
    return "seen: " + str(decoder.BACKSLASH.get("stash", "nothing"))
"""


async def test_a_learning_namespace_never_sees_state_another_left_in_the_worker(
    scripted_run, tmp_path, embedder
):
    from export_forgery import forge_export

    design_id = Archive.load(scripted_run).find(name="route_map")[0].id
    real = export_design(scripted_run, tmp_path / "e", design_id=design_id)
    exp = load_export(forge_export(real, tmp_path / "stash", source=STASHING_DESIGN))
    hub, call = _learning_server(exp, embedder)
    try:
        task = {"goal": "secret goal of A", "observation": {}, "domain": ""}
        episode = {"task": task, "steps": [], "success": True, "score": 1.0, "steps_taken": 0}
        await call("update", episode=episode, namespace="A")
        assert (await call("recall", task="anything", namespace="A"))["advice"] == "seen: secret goal of A"
        for _ in range(3):  # whichever worker B gets, it is not one A used
            assert (await call("recall", task="anything", namespace="B"))["advice"] == "seen: nothing"
    finally:
        hub.close()


def test_the_design_server_answers_every_malformed_request_like_the_memory_server(scripted_run, tmp_path):
    """One request guard for both servers: over stdio every bad line gets a JSON-RPC error reply,
    an oversized one is refused unread, and the server keeps serving."""
    from mcp_raw_client import RawServer, exchange_malformed

    out = export_design(scripted_run, tmp_path / "e", design_id=Archive.load(scripted_run).best().id)
    server = RawServer("--design", str(out))
    try:
        exchange_malformed(server)
        server.send(b'{"jsonrpc":"2.0","id":100,"method":"tools/list"}')
        got = server.reply()
        assert got["id"] == 100 and {t["name"] for t in got["result"]["tools"]} == {
            "recall",
            "update",
            "memory_info",
        }
    finally:
        server.close()


@pytest.mark.slow
async def test_namespaces_stay_apart_over_stdio_with_a_real_client(scripted_run, tmp_path):
    """A leak probe: `atlas mcp --design DIR --learn`, a real MCP client."""
    from export_forgery import forge_export
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    design_id = Archive.load(scripted_run).find(name="route_map")[0].id
    real = export_design(scripted_run, tmp_path / "e", design_id=design_id)
    out = forge_export(real, tmp_path / "stash", source=STASHING_DESIGN)
    task = {"goal": "secret goal of A", "observation": {}, "domain": ""}
    episode = {"task": task, "steps": [], "success": True, "score": 1.0, "steps_taken": 0}
    async with (
        stdio_client(_params("--design", str(out), "--learn")) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        _data(await session.call_tool("update", {"episode": episode, "namespace": "A"}))
        got = _data(await session.call_tool("recall", {"task": "anything", "namespace": "A"}))
        assert got["advice"] == "seen: secret goal of A"
        for _ in range(3):
            got = _data(await session.call_tool("recall", {"task": "anything", "namespace": "B"}))
            assert got["advice"] == "seen: nothing"


def test_a_learning_server_keeps_a_bounded_number_of_namespaces(scripted_run, tmp_path, embedder):
    from atlas.errors import InvalidInputError
    from atlas.mcp_design import DesignHub

    design_id = Archive.load(scripted_run).find(name="route_map")[0].id
    exp = load_export(export_design(scripted_run, tmp_path / "e", design_id=design_id))
    hub = DesignHub(exp, embedder=embedder, learn=True, max_namespaces=3)
    try:
        for ns in ("a", "b"):  # "default" is the first
            hub.served(ns)
        with pytest.raises(InvalidInputError, match="already serves 3 namespaces"):
            hub.served("c")
        assert hub.served("a") is hub.served("a")  # a known one still answers
    finally:
        hub.close()


async def test_memory_info_answers_for_an_export_whose_memory_holds_lone_surrogates(
    scripted_run, tmp_path, embedder
):
    """memory.json may spell lone surrogates as JSON escapes ("\\ud800"): valid JSON that no UTF-8
    writer accepts. The server loads it, recalls and describes it; the text reaches the client as
    U+FFFD."""
    from export_forgery import forge_export

    from atlas.mcp_design import DesignHub, create_design_server

    real = export_design(scripted_run, tmp_path / "e", design_id=Archive.load(scripted_run).best().id)
    learned = json.loads((real / "memory.json").read_text())
    learned["memory"]["bad\ud800key"] = "lone \udfff surrogate"
    forged = forge_export(real, tmp_path / "forged", memory=json.dumps(learned))  # ensure_ascii: escapes
    assert "\\ud800" in (forged / "memory.json").read_text()
    hub = DesignHub(load_export(forged), embedder=embedder)
    server = create_design_server(hub)
    try:
        out = await server.call_tool("memory_info", {"namespace": "A"})
        info = out[1] if isinstance(out, tuple) else json.loads(out[0].text)
        assert "bad\ufffdkey" in info["holds"]["memory_keys"]
        json.dumps(info, ensure_ascii=False).encode("utf-8")  # every string encodes
        task = load_export(forged).advice[0]["task"]
        out = await server.call_tool("recall", {"task": task, "namespace": "A"})
        assert isinstance(out[1] if isinstance(out, tuple) else out[0].text, dict | str)
    finally:
        hub.close()


def test_concurrent_updates_of_one_namespace_are_all_on_disk_once(scripted_run, tmp_path, embedder):
    """Eight clients updating one namespace at once: each acknowledged episode is in the stored
    memory (an older snapshot never overwrites a newer one) and the count is exact."""
    from concurrent.futures import ThreadPoolExecutor

    from atlas.mcp_design import DesignHub

    design_id = Archive.load(scripted_run).find(name="route_map")[0].id
    exp = load_export(export_design(scripted_run, tmp_path / "e", design_id=design_id))
    task = exp.advice[0]["task"]
    episode = {"task": task, "steps": [], "success": True, "score": 0.9, "steps_taken": 0}
    hub = DesignHub(exp, embedder=embedder, learn=True, path=tmp_path / "state")
    try:
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda _: hub.update("shared", episode), range(24)))
        in_memory = hub.served("shared").snapshot()["memory"]["episodes"]
    finally:
        hub.close()
    stored = json.loads((tmp_path / "state" / "shared.json").read_text())["memory"]["episodes"]
    assert stored == in_memory == 2 + 24  # the two learned in the run, then every update once
