"""The design server under concurrent clients: `atlas mcp --design DIR --learn --path S
--transport streamable-http` on 127.0.0.1, and 1, 8 and 32 MCP clients (the SDK's streamable-HTTP
client, one session each) for a fixed time per level, each in a bounded loop of `recall` (the
prompt-time call) then `update` (the server stores the episode) on one namespace per level that all
of that level's clients share.

Printed per level: requests/s, p50/p95 latency of recall and of update, errors; beside it, in the
same run, the reference: the same recall called in process on a `ServedDesign` (no HTTP, no MCP).
Afterwards the server is stopped and every namespace's stored memory (`S/<namespace>.json`) is read
back: each update a client saw acknowledged must be there exactly once, and nothing else. A lost or
doubled item fails the benchmark (exit 1).

    python benchmarks/bench_design_server_load.py [--seconds 10] [--levels 1,8,32]

The design is a ledger (every episode's goal appended to a list, recall returns the last few and the
count); the export is built here from its source with the n-gram embedder, no model anywhere.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

LEDGER = """
def update(memory, episode, tools):
    memory.setdefault("items", []).append(episode["task"]["goal"])


def recall(memory, task, tools):
    items = memory.get("items", [])
    return "seen " + str(len(items)) + ": " + "; ".join(items[-3:])
"""
MAX_CALLS = 100_000  # per client and level: the loop is bounded even if the clock is not
CALL_TIMEOUT_S = 60.0  # a call not answered by then is an error (the benchmark never hangs)
TASK = {"goal": "Bring the key to room_B.", "observation": {}, "domain": "bench"}


def build_export(folder: Path) -> Path:
    """A run folder holding the ledger design with an empty learned memory, exported."""
    from atlas.alma.deploy.export import export_design
    from atlas.alma.design import Design
    from atlas.alma.evaluate.runner import DesignRunner
    from atlas.alma.state.archive import Archive, ArchiveEntry
    from atlas.infra.embeddings import make_embedder

    embedder = make_embedder("ngram")
    design = Design(id="d-0001", name="ledger", source=LEDGER, origin="seed")
    runner = DesignRunner(design, embedder=embedder)
    try:
        learned = {**runner.snapshot(), "embedder": embedder.name}
    finally:
        runner.close()
    arch = Archive()
    entry = ArchiveEntry(
        id="d-0001",
        name="ledger",
        origin="seed",
        collection_score=0.5,
        deployment_score=0.5,
        normalized_score=0.0,
    )
    arch.add(entry, LEDGER)
    entry.learned = learned
    run = folder / "run"
    arch.save(run / "archive.json")
    (run / "config.json").write_text("{}")
    return export_design(run, folder / "export", design_id="d-0001")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(export: Path, state: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, "-m", "atlas.cli", "mcp", "--design", str(export), "--learn", "--path", str(state)]
    cmd += ["--transport", "streamable-http", "--host", "127.0.0.1", "--port", str(port)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    with open(log, "wb") as sink:  # a file, never a pipe nobody reads (a full pipe stops the server)
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=sink)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the server exited: {log.read_text(errors='replace')[-2000:]}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return proc
        time.sleep(0.2)
    proc.kill()
    raise SystemExit("the server did not start within 120 s")


class Start:
    """The level's clock: it starts when every client's session is open, so the figures are calls,
    not session set-ups."""

    def __init__(self, clients: int, seconds: float) -> None:
        self.waiting, self.seconds = clients, seconds
        self.go = asyncio.Event()
        self.t0 = self.deadline = 0.0

    async def ready(self) -> None:
        self.waiting -= 1
        if self.waiting == 0:
            self.t0, self.deadline = time.perf_counter(), time.monotonic() + self.seconds
            self.go.set()
        await self.go.wait()


async def client(url: str, n: int, namespace: str, start: Start, out: dict[str, list[Any]]) -> None:
    """One MCP session: recall then update, from the start until the deadline (or MAX_CALLS)."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamablehttp_client

    async with streamablehttp_client(url) as (read, write, _), ClientSession(read, write) as session:
        await session.initialize()
        await start.ready()
        for i in range(MAX_CALLS):
            if time.monotonic() >= start.deadline:
                out["ended"].append(time.perf_counter())
                return
            item = f"client {n} item {i}"
            episode = {
                "task": {**TASK, "goal": item},
                "steps": [],
                "success": True,
                "score": 1.0,
                "steps_taken": 0,
            }
            for tool, args in (
                ("recall", {"task": TASK, "namespace": namespace}),
                ("update", {"episode": episode, "namespace": namespace}),
            ):
                t0 = time.perf_counter()
                try:
                    res = await asyncio.wait_for(session.call_tool(tool, args), CALL_TIMEOUT_S)
                    ok = not res.isError
                except Exception as exc:  # a transport failure is an error of this call, counted
                    ok, res = False, exc
                out[tool].append(time.perf_counter() - t0)
                if not ok:
                    out["errors"].append(f"{tool}: {str(getattr(res, 'content', res))[:200]}")
                if tool == "update":
                    (out["acked"] if ok else out["unacked"]).append(item)


async def level(url: str, clients: int, seconds: float, namespace: str) -> dict[str, Any]:
    out: dict[str, list[Any]] = {
        "recall": [],
        "update": [],
        "errors": [],
        "acked": [],
        "unacked": [],
        "ended": [],
    }
    start = Start(clients, seconds)
    await asyncio.gather(*(client(url, n, namespace, start, out) for n in range(clients)))
    out["elapsed"] = [max(out["ended"], default=time.perf_counter()) - start.t0]  # the last call's end
    return out


def pct(xs: list[float], q: float) -> float:
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(q * (len(xs) - 1)))] * 1000


def reference(export: Path, calls: int = 200) -> list[float]:
    """The same recall, in process: a ServedDesign on the same export, no HTTP, no MCP."""
    from atlas.alma.deploy.served import ServedDesign

    times = []
    with ServedDesign.open(export, learn=True) as served:
        for i in range(20):
            served.update({"task": {**TASK, "goal": f"warm {i}"}, "steps": [], "success": True, "score": 1.0})
        for _ in range(calls):
            t0 = time.perf_counter()
            served.recall(TASK)
            times.append(time.perf_counter() - t0)
    return times


def check_stored(state: Path, namespace: str, result: dict[str, Any]) -> list[str]:
    """Problems with what the server stored for ``namespace``: acknowledged items missing or doubled,
    items nobody sent."""
    path = state / f"{namespace}.json"
    items = json.loads(path.read_text())["memory"].get("items", []) if path.exists() else []
    problems = []
    counts: dict[str, int] = {}
    for it in items:
        counts[it] = counts.get(it, 0) + 1
    lost = [it for it in result["acked"] if counts.get(it, 0) == 0]
    doubled = [it for it, c in counts.items() if c > 1]
    unknown = [it for it in counts if it not in set(result["acked"]) | set(result["unacked"])]
    if lost:
        problems.append(f"{len(lost)} acknowledged updates lost (e.g. {lost[:3]})")
    if doubled:
        problems.append(f"{len(doubled)} items stored more than once (e.g. {doubled[:3]})")
    if unknown:
        problems.append(f"{len(unknown)} items stored that nobody sent (e.g. {unknown[:3]})")
    return problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seconds", type=float, default=10.0, help="Time per level.")
    ap.add_argument("--levels", default="1,8,32", help="Concurrent clients per level (comma-separated).")
    args = ap.parse_args()
    levels = [int(x) for x in args.levels.split(",") if x.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        export = build_export(Path(tmp))
        ref = reference(export)
        state = Path(tmp) / "state"
        port = free_port()
        load_before = os.getloadavg()
        log = Path(tmp) / "server.log"
        cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        server = start_server(export, state, port, log)
        results: dict[int, dict[str, Any]] = {}
        try:
            for n in levels:
                results[n] = asyncio.run(level(f"http://127.0.0.1:{port}/mcp", n, args.seconds, f"load-{n}"))
        finally:
            server.send_signal(signal.SIGINT)
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        load_after = os.getloadavg()
        cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the server and its sandbox workers
        server_cpu = (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime)
        server_log = log.read_text(errors="replace")
        problems = {n: check_stored(state, f"load-{n}", r) for n, r in results.items()}
    print(
        f"design server load: {args.seconds:g} s per level, 127.0.0.1, streamable HTTP; {os.cpu_count()} cores"
    )
    print(f"machine load (1/5/15 min): before {load_before}, after {load_after}")
    print(
        f"reference (in process, no HTTP/MCP): recall p50 {pct(ref, 0.5):.1f} ms, p95 {pct(ref, 0.95):.1f} ms"
    )
    print(f"{'clients':>7} {'req/s':>7} {'recall p50':>11} {'p95':>7} {'update p50':>11} {'p95':>7} {'errors':>6} "
          f"{'stored':>6} {'lost':>4} {'doubled':>7}")  # fmt: skip
    failed = False
    for n, r in results.items():
        calls = len(r["recall"]) + len(r["update"])
        lost = sum(1 for p in problems[n] if "lost" in p)
        doubled = sum(1 for p in problems[n] if "more than once" in p)
        print(
            f"{n:>7} {calls / r['elapsed'][0]:>7.1f} {pct(r['recall'], 0.5):>8.0f} ms {pct(r['recall'], 0.95):>4.0f} ms"
            f" {pct(r['update'], 0.5):>8.0f} ms {pct(r['update'], 0.95):>4.0f} ms {len(r['errors']):>6}"
            f" {len(r['acked']):>6} {lost:>4} {doubled:>7}"
        )
        for e in r["errors"][:3]:
            print(f"        error: {e}")
        for p in problems[n]:
            print(f"        FAIL: {p}")
        failed = failed or bool(problems[n])
    calls = sum(len(r["recall"]) + len(r["update"]) for r in results.values())
    print(
        f"server CPU (user + system, its sandbox workers included): {server_cpu:.1f} s for {calls} calls, "
        f"{1000 * server_cpu / max(calls, 1):.1f} ms a call (start-up and session set-ups included)"
    )
    errors = server_log.count("ERROR")
    print(
        f"server log: {len(server_log.splitlines())} lines, {errors} ERROR records (the SDK logs one per closed session)"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
