"""WorkerPool / WorkerHandle / protocol: binding per design, eviction, spares, shutdown, messages."""

from __future__ import annotations

import os
import time

import pytest

from atlas.alma.sandbox import protocol
from atlas.alma.sandbox.pool import SandboxLimits, ToolRefusal, WorkerPool
from atlas.alma.sandbox.process import default_read_paths
from atlas.errors import SandboxError

SRC = (
    "def update(memory, episode, tools):\n    memory['n'] = memory.get('n', 0) + 1\n\n\n"
    "def recall(memory, task, tools):\n    return str(tools.graph_neighbors(task['node']))\n"
)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _handler(name, args):
    if args.get("node") == "refuse":
        raise ToolRefusal("no such node")
    return ["room_B"]


def test_worker_call_conversation():
    with WorkerPool(spares=0) as pool:
        w = pool.acquire("h")
        out = w.run_call(
            design_hash="h",
            source=SRC,
            function="update",
            memory={"n": 1},
            arg={},
            return_memory=True,
            tool_handler=_handler,
        )
        assert out.error is None and out.memory == {"n": 2}
        assert "h" in w.loaded  # the source is sent once; later calls send only the hash
        out = w.run_call(
            design_hash="h",
            source=SRC,
            function="recall",
            memory={},
            arg={"node": "room_A"},
            return_memory=False,
            tool_handler=_handler,
        )
        assert out.value == "['room_B']" and out.memory is None and out.worker["reused"]
        out = w.run_call(
            design_hash="h",
            source=SRC,
            function="recall",
            memory={},
            arg={"node": "refuse"},
            return_memory=False,
            tool_handler=_handler,
        )
        assert out.error_kind == "design" and "ToolError: no such node (design line 6)" in out.error
        w.loaded.clear()  # host forgot: the worker asks for the source again
        out = w.run_call(
            design_hash="h",
            source=SRC,
            function="recall",
            memory={},
            arg={"node": "x"},
            return_memory=False,
            tool_handler=_handler,
        )
        assert out.value == "['room_B']"
        pool.release(w)


def test_binding_eviction_and_close():
    pool = WorkerPool(max_workers=2, spares=0)
    a = pool.acquire("design-a")
    pool.release(a)
    assert pool.acquire("design-a") is a  # reused for the same design
    pool.release(a)
    b = pool.acquire("design-b")
    assert b is not a  # a fresh worker: never one that ran another design
    pool.release(b)
    c = pool.acquire("design-c")  # at max_workers: the least recently used idle worker is evicted
    assert c.pid not in (a.pid,) and not _alive(a.pid)
    pool.release(c)
    pool.retire("design-c")
    assert not _alive(c.pid)
    pids = pool.pids()
    pool.close()
    assert all(not _alive(p) for p in [*pids, b.pid])
    with pytest.raises(SandboxError, match="closed"):
        pool.acquire("x")


def test_spares_are_started_ahead():
    with WorkerPool(max_workers=3, spares=1) as pool:
        w = pool.acquire("d")
        deadline = time.monotonic() + 30
        while len(pool.pids()) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(pool.pids()) == 2  # one busy + one spare warming up
        pool.release(w)


def test_acquire_waits_then_times_out():
    with WorkerPool(max_workers=1, spares=0) as pool:
        w = pool.acquire("d")
        with pytest.raises(SandboxError, match="no sandbox worker became free"):
            pool.acquire("d", timeout=0.3)
        pool.release(w)


def test_protections_report_from_the_worker():
    with WorkerPool(spares=0) as pool:
        p = pool.protections
        assert p["rlimits"]["RLIMIT_AS"] == 512 * 1024 * 1024 and p["rlimits"]["RLIMIT_NPROC"] == 0
        assert p["builtins"]["active"] is True and "open" in p["builtins"]["removed"]
        for layer in ("landlock", "seccomp"):
            assert isinstance(p[layer]["active"], bool)
            if not p[layer]["active"]:
                assert p[layer]["reason"]


def test_limits_and_read_paths():
    limits = SandboxLimits()
    assert limits.timeout_s == 10.0 and limits.max_message_bytes > limits.max_memory_bytes
    paths = default_read_paths()
    assert paths and all(os.path.isdir(p) for p in paths)
    assert not any(p.endswith("site-packages") for p in paths)


def test_protocol_round_trip_and_rejects():
    line = protocol.encode({"op": "tool", "name": "x", "args": {"a": [1, "é"]}})
    assert line.endswith(b"\n") and protocol.decode(line, protocol.WORKER_OPS)["args"] == {"a": [1, "é"]}
    for bad in (b"nope\n", b"[1]\n", b'{"op": "call"}\n'):
        with pytest.raises(protocol.ProtocolError):
            protocol.decode(bad, protocol.WORKER_OPS)
    with pytest.raises(ValueError):
        protocol.encode({"op": "done", "value": float("nan")})


def test_public_api_is_pinned():
    import atlas.alma.author.smoke as smoke
    import atlas.alma.baselines as baselines
    import atlas.alma.design as design
    import atlas.alma.evaluate.runlog as runlog
    import atlas.alma.evaluate.runner as runner
    import atlas.alma.evaluate.tools as tools
    import atlas.alma.sandbox as sandbox

    assert sandbox.__all__ == [
        "CallOutcome",
        "SandboxLimits",
        "ToolRefusal",
        "WorkerHandle",
        "WorkerPool",
        "default_read_paths",
    ]
    assert {"Design", "DesignProblem", "check_design", "ensure_valid"} <= set(design.__all__)
    assert {"DesignRunner", "describe_protections"} == set(runner.__all__)
    assert {"CallLog", "ToolCallRecord", "SimilarityStats", "SimilarityThresholds"} <= set(runlog.__all__)
    assert {"SmokeReport", "smoke_run", "asmoke_run"} <= set(smoke.__all__)
    assert {"get_baseline", "list_baselines", "make_host_design", "register_host_design"} <= set(
        baselines.__all__
    )
    assert {"DesignTools", "ToolRefusal"} <= set(tools.__all__)
    for module in (sandbox, design, runner, runlog, smoke, baselines, tools):
        for name in module.__all__:
            assert hasattr(module, name), (module.__name__, name)
