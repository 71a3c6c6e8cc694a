"""Guideline bank figures.

1. ``get_guidelines`` p50 latency in cosine mode with 1k and 10k stored tips (in-memory exact index
   and Chroma), against the reference: the time to embed the query alone (same embedder, uncached).
2. LLM calls and tokens per saved trajectory, subtask segmentation vs task-level extraction
   (ScriptedLLM with ``auto_responder``; tokens ≈ characters / 4).

    python benchmarks/bench_guidelines.py            # 1k + 10k, both backends
    python benchmarks/bench_guidelines.py --quick    # 1k, in-memory only
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the guideline test double

from atlas.core.types import Guideline, Step, Task, Trajectory
from atlas.infra.embeddings import OnnxEmbedder
from atlas.infra.llm import ScriptedLLM
from atlas.infra.records import RecordStore
from atlas.infra.vector_index import ChromaVectorStore, InMemoryVectorStore
from atlas.memory.guidelines import GuidelineBank, GuidelineConfig, GuidelineStore
from atlas.memory.guidelines.store import Commit, collection_name
from guideline_doubles import auto_responder

VERBS = [
    "Retrieve",
    "Update",
    "Verify",
    "Navigate to",
    "Search for",
    "Delete",
    "Create",
    "Compare",
    "Pick up",
    "Send",
    "Schedule",
    "Clean",
    "Heat",
    "Open",
    "Sort",
    "Summarize",
    "Book",
    "Cancel",
    "Export",
    "Import",
]
OBJECTS = [
    "the account credentials",
    "a shopping cart item",
    "the target room",
    "an unread message",
    "the payment method",
    "a calendar event",
    "the kitchen counter",
    "a file in the workspace",
    "the delivery address",
    "a support ticket",
    "the coffee mug",
    "the playlist",
    "an invoice",
    "the user profile",
    "a library book",
    "the flight booking",
    "a spreadsheet row",
    "the fridge",
    "a code repository",
    "the contact list",
    "a product review",
    "the shipping label",
    "a pull request",
    "the thermostat",
    "a bank transfer",
]
CONTEXTS = [
    "before checkout",
    "after logging in",
    "when the first attempt fails",
    "in a new session",
    "for a returning user",
    "with limited permissions",
    "during a multi-step task",
    "at the end of the task",
    "when two apps are involved",
    "under a step limit",
    "in an unfamiliar layout",
    "after an error",
    "with incomplete information",
    "for a batch of items",
    "while time is short",
    "in the morning",
    "for the first time",
    "as a follow-up",
    "to finish a workflow",
    "without a search tool",
]


def synthetic_tips(n: int) -> list[tuple[Guideline, str, str]]:
    out = []
    combos = itertools.product(VERBS, OBJECTS, CONTEXTS)
    for i, (v, o, c) in enumerate(combos):
        if i >= n:
            break
        sub = f"{v} {o} {c}"
        task = f"{v} {o}"
        g = Guideline(
            category=("strategy", "recovery", "optimization")[i % 3],
            content=f"When you {v.lower()} {o} {c}, check the current state first",
            trigger=c,
            subtask=sub,
            source_trajectory_ids=[f"t{i}"],
            metadata={"task": task},
        )
        out.append((g, sub, task))
    return out


async def fill(bank: GuidelineBank, n: int) -> float:
    t0 = time.perf_counter()
    rows = synthetic_tips(n)
    batch = 500
    for start in range(0, len(rows), batch):
        chunk = rows[start : start + batch]
        vecs = bank.embedder.embed([s for _, s, _ in chunk] + [t for _, _, t in chunk])
        m = len(chunk)
        upserts = [
            (g, {"s": vecs[i].tolist(), "t": vecs[m + i].tolist()}, {"s": s, "t": t})
            for i, (g, s, t) in enumerate(chunk)
        ]
        await bank.store.apply(Commit(upserts=upserts))
    return time.perf_counter() - t0


def queries(n: int, offset: int) -> list[str]:
    return [
        f"{VERBS[(i * 7 + offset) % len(VERBS)].lower()} {OBJECTS[(i * 3 + offset) % len(OBJECTS)]} "
        f"for task number {offset * 1000 + i} {CONTEXTS[(i + offset) % len(CONTEXTS)]}"
        for i in range(n)
    ]


def p50(xs: list[float]) -> float:
    return statistics.median(xs) * 1000


async def latency(bank: GuidelineBank, embedder: OnnxEmbedder, n_queries: int) -> tuple[float, float, int]:
    qs = queries(n_queries, 1)
    refs = queries(n_queries, 2)
    await bank.aget_guidelines(qs[0])  # warm up
    embedder.embed([refs[0]])
    t_get, t_emb, hits = [], [], 0
    for q, r in zip(qs[1:], refs[1:], strict=True):
        t0 = time.perf_counter()
        found = await bank.aget_guidelines(q, k=5, mode="cosine")
        t_get.append(time.perf_counter() - t0)
        hits += bool(found)
        t0 = time.perf_counter()
        embedder.embed([r])
        t_emb.append(time.perf_counter() - t0)
    return p50(t_get), p50(t_emb), hits


def make_traj(kind: str, i: int) -> Trajectory:
    task = Task(description=f"{VERBS[i % len(VERBS)]} {OBJECTS[i % len(OBJECTS)]} (case {i})")
    ok = Step(action=f"tool_{i % 3}(x={i})", observation="ok", thought="I will try this next")
    bad = Step(action=f"tool_9(x={i})", observation="", error="Error: invalid argument")
    steps = {
        "clean": [ok] * 3 + [Step(action="finish()", observation="done")],
        "recovery": [ok, bad, ok, ok, Step(action="finish()", observation="done")],
        "failure": [ok, bad, bad, bad],
        "inefficient": [ok] * 6 + [Step(action="finish()", observation="done")],
    }[kind]
    return Trajectory(task=task, steps=steps, success=kind != "failure")


async def llm_cost(embedder: OnnxEmbedder, granularity: str, n_each: int) -> tuple[float, float, int]:
    llm = ScriptedLLM(auto_responder(segments=3, tips=3))
    bank = GuidelineBank(llm=llm, embedder=embedder, config=GuidelineConfig(granularity=granularity))
    n = 0
    for i in range(n_each):
        for kind in ("clean", "recovery", "failure", "inefficient"):
            r = await bank.asave(make_traj(kind, i * 4 + n % 4))
            assert r.status == "processed", r.reason
            n += 1
    return llm.usage.calls / n, llm.usage.total_tokens / n, len(bank.list_guidelines())


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="1k tips, in-memory only, fewer queries")
    ap.add_argument("--queries", type=int, default=101)
    args = ap.parse_args()
    sizes = [1000] if args.quick else [1000, 10000]
    backends = ["memory"] if args.quick else ["memory", "chroma"]
    n_queries = 31 if args.quick else args.queries
    embedder = OnnxEmbedder()  # uncached, so every query is really embedded
    print(
        f"embedder: {embedder.name} dim={embedder.dim}; queries per point: {n_queries - 1}; "
        f"threshold {GuidelineConfig().threshold}, k=5"
    )
    print(
        f"{'backend':<8} {'tips':>6} {'fill_s':>7} {'get p50 ms':>11} {'embed p50 ms':>13} {'ratio':>6} {'hit%':>5}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for backend in backends:
            for n in sizes:
                ns = f"bench{n}"
                vectors = (
                    InMemoryVectorStore(collection_name(ns))
                    if backend == "memory"
                    else ChromaVectorStore.persistent(Path(tmp) / f"c{n}", collection_name(ns))
                )
                bank = GuidelineBank(store=GuidelineStore(ns, RecordStore(None), vectors), embedder=embedder)
                fill_s = await fill(bank, n)
                g, e, hits = await latency(bank, embedder, n_queries)
                print(
                    f"{backend:<8} {n:>6} {fill_s:>7.1f} {g:>11.2f} {e:>13.2f} {g / e:>6.2f} "
                    f"{100 * hits / (n_queries - 1):>5.0f}"
                )
    n_each = 2 if args.quick else 5
    print(
        f"\nLLM cost per saved trajectory ({4 * n_each} trajectories: clean/recovery/failure/inefficient; "
        "auto_responder: 3 segments, 3 tips per call):"
    )
    rows = {}
    for gran in ("subtask", "task"):
        calls, tokens, kept = await llm_cost(embedder, gran, n_each)
        rows[gran] = (calls, tokens)
        print(f"  {gran:<8} calls/traj {calls:5.2f}   tokens/traj {tokens:7.0f}   guidelines kept {kept}")
    s, t = rows["subtask"], rows["task"]
    print(f"  ratio subtask/task: calls {s[0] / t[0]:.2f}x, tokens {s[1] / t[1]:.2f}x")


if __name__ == "__main__":
    asyncio.run(main())
