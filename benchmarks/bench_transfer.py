"""Retrieval that transfers: do related tasks find their memories, and do unrelated ones get nothing?

    python benchmarks/bench_transfer.py                 # every path, MiniLM and the n-gram fallback
    python benchmarks/bench_transfer.py --no-llm        # skip guideline LLM selection (no model load)
    python benchmarks/bench_transfer.py --calibrate     # also print the floors for atlas/memory/relevance.py

Data (``benchmarks/data/transfer/*.json``): memories from five domains (GraphWorld, ALFWorld-style,
TextWorld, AppWorld-like API tasks in plain text, everyday agent tasks), each a task with its outcome,
subtask descriptions and tips, grouped by kind of task; queries are other tasks of the same kind
(different objects, names, places, wording). A query's related memories are the memories of its
kind; every other memory should not come back. ``unrelated.json`` holds queries from domains with no
memory at all (devops, maths, writing, finance, physical chores, data science): they should get nothing.

Retrieval paths, all over real Chroma with the given embedder:

- ``experience``   ChromaExperienceMemory.search (k=4); the memories are stored as trajectories with
                   their subtask descriptions (``metadata["subtasks"]``), so all three views are indexed.
- ``exp-no-subt``  the same without subtasks (views t and g only): what a caller that stores bare
                   trajectories gets (information; the floor is the experience floor).
- ``guide-cosine`` GuidelineBank.get_guidelines (k=5) over the memories' tips, indexed under their
                   subtask and task keys generalized as the pipeline does (``import_guidelines``).
- ``guide-llm``    the same bank in mode "llm" with the local model on a sample of queries
                   (``--llm-queries`` related and as many unrelated, spread over the domains;
                   skipped with ``--no-llm``; run on MiniLM's pool unless ``--llm-embedders``
                   says otherwise). Its candidate pool is floored like guide-cosine; tips at or
                   above the sure band (``guidelines_sure``: 0.05 above the best match of any
                   unrelated query) are kept without asking, the model picks among the rest.

Figures: ``recall`` = mean over related queries of |related ∩ returned| / min(|related|, k) (a tip
counts for the memory it came from); ``unrel-hit`` = share of unrelated queries that get anything;
``precision`` = share of returned items that are related (information only). Rows:

- ``default``  the shipped floors (``atlas.memory.relevance.FLOORS``), real retrieval;
- ``held-out`` leave-one-domain-out: for each domain the floor is calibrated on all the others and
               applied to it, so every query is answered with a floor that never saw its domain;
- ``calibrated`` (``--calibrate``) the floor chosen on all the data: the best recall among floors
               whose unrel-hit stays within its target (middle of ties), simulated by cutting the
               unfloored ranking.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from atlas.core.types import Guideline, Task, Trajectory
from atlas.infra.records import RecordStore
from atlas.infra.vector_index import ChromaVectorStore
from atlas.memory.experience import ChromaExperienceMemory
from atlas.memory.guidelines import GuidelineBank, GuidelineConfig, GuidelineStore
from atlas.memory.guidelines.store import collection_name
from atlas.memory.relevance import FLOORS, embedder_name

DATA = Path(__file__).resolve().parent / "data" / "transfer"
K_EXPERIENCE = 4
K_GUIDELINES = 5
TARGET_RECALL = 0.9
TARGET_UNRELATED = 0.05


@dataclass
class Memory:
    id: str
    domain: str
    kind: str
    task: str
    success: bool
    subtasks: list[str]
    tips: list[str]


@dataclass
class Query:
    text: str
    domain: str
    related: frozenset[str]


@dataclass
class Hits:
    """What one query got back: (memory id, relevance) per returned item, best first."""

    query: Query
    items: list[tuple[str, float]] = field(default_factory=list)


def load(data_dir: Path = DATA) -> tuple[list[Memory], list[Query]]:
    memories: list[Memory] = []
    queries: list[Query] = []
    for f in sorted(data_dir.glob("*.json")):
        d = json.loads(f.read_text(encoding="utf-8"))
        if "groups" in d:
            for group, texts in d["groups"].items():
                queries += [Query(t, f"{d['domain']}:{group}", frozenset()) for t in texts]
            continue
        for kind in d["kinds"]:
            ids = []
            for i, m in enumerate(kind["memories"]):
                mid = f"{d['domain']}/{kind['kind']}/{i}"
                ids.append(mid)
                memories.append(
                    Memory(mid, d["domain"], kind["kind"], m["task"], m["success"], m["subtasks"], m["tips"])
                )
            queries += [Query(q, d["domain"], frozenset(ids)) for q in kind["queries"]]
    return memories, queries


# --- metrics ----------------------------------------------------------------------------------------------


@dataclass
class Figures:
    recall: float
    unrelated_hit: float
    precision: float
    n_related: int
    n_unrelated: int


def figures(hits: list[Hits], k: int, floor: float | None = None) -> Figures:
    recalls, precisions, unrelated = [], [], []
    for h in hits:
        items = [(m, s) for m, s in h.items if floor is None or s >= floor]
        returned = list(dict.fromkeys(m for m, _ in items))
        if h.query.related:
            recalls.append(len(h.query.related & set(returned)) / min(len(h.query.related), k))
        else:
            unrelated.append(1.0 if returned else 0.0)
        if items:
            precisions.append(sum(m in h.query.related for m, _ in items) / len(items))
    mean = lambda xs: statistics.fmean(xs) if xs else float("nan")  # noqa: E731
    return Figures(mean(recalls), mean(unrelated), mean(precisions), len(recalls), len(unrelated))


def calibrate(hits: list[Hits], k: int) -> float:
    """The floor with the best recall among those keeping the unrelated-hit-rate within its target
    (the middle of the tied floors); when no floor keeps it, the one maximizing recall − unrel-hit."""
    grid = [i / 100 for i in range(-20, 101)]
    figs = [(figures(hits, k, f), f) for f in grid]
    within = [(fig.recall, f) for fig, f in figs if fig.unrelated_hit <= TARGET_UNRELATED]
    scored = within or [(fig.recall - fig.unrelated_hit, f) for fig, f in figs]
    best = max(j for j, _ in scored)
    winners = [f for j, f in scored if j >= best - 1e-9]
    return round(statistics.median(winners), 2)


def sure_band(hits: list[Hits], margin: float = 0.05) -> float:
    """The relevance above which the LLM selector keeps a tip without asking: ``margin`` above the
    best match any unrelated query reaches, rounded up to 0.01."""
    top = max((s for h in hits if not h.query.related for _, s in h.items), default=0.0)
    return math.ceil((top + margin) * 100) / 100


def held_out(hits: list[Hits], k: int) -> tuple[Figures, dict[str, float]]:
    """Leave-one-domain-out: every domain answered with a floor calibrated on the others."""
    domains = sorted({h.query.domain for h in hits})
    answered: list[Hits] = []
    floors = {}
    for d in domains:
        floor = calibrate([h for h in hits if h.query.domain != d], k)
        floors[d] = floor
        answered += [
            Hits(h.query, [(m, s) for m, s in h.items if s >= floor]) for h in hits if h.query.domain == d
        ]
    return figures(answered, k), floors


# --- retrieval paths -----------------------------------------------------------------------------------------


class ExperiencePath:
    name = "experience"
    k = K_EXPERIENCE

    def __init__(self, embedder, memories: list[Memory], floor: float | None, subtasks: bool = True) -> None:
        self.subtasks = subtasks
        if not subtasks:
            self.name = "exp-no-subt"
        self.mem = ChromaExperienceMemory(
            embedder,
            ChromaVectorStore.ephemeral(f"bench-exp-{time.monotonic_ns()}"),
            records=RecordStore(None),
            min_similarity=floor,
        )
        self.mem.store_many(
            [
                Trajectory(
                    id=m.id,
                    task=Task(description=m.task, domain=m.domain),
                    success=m.success,
                    metadata={"subtasks": m.subtasks} if self.subtasks else {},
                )
                for m in memories
            ]
        )

    def __call__(self, q: Query) -> Hits:
        found = self.mem.search(q.text, self.k)
        return Hits(q, [(e.trajectory_id or "", float(e.similarity or 0.0)) for e in found])


def guidelines_of(memories: list[Memory]) -> list[Guideline]:
    out = []
    for m in memories:
        for j, tip in enumerate(m.tips):
            out.append(
                Guideline(
                    category="strategy" if m.success else "recovery",
                    content=tip,
                    subtask=m.subtasks[j % len(m.subtasks)],
                    evidence="success" if m.success else "failure",
                    source_trajectory_ids=[m.id],
                    metadata={"task": m.task, "domain": m.domain, "memory": m.id},
                )
            )
    return out


class GuidelinePath:
    k = K_GUIDELINES

    def __init__(self, embedder, memories: list[Memory], floor: float | None, llm=None) -> None:
        ns = f"b{time.monotonic_ns()}"
        store = GuidelineStore(ns, RecordStore(None), ChromaVectorStore.ephemeral(collection_name(ns)))
        self.mode = "llm" if llm is not None else "cosine"
        self.name = "guide-llm" if llm is not None else "guide-cosine"
        self.bank = GuidelineBank(
            store=store, embedder=embedder, llm=llm, config=GuidelineConfig(threshold=floor)
        )
        self.bank.import_guidelines(guidelines_of(memories))

    def __call__(self, q: Query) -> Hits:
        found = self.bank.get_guidelines(q.text, k=self.k, mode=self.mode)
        return Hits(
            q, [(g.metadata["memory"], float(g.metadata.get("relevance", g.similarity or 0))) for g in found]
        )


def run(path: Callable[[Query], Hits], queries: list[Query]) -> list[Hits]:
    return [path(q) for q in queries]


def sample(queries: list[Query], n: int) -> list[Query]:
    """``n`` related and ``n`` unrelated queries, spread over the domains (deterministic)."""
    picked: list[Query] = []
    for want_related in (True, False):
        groups: dict[str, list[Query]] = {}
        for q in queries:
            if bool(q.related) == want_related:
                groups.setdefault(q.domain, []).append(q)
        chosen: list[Query] = []
        i = 0
        while len(chosen) < n and any(i < len(v) for v in groups.values()):
            for v in groups.values():
                if i < len(v) and len(chosen) < n:
                    chosen.append(v[(i * 7) % len(v)])
            i += 1
        picked += chosen
    return picked


# --- report ------------------------------------------------------------------------------------------------


def row(label: str, path: str, emb: str, floor: str, fig: Figures) -> str:
    ok = "ok" if fig.recall >= TARGET_RECALL and fig.unrelated_hit <= TARGET_UNRELATED else "BELOW"
    return (
        f"{path:<13} {emb:<7} {label:<10} {floor:>6} {fig.recall:>7.3f} {fig.unrelated_hit:>10.3f} "
        f"{fig.precision:>9.3f} {fig.n_related:>5}/{fig.n_unrelated:<4} {ok}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--no-llm", action="store_true", help="skip guideline LLM selection (no model load)")
    ap.add_argument("--llm-model", default="local:qwen2.5-coder-0.5b")
    ap.add_argument(
        "--llm-queries", type=int, default=10, help="related and unrelated queries each for the LLM path"
    )
    ap.add_argument("--embedders", default="minilm,ngram")
    ap.add_argument(
        "--llm-embedders", default="minilm", help="embedders whose candidate pools the LLM path is run on"
    )
    ap.add_argument("--paths", default="experience,guidelines,llm", help="which paths to measure")
    ap.add_argument("--calibrate", action="store_true", help="print the floors calibrated on all the data")
    ap.add_argument("--data", type=Path, default=DATA)
    args = ap.parse_args()

    from atlas.infra.embeddings import NGramEmbedder, default_embedder

    memories, queries = load(args.data)
    domains = sorted({q.domain.split(":")[0] for q in queries})
    n_rel = sum(1 for q in queries if q.related)
    print(
        f"{len(memories)} memories, {n_rel} related + {len(queries) - n_rel} unrelated queries "
        f"({', '.join(domains)}); targets: recall >= {TARGET_RECALL}, unrel-hit <= {TARGET_UNRELATED}\n"
    )
    header = f"{'path':<13} {'embed':<7} {'row':<10} {'floor':>6} {'recall':>7} {'unrel-hit':>10} {'precision':>9} {'rel/unrel':>10}"
    lines = [header, "-" * len(header)]
    calibrated: dict[str, dict[str, float]] = {}
    llm = None
    paths = set(args.paths.split(","))
    if not args.no_llm and "llm" in paths:
        from atlas.infra.llm import make_llm

        llm = make_llm(args.llm_model)
    for emb_name in args.embedders.split(","):
        embedder = default_embedder() if emb_name == "minilm" else NGramEmbedder()
        emb = embedder_name(embedder)
        for key, make in (
            ("experience", lambda fl, e=embedder: ExperiencePath(e, memories, fl)),
            ("guidelines", lambda fl, e=embedder: GuidelinePath(e, memories, fl)),
            ("experience-nosub", lambda fl, e=embedder: ExperiencePath(e, memories, fl, subtasks=False)),
        ):
            if key.split("-")[0] not in paths:
                continue
            unfloored = make(-1.0)
            raw = run(unfloored, queries)
            fig_ho, _ = held_out(raw, unfloored.k)
            default_path = make(None)
            fig_def = figures(run(default_path, queries), default_path.k)
            floor_def = FLOORS.get(emb, {}).get(key.split("-")[0], float("nan"))
            lines.append(row("default", default_path.name, emb, f"{floor_def:.2f}", fig_def))
            lines.append(row("held-out", default_path.name, emb, "lodo", fig_ho))
            if args.calibrate:
                floor = calibrate(raw, unfloored.k)
                if key in ("experience", "guidelines"):
                    calibrated.setdefault(emb, {})[key] = floor
                if key == "guidelines":
                    calibrated[emb]["guidelines_sure"] = sure_band(raw)
                lines.append(
                    row(
                        "calibrated", default_path.name, emb, f"{floor:.2f}", figures(raw, unfloored.k, floor)
                    )
                )
            print(lines[-1] if not args.calibrate else "\n".join(lines[-3:]), flush=True)
        if llm is not None and emb_name in args.llm_embedders.split(","):
            path = GuidelinePath(embedder, memories, None, llm=llm)
            picked = sample(queries, args.llm_queries)
            t0 = time.perf_counter()
            fig = figures(run(path, picked), path.k)
            lines.append(
                row(
                    "default",
                    path.name,
                    emb,
                    f"{FLOORS.get(emb, {}).get('guidelines', float('nan')):.2f}",
                    fig,
                )
            )
            print(lines[-1], f"({time.perf_counter() - t0:.0f} s, {args.llm_model})", flush=True)
    print()
    print("\n".join(lines))
    if llm is None:
        print("\nguide-llm: skipped (--no-llm or --paths); LLM selection with the local model not measured")
    if args.calibrate:
        print("\nFLOORS =", json.dumps(calibrated, indent=4))


if __name__ == "__main__":
    main()
