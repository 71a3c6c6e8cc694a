"""Sandbox overhead: worker start-up, per-call cost with a warm worker (update/recall, 0 and 20 tool
calls), the cost of resending the source vs the cached compiled design, and a larger memory —
each compared with the same design code run in-process (the reference) as a ratio.

    python benchmarks/bench_sandbox.py [--quick]

Host tools are real (DesignTools over GraphStore); the 20 tool calls are ``graph_neighbors`` so the
figure is the proxy's cost, not an embedding's.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Any

from atlas.alma.design import Design
from atlas.alma.evaluate.runner import DesignRunner
from atlas.alma.evaluate.tools import DesignTools
from atlas.alma.sandbox.pool import SandboxLimits, WorkerPool
from atlas.alma.sandbox.process import WorkerHandle
from atlas.infra.embeddings import NGramEmbedder

SOURCE = """
import json


def update(memory, episode, tools):
    for _ in range(episode["tool_calls"]):
        tools.graph_neighbors("room_A")
    memory["n"] = memory.get("n", 0) + 1


def recall(memory, task, tools):
    found = []
    for _ in range(task["tool_calls"]):
        found = tools.graph_neighbors("room_A")
    return "neighbors: " + json.dumps(found) + " after " + str(memory.get("n", 0)) + " updates"
"""


class InProcessTools:
    """The reference: the same host tools, called directly (no process boundary, no JSON)."""

    def __init__(self, tools: DesignTools) -> None:
        self._t = tools

    def graph_neighbors(self, node: str) -> Any:
        return self._t.call("graph_neighbors", {"node": node}).value


def in_process_call(code: Any, function: str, memory: dict, arg: dict, tools: Any) -> Any:
    """What a non-sandboxed harness would do per call: fresh module globals, call the function."""
    g: dict[str, Any] = {"__name__": "design"}
    exec(code, g)
    return g[function](memory, arg, tools)


def timed(fn, n: int) -> float:
    """Median seconds of ``fn()`` over ``n`` runs (after 3 warm-up runs)."""
    for _ in range(3):
        fn()
    samples = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = ap.parse_args()
    n_calls = 40 if args.quick else 300
    n_start = 3 if args.quick else 10

    limits = SandboxLimits()
    starts = []
    for _ in range(n_start):
        t0 = time.perf_counter()
        w = WorkerHandle(limits)
        starts.append(time.perf_counter() - t0)
        w.close()
    startup = statistics.median(starts)
    protections = w.protections
    active = [k for k in ("landlock", "seccomp") if protections.get(k, {}).get("active")]
    print(f"python {sys.version.split()[0]}; active OS layers: rlimits + {' + '.join(active) or 'none'}")
    print(
        f"worker start-up (spawn + imports + lock-down + ready): median {startup * 1000:.1f} ms "
        f"over {n_start}"
    )

    tools = DesignTools(NGramEmbedder())
    tools.call("graph_update", {"edges": [["room_A", "room_B"], ["room_A", "room_C"]]})
    ref_tools = InProcessTools(tools)
    code = compile(SOURCE, "<design>", "exec")
    design = Design(name="bench", source=SOURCE)
    digest = design.source_hash

    def handler(name: str, a: dict) -> Any:
        return tools.call(name, a).value

    pool = WorkerPool(limits, max_workers=1, spares=0)
    worker = pool.acquire(digest)
    rows = []
    try:
        for function in ("update", "recall"):
            for k in (0, 20):
                arg = {"tool_calls": k, "goal": "Bring the key to room_C."}
                memory = {"n": 1}

                def sandboxed(function=function, arg=arg, memory=memory):
                    out = worker.run_call(
                        design_hash=digest,
                        source=SOURCE,
                        function=function,
                        memory=memory,
                        arg=arg,
                        return_memory=function == "update",
                        tool_handler=handler,
                    )
                    assert out.error is None, out.error

                def reference(function=function, arg=arg, memory=memory):
                    in_process_call(code, function, dict(memory), arg, ref_tools)

                s, r = timed(sandboxed, n_calls), timed(reference, n_calls)
                rows.append((f"{function}, {k:2d} tool calls", s, r))

        arg = {"tool_calls": 0}

        cached = timed(
            lambda: worker.run_call(
                design_hash=digest,
                source=SOURCE,
                function="recall",
                memory={},
                arg=arg,
                return_memory=False,
                tool_handler=handler,
            ),
            n_calls,
        )
        # a new hash each time forces send + compile in the worker
        counter = iter(range(10**9))

        def fresh():
            h = f"{digest}-{next(counter)}"
            out = worker.run_call(
                design_hash=h,
                source=SOURCE,
                function="recall",
                memory={},
                arg=arg,
                return_memory=False,
                tool_handler=handler,
            )
            assert out.error is None

        uncached = timed(fresh, n_calls)
        big = {"notes": [f"observation {i}: the key was in room_{i % 9}" for i in range(2500)]}
        big_arg = {"tool_calls": 0}

        def big_update():
            out = worker.run_call(
                design_hash=digest,
                source=SOURCE,
                function="update",
                memory=big,
                arg=big_arg,
                return_memory=True,
                tool_handler=handler,
            )
            assert out.error is None

        def big_reference():
            in_process_call(code, "update", dict(big), big_arg, ref_tools)

        import json as _json

        size_kb = len(_json.dumps(big)) / 1024
        rows.append(
            (
                f"update, {size_kb:.0f} KB memory",
                timed(big_update, max(10, n_calls // 5)),
                timed(big_reference, max(10, n_calls // 5)),
            )
        )
    finally:
        pool.release(worker)
        pool.close()

    print(f"\nper call with a warm worker (median of {n_calls}; reference = same code in-process):")
    print(f"{'case':<28}{'sandbox':>12}{'in-process':>14}{'ratio':>10}")
    for name, s, r in rows:
        print(f"{name:<28}{s * 1e3:>10.3f}ms{r * 1e3:>12.3f}ms{s / r:>9.1f}x")
    per_tool = (rows[1][1] - rows[0][1]) / 20
    print(
        f"\nper tool call through the proxy: {per_tool * 1e6:.0f} us "
        f"(in-process {((rows[1][2] - rows[0][2]) / 20) * 1e6:.1f} us)"
    )
    print(
        f"design source resent + compiled every call: {uncached * 1e3:.3f} ms vs cached by hash "
        f"{cached * 1e3:.3f} ms ({uncached / cached:.1f}x) -> the pool caches per worker by source hash"
    )

    runner = DesignRunner(design, embedder=NGramEmbedder(), llm=None, limits=limits)
    try:
        runner.tools = tools
        runner.update_sync({"tool_calls": 0})
        via_runner = timed(lambda: runner.recall_sync({"tool_calls": 0}), n_calls)
    finally:
        runner.close()
    print(
        f"full DesignRunner.recall_sync (pool acquire/release, logging), 0 tool calls: "
        f"{via_runner * 1e3:.3f} ms ({via_runner / rows[2][2]:.0f}x the in-process call)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
