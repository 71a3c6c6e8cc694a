"""How far does the genome screening climb? The same screening (a first round by an operator, then
mutations of the candidates whose advice steered the probe furthest) on the same tasks and seeds, two
ways, in one run:

- ``--compare progress``: from random genomes, with and without credit for how far an unsolved probe
  task got (``atlas.alma.author.advice_probe.goal_progress``); the reference has none.
- ``--compare defaults``: from ``trajectory_retrieval``'s genome by mutation (a search's first
  generation), with a part a mutation adds starting at its catalog defaults
  (``operators.NEW_PART_DEFAULTS``) and with every parameter drawn (the reference).

    python benchmarks/bench_screening.py                          # GraphWorld, 3 seeds of 300 candidates
    python benchmarks/bench_screening.py --compare defaults --budget 256
    python benchmarks/bench_screening.py --compare defaults --budget 256 --run RUN_DIR   # a run's own tasks
    ATLAS_PLUGINS=tests.envs.depot_env PYTHONPATH=. python benchmarks/bench_screening.py --env depot

Prints, per seed and side, the candidates screened, how many solved at least one probe task, and the best
probe score; then, per side, the seeds with a solving candidate and the mean best probe score, and the
ratio of the two sides' means.
"""

from __future__ import annotations

import argparse
import asyncio
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
}


def screening_tasks(env_name: str, run: Path | None) -> tuple[Environment, list[Any], list[Any]]:
    """The environment, collection and probe tasks: a run's (its ``config.json``), else 3 + 8 of seed 42."""
    if run is None:
        env = get_env(env_name)
        tasks = env.generate_tasks(11, 42)
        return env, tasks[:3], tasks[3:]
    cfg = AlmaConfig.load(run / "config.json")
    env = get_env(cfg.env, **cfg.env_kwargs())
    collection, deployment = run_tasks(cfg, env)
    return env, collection, deployment[: cfg.probe_tasks]


async def screen_once(
    env_name: str, run: Path | None, budget: int, seed: int, compare: str, setting: dict[str, float]
) -> tuple[int, int, float, float]:
    env, collection, probe_tasks = screening_tasks(env_name, run)
    keys = env_observation_keys(env)
    for name, value in setting.items():
        setattr(operators if name == "NEW_PART_DEFAULTS" else step, name, value)
    operator, parents = "random", []
    if compare == "defaults":
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
        )
    finally:
        pool.close()
    solving = sum(1 for c in screened if c.solved)
    best = max((c.probe_score for c in screened), default=0.0)
    return len(screened), solving, best, time.perf_counter() - started


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
    seeds = [int(s) for s in args.seeds.split(",")]
    print(f"{'seed':>4}  {'side':<24}{'screened':>9}{'solving':>9}{'best':>7}{'time s':>8}")
    for seed in seeds:
        for side, setting in sides:
            n, solving, best, took = asyncio.run(
                screen_once(args.env, args.run, args.budget, seed, args.compare, setting)
            )
            found[side] += solving > 0
            bests[side].append(best)
            print(f"{seed:>4}  {side:<24}{n:>9}{solving:>9}{best:>7.3f}{took:>8.0f}")
    means = {side: sum(b) / len(b) for side, b in bests.items()}
    for side, _ in sides:
        print(
            f"{side}: seeds with a solving candidate {found[side]}/{len(seeds)}, mean best probe {means[side]:.3f}"
        )
    (new, _), (ref, _) = sides
    ratio = means[new] / means[ref] if means[ref] else float("inf")
    print(f"mean best probe, {new} / {ref}: {ratio:.2f}x (env {args.env}, {args.budget} candidates a seed)")


if __name__ == "__main__":
    main()
