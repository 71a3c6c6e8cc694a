"""How far does the genome screening climb? The same screening (a first round by an operator, then
mutations of the candidates whose advice steered the probe furthest) on the same tasks and seeds, two
ways, in one run:

- ``--compare progress``: from random genomes, with and without credit for how far an unsolved probe
  task got (``atlas.alma.author.advice_probe.goal_progress``); the reference has none.
- ``--compare defaults``: from ``trajectory_retrieval``'s genome by mutation (a search's first
  generation), with a part a mutation adds starting at its catalog defaults
  (``operators.NEW_PART_DEFAULTS``) and with every parameter drawn (the reference).
- ``--compare explore``: the same first generation, with one child in ``step.EXPLORE_EVERY`` of each
  climbing round a random genome after a candidate solved a probe task, and with none (the reference:
  the climb alone once anything solved).
- ``--compare probe-first``: the same first generation, every candidate playing every probe task while
  none has scored (``step.PROBE_ALL_WHILE_FLAT``, the default), and the first two before the rest
  always (``step.PROBE_FIRST``, the reference).
- ``--compare workers``: the same first generation, a compiled genome's probe in shared sandbox workers
  (``step.SHARE_WORKERS``) and in a never-used worker per frozen recall (the reference); the same
  candidates and scores, so the ratio that matters is the time.

With ``--run``, the probe's memory comes from the run's no-memory collection games as the search's
screening learns it (``LOGGED_COLLECTIONS``), when the run logged them.

    python benchmarks/bench_screening.py                          # GraphWorld, 3 seeds of 300 candidates
    python benchmarks/bench_screening.py --compare defaults --budget 256
    python benchmarks/bench_screening.py --compare defaults --budget 256 --run RUN_DIR   # a run's own tasks
    python benchmarks/bench_screening.py --compare explore --budget 256 --run RUN_DIR --seeds 1,2,3,4
    python benchmarks/bench_screening.py --compare workers --budget 64 --seeds 1
    ATLAS_PLUGINS=tests.envs.depot_env PYTHONPATH=. python benchmarks/bench_screening.py --env depot

Prints, per seed and side, the candidates screened, how many solved at least one probe task, how many
probed above 0 (a bar no played design has raised), the best probe score and the time; then, per side, the seeds with a solving candidate and the mean best probe
score, the ratio of the two sides' means, and how many times faster the first side screened.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from atlas.alma.evaluate.harness import run_tasks
from atlas.alma.genome import operators, step
from atlas.alma.genome.baselines import baseline_genome
from atlas.alma.genome.operators import env_observation_keys
from atlas.alma.sandbox.pool import WorkerPool
from atlas.alma.search.agent_check import actions_by_task
from atlas.alma.state.config import AlmaConfig
from atlas.envs.registry import get_env
from atlas.infra.embeddings import make_embedder
from atlas.protocols.env import Environment

SIDES = {
    "progress": (
        ("progress credit", {"PROGRESS_SHARE": 0.8}),
        ("steps only (reference)", {"PROGRESS_SHARE": 0.0}),
    ),
    "defaults": (
        ("new parts at defaults", {"NEW_PART_DEFAULTS": operators.NEW_PART_DEFAULTS}),
        ("all drawn (reference)", {"NEW_PART_DEFAULTS": 0.0}),
    ),
    "explore": (
        ("random genomes kept", {"EXPLORE_EVERY": step.EXPLORE_EVERY}),
        ("climb only (reference)", {"EXPLORE_EVERY": 0}),
    ),
    "probe-first": (
        ("every probe task until one scored", {"PROBE_FIRST": 2, "PROBE_ALL_WHILE_FLAT": True}),
        ("two probe tasks first (reference)", {"PROBE_FIRST": 2, "PROBE_ALL_WHILE_FLAT": False}),
    ),
    "workers": (
        ("shared workers", {"SHARE_WORKERS": True}),
        ("a worker per recall (reference)", {"SHARE_WORKERS": False}),
    ),
}


def screening_tasks(
    env_name: str, run: Path | None
) -> tuple[Environment, list[Any], list[Any], dict[str, list[str]] | None]:
    """The environment, collection and probe tasks, and the no-memory collection games the run logged: a
    run's (its ``config.json``), else 3 + 8 of seed 42 and no logged games."""
    if run is None:
        env = get_env(env_name)
        tasks = env.generate_tasks(11, 42)
        return env, tasks[:3], tasks[3:], None
    cfg = AlmaConfig.load(run / "config.json")
    env = get_env(cfg.env, **cfg.env_kwargs())
    collection, deployment = run_tasks(cfg, env)
    return env, collection, deployment[: cfg.probe_tasks], no_memory_collection(run)


def no_memory_collection(run: Path) -> dict[str, list[str]] | None:
    """The no-memory baseline's collection actions per task, from the run's logs (None without them)."""
    archive = json.loads((run / "archive.json").read_text())
    base = next((e["id"] for e in archive.get("entries", []) if e.get("name") == "no_memory"), None)
    log = run / "logs" / str(base) / "episodes.jsonl"
    if base is None or not log.is_file():
        return None
    rows = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    return actions_by_task(r for r in rows if r.get("phase") == "collection") or None


async def screen_once(
    env_name: str, run: Path | None, budget: int, seed: int, compare: str, setting: dict[str, float]
) -> tuple[int, int, int, float, float]:
    env, collection, probe_tasks, logged = screening_tasks(env_name, run)
    keys = env_observation_keys(env)
    for name, value in setting.items():
        setattr(operators if name == "NEW_PART_DEFAULTS" else step, name, value)
    operator, parents = "random", []
    if compare in ("defaults", "explore", "probe-first", "workers"):
        operator, parents = "mutate", [(baseline_genome("trajectory_retrieval"), None, "")]
    pool = WorkerPool()
    started = time.perf_counter()
    try:
        screened, _ = await step.evolve_candidates(
            operator,
            parents,
            keys,
            random.Random(seed),
            budget=budget,
            seen=set(),
            env=env,
            collection=collection,
            probe_tasks=probe_tasks,
            embedder=make_embedder(None),
            pool=pool,
            name="bench",
            logged=logged,
        )
    finally:
        pool.close()
    solving = sum(1 for c in screened if c.solved)
    scoring = sum(1 for c in screened if c.probe_score > 0)  # above a bar of 0: would be played
    best = max((c.probe_score for c in screened), default=0.0)
    return len(screened), solving, scoring, best, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--env", default="graphworld")
    parser.add_argument("--budget", type=int, default=300, help="candidates per seed and side")
    parser.add_argument("--seeds", default="1,2,3")
    parser.add_argument("--compare", choices=sorted(SIDES), default="progress")
    parser.add_argument("--run", type=Path, help="screen on this run folder's tasks (its config.json)")
    args = parser.parse_args()
    sides = SIDES[args.compare]
    found = {side: 0 for side, _ in sides}
    bests: dict[str, list[float]] = {side: [] for side, _ in sides}
    times: dict[str, float] = {side: 0.0 for side, _ in sides}
    seeds = [int(s) for s in args.seeds.split(",")]
    print(f"{'seed':>4}  {'side':<40}{'screened':>9}{'solving':>9}{'scoring':>9}{'best':>7}{'time s':>8}")
    for seed in seeds:
        for side, setting in sides:
            n, solving, scoring, best, took = asyncio.run(
                screen_once(args.env, args.run, args.budget, seed, args.compare, setting)
            )
            found[side] += solving > 0
            bests[side].append(best)
            times[side] += took
            print(f"{seed:>4}  {side:<40}{n:>9}{solving:>9}{scoring:>9}{best:>7.3f}{took:>8.0f}")
    means = {side: sum(b) / len(b) for side, b in bests.items()}
    for side, _ in sides:
        print(
            f"{side}: seeds with a solving candidate {found[side]}/{len(seeds)}, mean best probe {means[side]:.3f}"
        )
    (new, _), (ref, _) = sides
    ratio = means[new] / means[ref] if means[ref] else float("inf")
    print(
        f"mean best probe, {new} / {ref}: {ratio:.2f}x (env {args.run or args.env}, {args.budget} candidates a seed)"
    )
    print(
        f"screening time, {ref} / {new}: {times[ref] / max(times[new], 1e-9):.2f}x faster "
        f"({times[new]:.0f} s against {times[ref]:.0f} s)"
    )


if __name__ == "__main__":
    main()
