"""DesignRunner: memory persistence, freeze semantics, concurrency, snapshot/restore, log content,
host-side designs — with the real sandbox, real MiniLM embedder and ScriptedLLM."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from atlas.alma.baselines import get_baseline, make_host_design
from atlas.alma.design import Design
from atlas.alma.evaluate.runlog import CallLog
from atlas.alma.evaluate.runner import DesignRunner
from atlas.alma.sandbox.pool import SandboxLimits, WorkerPool
from atlas.errors import ConfigError, SandboxError
from atlas.infra.llm import ScriptedLLM

NOTES = """
def update(memory, episode, tools):
    goal = episode["task"]["goal"]
    memory.setdefault("goals", []).append(goal)
    print("stored", goal)
    tools.store_obs(goal + (" succeeded" if episode["success"] else " failed"), {"ok": episode["success"]})
    tools.graph_update([["room_A", "room_B"]])


def recall(memory, task, tools):
    memory["recalled"] = memory.get("recalled", 0) + 1
    hits = tools.find_similar(task["goal"], 2)
    if not hits:
        print("no results found for", task["goal"])
        return ""
    try:
        tools.store_obs("recall wrote this")
    except Exception as exc:
        print("write refused:", exc)
    return "Past: " + hits[0]["text"]
"""


def episode(goal: str, success: bool = True) -> dict:
    return {
        "task": {"goal": goal, "observation": {"location": "room_A"}, "domain": "graphworld"},
        "steps": [{"action": {"tool": "look", "args": {}}, "observation": {}, "error": None}],
        "success": success,
        "score": 0.8 if success else 0.0,
        "steps_taken": 1,
    }


def task(goal: str) -> dict:
    return {"goal": goal, "observation": {"location": "room_A"}, "domain": "graphworld"}


@pytest.fixture(scope="module")
def pool():
    p = WorkerPool(SandboxLimits(timeout_s=5.0), max_workers=3)
    yield p
    p.close()


@pytest.fixture
def runner(pool, embedder):
    r = DesignRunner(Design(name="notes", source=NOTES), embedder=embedder, llm=None, pool=pool)
    yield r
    r.close()


async def test_update_recall_and_log_content(runner):
    _, empty = await runner.recall(task("Bring the key to room_C."), label="C1")
    assert empty.ok and empty.return_value == ""
    assert '[C1:recall] TOOL find_similar: k=2 query="Bring the key to room_C." -> []' in empty.format_lines()
    assert "[C1:recall] PRINT: no results found for Bring the key to room_C." in empty.format_lines()
    assert any(
        line.startswith("[C1:recall] SIMILARITY find_similar: label=NO_RESULTS")
        for line in empty.format_lines()
    )

    log = await runner.update(episode("Bring the key to room_C."), label="C1")
    assert (
        log.ok
        and log.phase == "update"
        and log.episode == "C1"
        and log.prints == ["stored Bring the key to room_C."]
    )
    assert [t.name for t in log.tool_calls] == ["store_obs", "graph_update"]
    assert log.tool_calls[0].result == "stored:obs-1" and log.duration_s > 0
    assert runner.memory["goals"] == ["Bring the key to room_C."] and runner.memory["recalled"] == 1

    advice, log = await runner.recall(task("Bring the key to room_D."), label="C2")
    assert advice == "Past: Bring the key to room_C. succeeded"
    sim = log.similarity[0]
    assert sim.label == "OK" and sim.n == 1 and sim.k == 2
    lines = log.format_lines("C2")
    assert '[C2:recall] RETURN: "Past: Bring the key to room_C. succeeded"' in lines
    assert (
        '[C2:recall] TOOL store_obs: collection="default" text="recall wrote this" -> "stored:obs-2"' in lines
    )
    assert runner.memory["recalled"] == 2  # before freezing, recall's memory changes are kept
    assert CallLog.from_dict(json.loads(json.dumps(log.to_dict()))).format_lines("C2") == lines


async def test_freeze_semantics(runner):
    await runner.update(episode("Bring the key to room_C."))
    runner.freeze()
    before = json.dumps(runner.memory, sort_keys=True)
    advice, log = await runner.recall(task("Bring the key to room_D."), label="D1")
    assert advice.startswith("Past:")
    refused = next(t for t in log.tool_calls if t.name == "store_obs")
    assert "refused: memory is frozen for deployment" in refused.error
    assert any("write refused: store_obs refused: memory is frozen" in p for p in log.prints)
    assert "ERROR store_obs refused" in "\n".join(log.format_lines("D1"))
    assert json.dumps(runner.memory, sort_keys=True) == before  # recall's change discarded
    blocked = await runner.update(episode("another"))
    assert blocked.error_kind == "frozen" and "frozen" in blocked.error


async def test_frozen_recalls_run_concurrently(runner):
    for i in range(3):
        await runner.update(episode(f"Bring the gem to room_{'ABC'[i]}."))
    runner.freeze()
    results = await asyncio.gather(
        *(runner.recall(task(f"Bring the gem to room_{r}."), label=f"D{i}") for i, r in enumerate("ABCDEF"))
    )
    assert all(advice.startswith("Past: Bring the gem") for advice, _ in results)
    assert all(log.ok for _, log in results)
    assert len({log.worker["pid"] for _, log in results}) >= 1


async def test_snapshot_and_restore(runner, pool, embedder):
    await runner.update(episode("Bring the key to room_C."))
    snap = json.loads(json.dumps(runner.snapshot()))
    assert snap["memory"]["goals"] == ["Bring the key to room_C."]
    assert snap["tools"]["graph"]["edges"] == [["room_A", "room_B"]]
    copy = DesignRunner.restore(runner.design, snap, embedder=embedder, llm=None, pool=pool)
    try:
        advice, _ = await copy.recall(task("Bring the key to room_D."))
        assert advice == "Past: Bring the key to room_C. succeeded"
        copy.freeze()
        frozen = DesignRunner.restore(runner.design, copy.snapshot(), embedder=embedder, llm=None, pool=pool)
        assert frozen.frozen
        frozen.close()
    finally:
        copy.close()


def test_sync_and_async_agree(runner, pool, embedder):
    other = DesignRunner(runner.design, embedder=embedder, llm=None, pool=pool)
    try:
        a = runner.update_sync(episode("Bring the key to room_C."))
        b = asyncio.run(other.update(episode("Bring the key to room_C.")))
        assert a.prints == b.prints and [t.result for t in a.tool_calls] == [t.result for t in b.tool_calls]
        assert runner.memory == other.memory
    finally:
        other.close()


def test_workers_are_reused_per_design(pool, embedder):
    r1 = DesignRunner(Design(name="a", source=NOTES), embedder=embedder, llm=None, pool=pool)
    r2 = DesignRunner(
        Design(name="b", source=NOTES + "\n# different design\n"), embedder=embedder, llm=None, pool=pool
    )
    try:
        logs = [r1.update_sync(episode(f"goal {i}")) for i in range(3)]
        assert len({log.worker["pid"] for log in logs}) == 1
        assert [log.worker["reused"] for log in logs] == [False, True, True]
        other = r2.update_sync(episode("goal"))
        assert other.worker["pid"] != logs[0].worker["pid"]  # never shares a worker with another design
    finally:
        r1.close()
        r2.close()


STASH = """
import json


def stashed():
    try:
        return json.JSONDecoder.stash  # hidden state outside memory (a shared class)
    except AttributeError:
        return []


def update(memory, episode, tools):
    json.JSONDecoder.stash = [*stashed(), episode["task"]["goal"]]


def recall(memory, task, tools):
    seen = stashed()
    json.JSONDecoder.stash = [*seen, task["goal"]]
    return "hidden: " + "|".join(seen)
"""


def test_class_attributes_carry_no_state_into_or_across_deployment(pool, embedder):
    """The static check refuses ``json.JSONDecoder.stash = ...``; the sandbox must contain it anyway."""
    stash = Design(name="stash", source=STASH)
    assert any("keep state in the memory dict" in p.message for p in stash.check())
    r = DesignRunner(stash, embedder=embedder, llm=None, pool=pool, skip_static_check=True)
    other = DesignRunner(stash, embedder=embedder, llm=None, pool=pool, skip_static_check=True)
    try:
        assert r.update_sync(episode("g1")).ok and r.update_sync(episode("g2")).ok
        advice, _ = r.recall_sync(task("c1"))
        assert advice == "hidden: g1|g2"  # collection: one runner, one warm worker (allowed)
        # another runner of the same design (another namespace of a served design) gets another worker
        assert other.update_sync(episode("o1")).ok
        assert other.recall_sync(task("c2"))[0] == "hidden: o1"
        other.close()
        r.freeze()
        outs = [r.recall_sync(task(f"d{i}")) for i in range(3)]
        assert [a for a, _ in outs] == ["hidden: "] * 3  # nothing from collection, nothing between tasks
        assert len({log.worker["pid"] for _, log in outs}) == 3
        assert all(not log.worker["reused"] for _, log in outs)
    finally:
        r.close()


@pytest.mark.slow
def test_host_tool_time_is_not_design_time(pool, embedder):
    def slow(messages, **kwargs):
        time.sleep(1.5)
        return "slow summary"

    design = Design(
        name="slow",
        source="def update(memory, episode, tools):\n    pass\n\n\n"
        "def recall(memory, task, tools):\n    return tools.summarize('text', 'short')\n",
    )
    r = DesignRunner(
        design, embedder=embedder, llm=ScriptedLLM(slow), pool=pool, limits=SandboxLimits(timeout_s=1.0)
    )
    try:
        advice, log = r.recall_sync(task("x"))
        assert log.ok and advice == "slow summary"
    finally:
        r.close()


def test_invalid_design_never_runs(pool, embedder):
    r = DesignRunner(Design(name="bad", source="import os\n"), embedder=embedder, llm=None, pool=pool)
    advice, log = r.recall_sync(task("x"))
    assert advice == "" and log.error_kind == "static_check" and "import of 'os'" in log.error
    assert not r.valid and log.worker == {}
    r.close()


def test_protections_report(runner):
    p = runner.protections
    assert p["sandbox"] is True and p["host"]["timeout_s"] == 5.0
    assert {"rlimits", "landlock", "seccomp", "builtins", "degraded", "summary"} <= set(p)
    assert p["rlimits"]["RLIMIT_FSIZE"] == 0
    if p["landlock"]["active"] and p["seccomp"]["active"]:
        assert p["degraded"] == [] and "landlock" in p["summary"] and "seccomp" in p["summary"]
    else:
        assert p["degraded"]


def test_sandbox_that_cannot_start_raises(embedder):
    pool = WorkerPool(python="/nonexistent/python")
    r = DesignRunner(get_baseline("no_memory"), embedder=embedder, llm=None, pool=pool)
    with pytest.raises(SandboxError):
        r.recall_sync(task("x"))
    pool.close()


# --- host-side designs ---------------------------------------------------------------------------


def test_memory_system_host_design(embedder):
    r = DesignRunner(
        get_baseline("memory_system"), embedder=embedder, llm=None, host_executor=make_host_design
    )
    try:
        assert r.protections["sandbox"] is False
        log = r.update_sync(episode("Bring the key to room_C."), label="C1")
        assert log.ok, log.error
        assert log.tool_calls[0].name == "memory.store"
        advice, log = r.recall_sync(task("Bring the key to room_D."), label="C2")
        assert log.ok and "Bring the key to room_C." in advice
        r.freeze()
        assert r.update_sync(episode("x")).error_kind == "frozen"
        assert r.snapshot()["host"]["supported"] is False
    finally:
        r.close()


def test_a_host_design_needs_a_host_executor(embedder):
    """The runner (evaluation layer) never imports the baselines: whoever runs a host-side design
    passes the executor that builds it."""
    with pytest.raises(ConfigError, match="host_executor"):
        DesignRunner(get_baseline("memory_system"), embedder=embedder, llm=None)


def test_guideline_bank_host_design_reports_errors_as_data(embedder):
    r = DesignRunner(
        get_baseline("guideline_bank"), embedder=embedder, llm=None, host_executor=make_host_design
    )
    try:
        log = r.update_sync(episode("Bring the key to room_C."))
        assert log.error is not None and log.error_kind == "host"  # no LLM: the bank cannot learn
        advice, log = r.recall_sync(task("Bring the key to room_D."))
        assert log.ok and advice == ""
    finally:
        r.close()
