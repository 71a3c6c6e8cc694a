"""Experience-memory throughput and search latency with the default (MiniLM ONNX) embedder.

    python benchmarks/bench_memory.py            # 10k experiences
    python benchmarks/bench_memory.py --quick    # 1k experiences

Measures, on a persistent directory (SQLite records + Chroma vectors, as ``build_memory_system`` wires
them):
- batched stores/s (``store_many``, 64 per batch) while filling to N experiences;
- single ``store()`` calls/s at N;
- p50/p95 ``search(task, k=4)`` latency at N (query embedding + two filtered Chroma queries + SQLite).
Reference in the same run: the raw embedder (no cache) per item, batched and single, so the figures
read as a ratio over the unavoidable embedding cost.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from atlas.core.types import Step, Task, Trajectory
from atlas.infra.embeddings import default_embedder
from atlas.memory import build_memory_system

VERBS = ["bring", "carry", "move", "deliver", "take", "put", "find", "fetch", "place", "return"]
OBJECTS = [
    "key",
    "book",
    "lamp",
    "gem",
    "scroll",
    "compass",
    "flask",
    "map",
    "coin",
    "ring",
    "torch",
    "cup",
    "apple",
    "knife",
    "plate",
    "vase",
    "candle",
    "mirror",
    "bell",
    "rope",
]
PLACES = ["kitchen", "hallway", "attic", "cellar", "garden", "library", "study", "bedroom", "garage", "porch"]
ADJ = ["red", "old", "small", "heavy", "shiny", "broken", "wooden", "golden", "dusty", "blue"]


def make_task(i: int, rng: random.Random) -> str:
    return (
        f"{rng.choice(VERBS)} the {rng.choice(ADJ)} {rng.choice(OBJECTS)} from the {rng.choice(PLACES)} "
        f"to the {rng.choice(PLACES)} (room {i % 97}, shelf {i})"
    )


def make_traj(i: int, rng: random.Random) -> Trajectory:
    return Trajectory(
        task=Task(description=make_task(i, rng), domain="bench"),
        steps=[Step(action=f'move_to(room="room_{c}")', observation="ok") for c in "ABCD"[: 1 + i % 4]],
        success=rng.random() < 0.6,
        score=0.7,
    )


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="1k experiences instead of 10k")
    ap.add_argument("--n", type=int, default=None, help="number of experiences (default 10000, --quick 1000)")
    ap.add_argument("--queries", type=int, default=200, help="search queries to time")
    ap.add_argument("--singles", type=int, default=200, help="single store() calls to time at N")
    args = ap.parse_args()
    n = args.n or (1000 if args.quick else 10000)
    rng = random.Random(7)

    embedder = default_embedder()
    raw = embedder.inner
    ref_texts = [make_task(10**7 + i, rng) for i in range(256)]
    raw.embed(ref_texts[:8])  # warm up
    t0 = time.perf_counter()
    raw.embed(ref_texts)
    raw_batched = (time.perf_counter() - t0) / len(ref_texts)
    singles = []
    for text in ref_texts[:64]:
        t0 = time.perf_counter()
        raw.embed([text])
        singles.append(time.perf_counter() - t0)
    raw_single = statistics.median(singles)

    with tempfile.TemporaryDirectory() as tmp:
        memory = build_memory_system(Path(tmp) / "mem", embedder=embedder, components=("experience",))
        exp = memory.experience_memory
        trajs = [make_traj(i, rng) for i in range(n)]
        t0 = time.perf_counter()
        for start in range(0, n, 64):
            exp.store_many(trajs[start : start + 64])
        fill = time.perf_counter() - t0
        assert exp.count() == n

        extra = [make_traj(n + i, rng) for i in range(args.singles)]
        t0 = time.perf_counter()
        for t in extra:
            exp.store(t)
        single_rate = len(extra) / (time.perf_counter() - t0)

        queries = [make_task(2 * 10**7 + i, rng) for i in range(args.queries)]
        exp.search(queries[0])  # warm up
        lat = []
        for q in queries:
            t0 = time.perf_counter()
            found = exp.search(Task(description=q), k=4)
            lat.append(time.perf_counter() - t0)
            assert len(found) == 4
        total = exp.count()
        memory.close()

    p50, p95 = pct(lat, 0.5), pct(lat, 0.95)
    print(f"experience memory, default embedder ({embedder.name}, dim {embedder.dim}), N = {total}")
    print(
        f"  reference: raw embed batched     {raw_batched * 1e3:7.2f} ms/item  ({1 / raw_batched:7.1f} items/s)"
    )
    print(f"  reference: raw embed single      {raw_single * 1e3:7.2f} ms/item")
    print(
        f"  store_many (batches of 64)      {n / fill:7.1f} stores/s   ratio to raw batched embed rate "
        f"{(n / fill) * raw_batched:.2f}"
    )
    print(
        f"  store() single at N             {single_rate:7.1f} stores/s   ({1e3 / single_rate:.2f} ms; "
        f"{(1 / single_rate) / raw_single:.2f}x raw single embed)"
    )
    print(
        f"  search(k=4) at N                p50 {p50 * 1e3:6.2f} ms   p95 {p95 * 1e3:6.2f} ms   "
        f"(p50 = {p50 / raw_single:.2f}x raw single embed)"
    )


if __name__ == "__main__":
    main()
