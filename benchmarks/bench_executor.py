"""Episodes per hour: the local executor vs the Ray executor on this machine, with a task-model double
whose every call takes a fixed 500 ms (a hosted model's latency, no CPU), at 8, 32 and 128 episodes in
flight, each as a ratio to the serial rate (one episode at a time, local) measured in the same run.

    python benchmarks/bench_executor.py [--quick] [--latency 0.5] [--turns 4]

One design (``no_memory``: its recall runs in the sandbox, as every design's does) is evaluated with
one collection episode and ``waves × in-flight`` deployment episodes; the rate counts deployment
episodes between the end of collection and the last one, best of ``--repeats`` runs per setting (the
machine is shared: the best run is the least disturbed one). Ray runs on a local cluster started here
(``ray.init``: one node, this machine's cores). The last line reads
``ray128-speedup X local8-ratio Y``: Ray at 128 in flight over the serial rate, and Ray at 8 over
the local executor at 8 (targets: X ≥ 30 on a 2-core machine, Y ≥ 1).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import sys
import time
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from atlas.agent import TaskAgent
from atlas.alma.baselines import get_baseline, make_host_design
from atlas.alma.evaluate.executor import Executor, LocalExecutor
from atlas.alma.evaluate.harness import Harness, make_tasks
from atlas.alma.sandbox.pool import SandboxLimits, WorkerPool
from atlas.envs.registry import get_env
from atlas.infra.embeddings import make_embedder
from atlas.protocols.llm import Completion, ToolCall, Usage

ENV = {"rooms": 5}


class LatencyLLM:
    """A task model that waits ``latency`` seconds per call (without using the CPU) and always looks
    around, so every episode plays its full turn budget: ``turns × latency`` seconds."""

    model = "double:latency"
    supports_tools = True

    def __init__(self, latency: float = 0.5) -> None:
        self.latency = latency
        self.usage = Usage()

    def _reply(self, tools: Any, choices: Any) -> Completion:
        self.usage.add(Usage(prompt_tokens=100, completion_tokens=5, calls=1))
        if tools:
            return Completion(
                text="", tool_calls=[ToolCall(name="look", arguments={})], usage=Usage(100, 5, 0.0, 1)
            )
        return Completion(text=choices[0] if choices else "{}", usage=Usage(100, 5, 0.0, 1))

    async def acomplete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: Any = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        json_schema: Any = None,
        stop: Any = None,
        tool_choice: str | None = None,
        choices: Any = None,
        **_: Any,
    ) -> Completion:
        await asyncio.sleep(self.latency)
        return self._reply(tools, choices)

    def complete(self, messages: list[dict[str, Any]], **kwargs: Any) -> Completion:
        time.sleep(self.latency)
        return self._reply(kwargs.get("tools"), kwargs.get("choices"))


def tasks(waves: int, inflight: int, seed: int) -> tuple[list[Any], list[Any]]:
    env = get_env("graphworld", **ENV)
    n = waves * inflight
    col, _ = make_tasks(env, episodes=1, seed=seed, family=None, deployment_seeds=[])
    dep = [t for k in range(n) for t in env.generate_tasks(1, seed + 1000 + k)]
    return col, dep


async def measure(executor: Executor, col: list[Any], dep: list[Any], marks: list[float]) -> float:
    """Deployment episodes per hour between the end of collection and the last episode."""
    marks.clear()
    ev = await executor.evaluate(get_baseline("no_memory").model_copy(update={"id": "d-0001"}), col, dep)
    assert ev.status == "ok" and len(ev.deployment) == len(dep), ev.errors
    start, end = marks[0], marks[-1]  # marks: C1's end, then every deployment episode's
    return (len(dep) / max(end - start, 1e-9)) * 3600


def local(inflight: int, latency: float, turns: int, marks: list[float]) -> LocalExecutor:
    env, llm = get_env("graphworld", **ENV), LatencyLLM(latency)
    pool = WorkerPool(SandboxLimits(), max_workers=max(2, min(inflight, os.cpu_count() or 2)))
    harness = Harness(
        env,
        TaskAgent(llm, max_turns=turns),  # type: ignore[arg-type]
        embedder=make_embedder("ngram"),
        design_llm=llm,  # type: ignore[arg-type]
        concurrency=inflight,
        pool=pool,
        on_episode=lambda rec: marks.append(time.perf_counter()),
        host_executor=make_host_design,
    )
    return LocalExecutor(harness)


def ray_executor(inflight: int, latency: float, turns: int, marks: list[float]) -> Any:
    from atlas.alma.cluster import RayExecutor, WorkerKit

    kit = WorkerKit(
        env="graphworld",
        env_kwargs=ENV,
        llm_factory=functools.partial(LatencyLLM, latency),
        embedder_name="ngram",
        max_turns=turns,
        host_executor=make_host_design,
        sandbox_workers=2,
    )
    return RayExecutor(
        kit,
        address="auto",
        concurrency=inflight,
        embedder_name="ngram",
        on_episode=lambda r: marks.append(time.perf_counter()),
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="two waves per setting (under 5 minutes)")
    ap.add_argument("--latency", type=float, default=0.5, help="seconds per model call (default 0.5)")
    ap.add_argument("--turns", type=int, default=4, help="model calls per episode (default 4)")
    ap.add_argument("--inflight", default="8,32,128")
    ap.add_argument("--repeats", type=int, default=2, help="runs per setting; the best counts (load noise)")
    args = ap.parse_args()
    waves = 2 if args.quick else 4
    levels = [int(x) for x in args.inflight.split(",")]
    import ray

    ray.init(
        num_cpus=os.cpu_count() or 2, include_dashboard=False, log_to_driver=False, logging_level="ERROR"
    )
    marks: list[float] = []
    rows: list[tuple[str, int, float]] = []
    t0 = time.perf_counter()
    try:
        col, dep = tasks(1, 4 if args.quick else 8, seed=7)
        ex = local(1, args.latency, args.turns, marks)
        serial = asyncio.run(measure(ex, col, dep, marks))
        rows.append(("local", 1, serial))
        for n in levels:
            col, dep = tasks(waves, n, seed=11 + n)
            for name, make in (("local", local), ("ray", ray_executor)):
                ex = make(n, args.latency, args.turns, marks)
                try:
                    best = max(asyncio.run(measure(ex, col, dep, marks)) for _ in range(args.repeats))
                    rows.append((name, n, best))
                finally:
                    ex.close()
                    if name == "local":
                        ex.harness.pool.close()  # type: ignore[union-attr]
    finally:
        ray.shutdown()
    print(
        f"cores: {os.cpu_count()}  latency: {args.latency * 1000:.0f} ms/call  turns: {args.turns}  "
        f"waves: {waves}  best of {args.repeats}"
    )
    print(f"{'executor':<9} {'in flight':>9} {'episodes/hour':>14} {'× serial':>9}")
    for name, n, rate in rows:
        print(f"{name:<9} {n:>9} {rate:>14,.0f} {rate / serial:>9.1f}")
    rate = {(name, n): r for name, n, r in rows}
    print(f"total {time.perf_counter() - t0:.0f}s", file=sys.stderr)
    r128 = rate.get(("ray", 128), float("nan")) / serial
    r8 = rate.get(("ray", 8), float("nan")) / rate.get(("local", 8), float("nan"))
    print(f"ray128-speedup {r128:.1f} local8-ratio {r8:.2f}")


if __name__ == "__main__":
    main()
