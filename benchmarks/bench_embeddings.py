"""Embedding throughput of the default embedder and the speed-up of its caches.

    python benchmarks/bench_embeddings.py [--quick] [--n N]

Prints sentences/s of the ONNX MiniLM embedder (batch 64, 20-word sentences) next to the reference
figure measured on these machines (docs: OFFLINE.md, 229 sentences/s), and how much faster a cache
hit is than computing (in-memory LRU and on-disk SQLite cache). Figures, not asserts.
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
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from atlas.infra.embeddings import CachedEmbedder, NGramEmbedder, OnnxEmbedder

REFERENCE_SENTENCES_PER_S = 229.0  # OFFLINE.md: int8 ONNX MiniLM, batch 64, 20-word sentences, 2 cores

WORDS = [
    "the",
    "a",
    "agent",
    "room",
    "key",
    "door",
    "kitchen",
    "torch",
    "apple",
    "table",
    "pick",
    "put",
    "move",
    "go",
    "open",
    "close",
    "find",
    "where",
    "is",
    "red",
    "blue",
    "small",
    "large",
    "under",
    "over",
    "near",
    "next",
    "to",
    "inside",
    "drawer",
    "shelf",
    "cabinet",
    "fridge",
    "sink",
    "counter",
    "plate",
    "mug",
    "knife",
    "potion",
    "garden",
    "hall",
    "stairs",
    "corridor",
    "north",
    "south",
    "east",
    "west",
    "quickly",
    "carefully",
    "then",
    "after",
]


def sentences(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(20)) for _ in range(n)]


def timed(fn, *args) -> float:
    t0 = time.perf_counter()
    fn(*args)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (a few seconds)")
    ap.add_argument("--n", type=int, default=None, help="sentences per timed run (default 1024, quick 192)")
    ap.add_argument("--repeats", type=int, default=None, help="timed runs (median reported)")
    args = ap.parse_args()
    n = args.n or (192 if args.quick else 1024)
    repeats = args.repeats or (2 if args.quick else 3)

    t0 = time.perf_counter()
    onnx = OnnxEmbedder(batch_size=64)
    load_s = time.perf_counter() - t0
    onnx.embed(sentences(64, seed=99))  # warm-up

    rates = [n / timed(onnx.embed, sentences(n, seed=r)) for r in range(repeats)]
    rate = statistics.median(rates)
    print(
        f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start "
        "(other processes share the cores; throughput drops under load)"
    )
    print(
        f"embedder: {onnx.name} int8 ONNX, dim {onnx.dim}, batch 64, intra-op threads {onnx.threads}, "
        f"load {load_s:.2f} s"
    )
    print(
        f"throughput: {rate:.0f} sentences/s (20-word sentences, n={n}, median of {repeats}); "
        f"reference {REFERENCE_SENTENCES_PER_S:.0f} sentences/s; ratio {rate / REFERENCE_SENTENCES_PER_S:.2f}x"
    )

    texts = sentences(n, seed=1234)
    with tempfile.TemporaryDirectory() as tmp:
        cached = CachedEmbedder(onnx, max_items=n * 2, cache_dir=tmp)
        miss_s = timed(cached.embed, texts)
        hit_s = min(timed(cached.embed, texts) for _ in range(3))
        disk = CachedEmbedder(onnx, max_items=n * 2, cache_dir=tmp)  # fresh LRU, same disk cache
        disk_s = timed(disk.embed, texts)
        cached.close()
        disk.close()
    print(
        f"cache: miss {miss_s * 1e3:.0f} ms, in-memory hit {hit_s * 1e3:.1f} ms "
        f"-> speed-up {miss_s / hit_s:.0f}x; on-disk hit {disk_s * 1e3:.1f} ms -> speed-up {miss_s / disk_s:.0f}x "
        f"(n={n}; reference = computing the same texts)"
    )

    ng = NGramEmbedder()
    ng_rate = n / timed(ng.embed, texts)
    print(f"n-gram fallback: {ng_rate:.0f} sentences/s; ratio to ONNX {ng_rate / rate:.1f}x")


if __name__ == "__main__":
    main()
