"""How the genome search's screening scores given genomes on a run's own tasks (no LLM).

    python scripts/probe_genomes.py RUN_DIR GENOME.json [GENOME.json ...]
    python scripts/probe_genomes.py RUN_DIR G.json=d-0004     # also with d-0004's own collection games
    python scripts/probe_genomes.py RUN_DIR G.json --collections goal_words:1,advised:0   # other collections

Rebuilds the run's environment and tasks from its ``config.json`` and plays each genome's advice probe
exactly as a generation screens a candidate (``atlas.alma.genome.step.probe``: memory from the run's
collection games as its no-memory baseline logged them — or played by the probe's walks, with
``--collections`` or when the run has no such log — then its first ``probe_tasks`` deployment tasks).
``G.json=DESIGN_ID`` (a design of the run played with that genome) adds the probe with memory from
that design's own logged collection games alone, as the search's agent check measures a candidate
(``AlmaConfig.agent_checks``). Prints the probe score, the steered score and how
many probe tasks were solved, so designs' ranking by the screening can be set beside what the task
agent did with them (``atlas eval``, the run's archive).
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from atlas.alma.evaluate.harness import run_tasks
from atlas.alma.genome import genome_design, parse_genome, step
from atlas.alma.genome.step import probe
from atlas.alma.sandbox.pool import WorkerPool
from atlas.alma.search.agent_check import actions_by_task
from atlas.alma.state.config import AlmaConfig
from atlas.alma.state.run_dir import read_jsonl
from atlas.envs.registry import get_env
from atlas.infra.embeddings import default_embedder


def logged_collection(run: Path, design_id: str) -> dict[str, list[str]] | None:
    """A design's actions per collection task, from the run's logs (None when it has none)."""
    log = run / "logs" / design_id / "episodes.jsonl"
    if not log.is_file():
        return None
    return actions_by_task(r for r in read_jsonl(log) if r.get("phase") == "collection") or None


def _name(path: Path) -> str:
    """A genome file's name, with its folder where the file name alone says nothing (``genome.json``)."""
    return f"{path.parent.name}/{path.name}" if path.name == "genome.json" else path.name


async def _main(run: Path, genomes: list[str], collections: str | None) -> None:
    if collections:
        step.PROBE_COLLECTIONS = step.LOGGED_COLLECTIONS = tuple(  # type: ignore[misc]
            (walk, *map(int, rest)) for walk, *rest in (c.split(":") for c in collections.split(","))
        )
    baseline = logged_collection(run, "d-0001")
    cfg = AlmaConfig.load(run / "config.json")
    env = get_env(cfg.env, **cfg.env_kwargs())
    collection, deployment = run_tasks(cfg, env)
    pool, embedder = WorkerPool(), default_embedder()
    try:
        print(f"{'genome':48s} {'memory from':>12s} {'probe':>6s} {'steered':>7s} {'solved':>9s}")
        for arg in genomes:
            path, _, design_id = arg.partition("=")
            own = logged_collection(run, design_id) if design_id else None
            if design_id and own is None:
                raise SystemExit(f"no logged collection games of {design_id!r} in {run}/logs")
            design = genome_design(parse_genome(Path(path).read_text()))
            sources = [("baseline" if baseline else "walks", baseline, None)]
            sources += [(design_id, own, step.OWN_GAMES)] if own else []  # its own games alone
            for label, logged, only in sources:
                r = await probe(
                    design,
                    env,
                    collection,
                    deployment[: cfg.probe_tasks],
                    embedder=embedder,
                    pool=pool,
                    logged=logged,
                    collections=only,
                )
                solved = f"{r['solved']}/{r['played']}"
                print(
                    f"{_name(Path(path)):48s} {label:>12s} {r['probe_score']:6.3f} {r['steered']:7.3f} {solved:>9s}",
                    end="",
                )
                print(f"  error: {r['error']}" if r["error"] else "")
    finally:
        pool.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="a run folder (its config.json names the tasks)")
    parser.add_argument(
        "genomes", nargs="+", help="genome JSON files, each optionally =DESIGN_ID (a design of the run)"
    )
    parser.add_argument(
        "--collections",
        help="the probe's collections as WALK:EXPLORER_EPISODES[:SEED],... (default: the screening's, the "
        "baseline's logged collection games, else step.PROBE_COLLECTIONS); walks: goal_words, random, "
        "goal_averse, advised",
    )
    args = parser.parse_args()
    asyncio.run(_main(args.run, args.genomes, args.collections))


if __name__ == "__main__":
    main()
