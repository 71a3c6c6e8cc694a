"""How the genome search's screening scores given genomes on a run's own tasks (no LLM).

    python scripts/probe_genomes.py RUN_DIR GENOME.json [GENOME.json ...]
    python scripts/probe_genomes.py RUN_DIR G.json --collections goal_words:1,advised:0   # other collections

Rebuilds the run's environment and tasks from its ``config.json`` and plays each genome's advice probe
exactly as a generation screens a candidate (``atlas.alma.genome.step.probe``: memory from the run's
collection tasks played by the probe's collections, then its first ``probe_tasks`` deployment tasks).
Prints the probe score, the steered score and how many probe tasks were solved, so two designs' ranking
by the screening can be set beside what the task agent did with them (``atlas eval``).
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from atlas.alma.evaluate.harness import run_tasks
from atlas.alma.genome import genome_design, parse_genome, step
from atlas.alma.genome.step import probe
from atlas.alma.sandbox.pool import WorkerPool
from atlas.alma.state.config import AlmaConfig
from atlas.envs.registry import get_env
from atlas.infra.embeddings import default_embedder


async def _main(run: Path, genomes: list[Path], collections: str | None) -> None:
    if collections:
        step.PROBE_COLLECTIONS = tuple(  # type: ignore[assignment]
            (walk, *map(int, rest)) for walk, *rest in (c.split(":") for c in collections.split(","))
        )
    cfg = AlmaConfig.load(run / "config.json")
    env = get_env(cfg.env, **cfg.env_kwargs())
    collection, deployment = run_tasks(cfg, env)
    pool, embedder = WorkerPool(), default_embedder()
    try:
        print(f"{'genome':40s} {'probe':>6s} {'steered':>7s} {'solved':>9s}")
        for path in genomes:
            design = genome_design(parse_genome(path.read_text()))
            r = await probe(
                design, env, collection, deployment[: cfg.probe_tasks], embedder=embedder, pool=pool
            )
            solved = f"{r['solved']}/{r['played']}"
            print(f"{path.name:40s} {r['probe_score']:6.3f} {r['steered']:7.3f} {solved:>9s}", end="")
            print(f"  error: {r['error']}" if r["error"] else "")
    finally:
        pool.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="a run folder (its config.json names the tasks)")
    parser.add_argument("genomes", nargs="+", type=Path, help="genome JSON files")
    parser.add_argument(
        "--collections",
        help="the probe's collections as WALK:EXPLORER_EPISODES[:SEED],... (default: the screening's, "
        "step.PROBE_COLLECTIONS); walks: goal_words, random, goal_averse, advised",
    )
    args = parser.parse_args()
    asyncio.run(_main(args.run, args.genomes, args.collections))


if __name__ == "__main__":
    main()
