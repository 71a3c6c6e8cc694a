"""Does the probe's partial credit give the genome screening a gradient? The same screening (random
genomes, then mutations of the candidates whose advice steered the probe furthest) with and without
credit for how far an unsolved probe task got (``atlas.alma.author.advice_probe.goal_progress``), on the
same tasks and seeds, in one run.

    python benchmarks/bench_screening.py                          # GraphWorld, 3 seeds of 300 candidates
    ATLAS_PLUGINS=tests.envs.depot_env PYTHONPATH=. python benchmarks/bench_screening.py --env depot

Prints, per seed and side, the candidates screened, how many solved at least one probe task, and the best
probe score; then the seeds in which each side found a solving candidate (the reference is the side
without progress credit, where only the share of steps the advice named counts).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from atlas.alma.genome import step
from atlas.alma.genome.operators import env_observation_keys
from atlas.alma.sandbox.pool import WorkerPool
from atlas.envs.registry import get_env
from atlas.infra.embeddings import make_embedder


async def screen_once(env_name: str, budget: int, seed: int, progress: bool) -> tuple[int, int, float, float]:
    env = get_env(env_name)
    tasks = env.generate_tasks(11, 42)
    keys = env_observation_keys(env)
    step.PROGRESS_SHARE = 0.8 if progress else 0.0
    pool = WorkerPool()
    started = time.perf_counter()
    try:
        screened, _ = await step.evolve_candidates(
            "random",
            [],
            keys,
            random.Random(seed),
            budget=budget,
            seen=set(),
            env=env,
            collection=tasks[:3],
            probe_tasks=tasks[3:],
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
    args = parser.parse_args()
    found = {True: 0, False: 0}
    seeds = [int(s) for s in args.seeds.split(",")]
    print(f"{'seed':>4}  {'side':<22}{'screened':>9}{'solving':>9}{'best':>7}{'time s':>8}")
    for seed in seeds:
        for progress in (True, False):
            n, solving, best, took = asyncio.run(screen_once(args.env, args.budget, seed, progress))
            found[progress] += solving > 0
            side = "progress credit" if progress else "steps only (reference)"
            print(f"{seed:>4}  {side:<22}{n:>9}{solving:>9}{best:>7.3f}{took:>8.0f}")
    print(
        f"seeds with a solving candidate: progress credit {found[True]}/{len(seeds)}, "
        f"reference {found[False]}/{len(seeds)} (env {args.env}, {args.budget} candidates a seed)"
    )


if __name__ == "__main__":
    main()
