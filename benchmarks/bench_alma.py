"""ALMA iteration wall time at --concurrency 1 vs 8, and the framework's own overhead per episode.

The models are a real ``LLMClient`` over a backend that sleeps a fixed latency per call (what a
remote API costs in waiting) and answers like a reasonable GraphWorld player (task agent), a
design writer (meta agent) and a log analyst (debug agent). Everything else is real: the sandbox,
the ONNX embedder, GraphWorld, the TaskAgent, the harness, the run folder.

    python benchmarks/bench_alma.py            # latency 50 ms, 3 episodes x 3 deployment seeds, 8 rooms
    python benchmarks/bench_alma.py --quick    # latency 20 ms, 2 episodes x 2 deployment seeds

Printed: one iteration's wall time at concurrency 1 and 8 (speed-up ratio, against the ideal
Amdahl bound for a sequential collection + parallel deployment), and per episode the framework's
overhead (episode wall time minus the LLM latency it waited for) against that LLM wait (ratio).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from atlas.alma.search.loop import Search
from atlas.alma.state.config import AlmaConfig
from atlas.alma.state.run_dir import RunDir, read_jsonl
from atlas.infra.embeddings import default_embedder
from atlas.infra.llm import LLMClient
from atlas.infra.llm.backend import LLMRequest
from atlas.protocols.llm import Completion, ToolCall, Usage

GOAL = re.compile(r"Goal: Bring the (\S+) to (room_\w+)\.")
OBS = re.compile(
    r"You are in (room_\w+)\. Adjacent rooms: ([^.]*)\. Objects here: ([^.]*)\. You carry: ([^.]*)\."
)

DESIGN = """
def update(memory, episode, tools):
    edges = []
    for obs in [episode["task"]["observation"]] + [s["observation"] for s in episode["steps"]]:
        for other in obs.get("adjacent_rooms", []):
            edges.append([obs.get("location"), other])
    if edges:
        tools.graph_update(edges)
    tools.store_obs(episode["task"]["goal"] + (" solved" if episode["success"] else " failed"))


def recall(memory, task, tools):
    start = task["observation"].get("location", "")
    dest = task["goal"].rstrip(".").split(" to ")[-1]
    path = tools.graph_path(start, dest)
    similar = tools.find_similar(task["goal"], k=2)
    hint = "; ".join(r["text"] for r in similar)
    return ("Route: " + " -> ".join(path) if path else "explore") + ". Similar: " + hint
"""


def _items(text: str) -> list[str]:
    text = text.strip()
    return [] if text in ("", "nothing") else [x.strip() for x in text.split(",")]


def task_reply(messages: list[dict[str, Any]], tools: Any) -> Completion:
    if not tools:
        return Completion(text="summary")
    system, user = messages[0]["content"], messages[-1]["content"]
    goal = GOAL.search(user)
    obs = list(OBS.finditer(user.split("Current observation:", 1)[-1]))

    def call(name: str, **args: Any) -> Completion:
        return Completion(text="", tool_calls=[ToolCall(name=name, arguments=args, id="c0")])

    if not goal or not obs:
        return call("look")
    target, dest = goal.groups()
    here, adjacent, objects, carry = obs[-1].groups()
    adjacent, objects, carry = _items(adjacent), _items(objects), _items(carry)
    if target in carry and here == dest:
        return call("put_down", object=target)
    if target in objects and target not in carry:
        return call("pick_up", object=target)
    for route in re.findall(r"(room_\w+(?: -> room_\w+)+)", system):
        hops = route.split(" -> ")
        if here in hops[:-1] and hops[hops.index(here) + 1] in adjacent:
            return call("move_to", room=hops[hops.index(here) + 1])
    visits = {r: len(re.findall(rf'move_to\(room="{r}"\)', user)) for r in adjacent}
    return call("move_to", room=min(sorted(visits), key=lambda r: visits[r])) if visits else call("look")


def meta_reply(messages: list[dict[str, Any]], tools: Any) -> Completion:
    return Completion(text=f"Name: route_and_notes\nPlan: map + notes.\n```python\n{DESIGN.strip()}\n```")


FINAL = {
    "analysis": "recall gives routes once the map exists",
    "constraints": ["keep routes", "add notes"],
    "evidence": [],
}


def debug_reply(messages: list[dict[str, Any]], tools: Any) -> Completion:
    if sum(m["role"] == "assistant" for m in messages) == 0:
        return Completion(text=json.dumps({"tool": "grep", "args": {"pattern": "RETURN"}}))
    return Completion(
        text=json.dumps({"final": FINAL}) if "json_schema" not in messages else json.dumps(FINAL)
    )


class SleepyBackend:
    """A backend that waits ``latency`` seconds per call, like a remote model, then answers."""

    supports_tools = True

    def __init__(self, latency: float, answer: Any, model: str = "sleepy") -> None:
        self.latency = latency
        self.answer = answer
        self.model = model
        self.calls = 0

    async def complete(self, request: LLMRequest) -> Completion:
        self.calls += 1
        await asyncio.sleep(self.latency)
        c = self.answer(request.messages, request.tools)
        if request.json_schema and not request.tools and self.answer is debug_reply:
            c = Completion(text=json.dumps(FINAL))
        return Completion(
            text=c.text, tool_calls=c.tool_calls, usage=Usage(100, 10, 0.0, 1), model=self.model
        )


async def one_iteration(
    concurrency: int, latency: float, episodes: int, deploy_seeds: int, rooms: int, embedder: Any, root: Path
) -> dict[str, Any]:
    task = LLMClient(SleepyBackend(latency, task_reply), timeout=None)
    meta = LLMClient(SleepyBackend(latency, meta_reply), timeout=None)
    debug = LLMClient(SleepyBackend(latency, debug_reply), timeout=None)
    cfg = AlmaConfig(
        env="graphworld",
        iterations=1,
        episodes=episodes,
        deploy_seeds=deploy_seeds,
        rooms=rooms,
        seed=42,
        concurrency=concurrency,
        baselines=[],
        quiet=True,
    )
    search = Search(
        cfg,
        llm=task,
        meta_llm=meta,
        debug_llm=debug,
        run_dir=RunDir.create(root / f"c{concurrency}"),
        embedder=embedder,
        trace=False,
        baseline_cache=False,
    )
    search._setup(False)
    try:
        await search._baseline()
        await search._seeds()
        t0 = time.perf_counter()
        entry = await search.iteration(1)
        wall = time.perf_counter() - t0
    finally:
        search.close()
    eps = read_jsonl(search.run_dir.logs_dir(entry.id) / "episodes.jsonl")
    return {"wall": wall, "entry": entry, "episodes": eps}


async def main(quick: bool) -> None:
    latency = 0.02 if quick else 0.05
    episodes, deploy_seeds, rooms = (2, 2, 6) if quick else (3, 3, 8)
    embedder = default_embedder()
    embedder.embed(["warm up"])
    with tempfile.TemporaryDirectory() as tmp:
        r1 = await one_iteration(1, latency, episodes, deploy_seeds, rooms, embedder, Path(tmp))
        r8 = await one_iteration(8, latency, episodes, deploy_seeds, rooms, embedder, Path(tmp))
    n_col, n_dep = episodes, episodes * deploy_seeds
    print(
        f"ALMA iteration benchmark: latency {latency * 1000:.0f} ms/call, GraphWorld {rooms} rooms, "
        f"{n_col} collection + {n_dep} deployment episodes, status {r1['entry'].status}"
    )
    print(f"  concurrency 1: {r1['wall']:.2f} s per iteration")
    print(f"  concurrency 8: {r8['wall']:.2f} s per iteration")
    # Amdahl bound: the collection phase (and meta/debug) stays sequential; only deployment overlaps.
    col = sum(e["duration_s"] for e in r1["episodes"] if e["phase"] == "collection")
    dep = sum(e["duration_s"] for e in r1["episodes"] if e["phase"] == "deployment")
    rest = r1["wall"] - col - dep
    ideal = r1["wall"] / (rest + col + dep / min(8, n_dep))
    print(
        f"  speed-up 1→8: {r1['wall'] / r8['wall']:.2f}x (ideal for this split {ideal:.2f}x: "
        f"collection {col:.2f} s sequential, deployment {dep:.2f} s parallel, generation {rest:.2f} s)"
    )
    over = [e["duration_s"] - e["usage"]["calls"] * latency for e in r1["episodes"]]
    wait = [e["usage"]["calls"] * latency for e in r1["episodes"]]
    calls = [e["usage"]["calls"] for e in r1["episodes"]]
    print(
        f"  framework overhead per episode (concurrency 1): {statistics.mean(over) * 1000:.1f} ms "
        f"(median {statistics.median(over) * 1000:.1f} ms; {statistics.mean(calls):.1f} LLM calls/episode, "
        f"{statistics.mean(over) / statistics.mean(calls) * 1000:.1f} ms per call)"
    )
    print(
        f"  reference: LLM wait per episode {statistics.mean(wait) * 1000:.0f} ms → overhead/LLM-wait "
        f"= {statistics.mean(over) / statistics.mean(wait):.3f}"
    )


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller settings and latency")
    asyncio.run(main(ap.parse_args().quick))
