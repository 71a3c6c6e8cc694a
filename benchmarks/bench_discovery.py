"""How fast does each representation find memory whose advice steers the agent? Genome search vs code
search, with the same tasks and the same cheap first stage, in one run.

Both sides make candidate designs for GraphWorld (8 rooms by default) without any hand-written
environment design and put each through the search's own first stage, the advice probe: memory built
from the explorer's collection episodes, then deployment tasks played doing only what the advice names
(no LLM). No memory solves no probe task (its advice is empty), so a candidate "beats no memory on the
probe" when it solves at least one. The task-agent episodes that decide fitness come after this stage in
a search and are the same for both, so they are left out here.

- genome: random draws and mutations of the best screened so far (``atlas.alma.genome``), no model;
- code: the search's MetaAgent writing a design with the meta model (default the 1.5B local model).

    python benchmarks/bench_discovery.py                                  # 3 min of genomes vs 3 code samples
    python benchmarks/bench_discovery.py --genome-minutes 10 --code-samples 5 --meta-model openai/gpt-4.1

Prints candidates per hour, the time to the first candidate that beats no memory on the probe, and the best
probe score of each side, with the ratios genome / code.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from atlas.alma.author.meta_agent import MetaAgent
from atlas.alma.design import Design
from atlas.alma.evaluate.harness import make_tasks
from atlas.alma.genome.operators import env_observation_keys, random_genome
from atlas.alma.genome.step import evolve_candidates, probe
from atlas.alma.state.meta_model import META_N_CTX, STRONGER_LOCAL
from atlas.envs.registry import get_env
from atlas.infra.embeddings import make_embedder
from atlas.infra.llm import make_llm


class Tally:
    def __init__(self, name: str) -> None:
        self.name, self.t0 = name, time.perf_counter()
        self.count, self.first_win, self.best = 0, None, 0.0
        self.took = 0.0

    def add(self, probe_score: float, solved: int) -> None:
        self.count += 1
        self.best = max(self.best, probe_score)
        if solved > 0 and self.first_win is None:
            self.first_win = time.perf_counter() - self.t0

    @property
    def rate(self) -> float:
        """Candidates per hour over the phase (its time is taken when ``line`` is called)."""
        return 3600 * self.count / max(self.took, 1e-9)

    def line(self) -> str:
        took = self.took = time.perf_counter() - self.t0
        first = f"{self.first_win:.0f} s" if self.first_win is not None else "never"
        return (
            f"{self.name:<7} {self.count:>5} candidates in {took:6.0f} s = {3600 * self.count / took:8.0f}/hour; "
            f"first that beats no memory on the probe: {first}; best probe score {self.best:.3f}"
        )


async def main(args: argparse.Namespace) -> None:
    env = get_env("graphworld", rooms=args.rooms)
    embedder = make_embedder(None)
    collection, deployment = make_tasks(
        env,
        episodes=3,
        seed=args.seed,
        family=args.seed,
        deployment_seeds=[args.seed + 10_007 * k for k in (1, 2, 3)],
    )
    probe_tasks = deployment[: args.probe_tasks]
    print(
        f"GraphWorld {args.rooms} rooms; {len(collection)} collection tasks, {len(probe_tasks)} probe tasks"
    )

    genome = Tally("genome")
    keys, rng, seen = env_observation_keys(env, args.seed), random.Random(args.seed), set()
    parents = [(random_genome(rng, keys), None, "")]
    while time.perf_counter() - genome.t0 < args.genome_minutes * 60:
        screened, _ = await evolve_candidates(
            "random" if genome.count % 64 == 0 else "mutate",
            parents,
            keys,
            rng,
            budget=16,
            seen=seen,
            env=env,
            collection=collection,
            probe_tasks=probe_tasks,
            embedder=embedder,
            pool=None,
            name="bench",
        )
        for c in screened:
            genome.add(c.probe_score, c.solved)
        best = max(screened, key=lambda c: c.steered)
        parents = [(best.genome, None, "")]
    print(genome.line())

    code = Tally("code")
    meta = make_llm(args.meta_model, n_ctx=META_N_CTX)
    agent = MetaAgent(meta, env=env, embedder=embedder, max_turns=1, smoke_episodes=2)
    no_memory = {
        "id": "d-0001",
        "name": "no_memory",
        "origin": "baseline",
        "source": "def update(memory, episode, tools):\n    return None\n\n\ndef recall(memory, task, tools):\n    return ''\n",
    }
    for k in range(args.code_samples):
        res = await agent.generate([no_memory], None, generation=k + 1, mode="write", design_id=f"code-{k}")
        if res.status == "ok" and res.source:
            r = await probe(
                Design(name=res.name, source=res.source, origin="meta"),
                env,
                collection,
                probe_tasks,
                embedder=embedder,
                pool=None,
            )
            code.add(r["probe_score"], r["solved"])
        else:
            code.add(0.0, 0)
    print(code.line())
    print(
        f"ratio genome/code: candidates per hour {genome.rate / max(code.rate, 1e-9):.0f}x; "
        f"best probe {genome.best:.3f} vs {code.best:.3f}"
    )


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--meta-model", default=f"local:{STRONGER_LOCAL}")
    p.add_argument("--genome-minutes", type=float, default=3.0)
    p.add_argument("--code-samples", type=int, default=3)
    p.add_argument("--probe-tasks", type=int, default=8)
    p.add_argument("--rooms", type=int, default=8)
    p.add_argument("--seed", type=int, default=42)
    asyncio.run(main(p.parse_args()))
