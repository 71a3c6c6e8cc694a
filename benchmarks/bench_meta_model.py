"""Can this meta model write a design whose advice steers the agent? Run this before a long search.

Samples the search's MetaAgent editing one parent design (its own prompt, with the parent's advice probe and
the environment's *learnable* advice example, one turn each) and puts every reply through the search's own
gates: the design check and smoke run, the copy check against the parent, the check for the example's advice
written literally, and the advice probe (an agent doing only what the advice names, no LLM). The reference,
in the same run, is the environment's hand-written seed design through the same smoke run and probe.

    python benchmarks/bench_meta_model.py                          # the 1.5B local meta model, 3 samples
    python benchmarks/bench_meta_model.py --meta-model openai/gpt-4o-mini --samples 5 --parent cheatsheet

A meta model whose samples never steer the probe will not discover a design that helps: a search with it
can only re-rank the hand-built designs.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from atlas.alma.author.meta_agent import MetaAgent
from atlas.alma.author.smoke import asmoke_run
from atlas.alma.baselines import get_baseline
from atlas.alma.design import Design
from atlas.alma.state.meta_model import META_N_CTX, STRONGER_LOCAL
from atlas.envs.registry import get_env, spec_of
from atlas.infra.embeddings import make_embedder
from atlas.infra.llm import make_llm


def probe_solved(report: Any) -> tuple[int, int]:
    probes = report.probes or []
    return sum(bool(p.get("success")) for p in probes), len(probes)


def verdict(errors: list[str]) -> str:
    """Why a sample was refused, in one word (the last problem the gates found)."""
    last = errors[-1] if errors else ""
    for key, word in (
        ("copy of it", "copy of the parent"),
        ("example's advice literally", "example copied literally"),
        ("smoke run failed", "crashed in the smoke run"),
        ("meta model failed", "meta model error"),
    ):
        if key in last:
            return word
    return "failed the design check"


async def main(args: argparse.Namespace) -> None:
    env = get_env("graphworld", rooms=args.rooms)
    embedder = make_embedder(None)
    meta = make_llm(args.meta_model, n_ctx=META_N_CTX)
    parent = get_baseline(args.parent)
    brief = {"id": "parent", "name": parent.name, "origin": "baseline", "source": parent.source}
    task = env.generate_tasks(1, seed=args.seed)[0]
    advice = spec_of(env).oracle_advice(env, task, "learnable")
    example = f"Task: {env.format_goal(task)}\nAdvice:\n{advice}"
    agent = MetaAgent(meta, env=env, embedder=embedder, max_turns=1, smoke_episodes=2)

    seed_src = spec_of(env).seed_design(env)
    seed = await asmoke_run(Design(name="seed", source=seed_src, origin="seed"), env, 2, embedder=embedder)
    parent_report = await asmoke_run(parent, env, 2, embedder=embedder)
    ref_k, ref_n = probe_solved(seed)
    par_k, par_n = probe_solved(parent_report)
    print(f"meta model {args.meta_model}; parent {parent.name}; GraphWorld {args.rooms} rooms")
    print(f"reference: hand-written seed design, advice probe solved {ref_k}/{ref_n} smoke tasks")
    print(f"parent {parent.name}: advice probe solved {par_k}/{par_n}")

    steering = valid = 0
    seconds = 0.0
    for k in range(1, args.samples + 1):
        t0 = time.perf_counter()
        res = await agent.generate(
            [brief], None, generation=1, mode="edit", example=example, design_id=f"sample-{k}"
        )
        took = time.perf_counter() - t0
        seconds += took
        if res.status != "ok" or res.source is None:
            print(f"  sample {k} ({took:.0f} s): refused: {verdict(res.errors)}")
            continue
        valid += 1
        report = await asmoke_run(
            Design(name=res.name, source=res.source, origin="meta"), env, 2, embedder=embedder
        )
        solved, of = probe_solved(report)
        steering += solved > 0
        print(f"  sample {k} ({took:.0f} s): valid design {res.name}; advice probe solved {solved}/{of}")
    n = args.samples
    print(
        f"valid designs {valid}/{n}; designs whose advice steers the probe to a success {steering}/{n} "
        f"(reference: the seed design {ref_k}/{ref_n} tasks; ratio of steering samples "
        f"{steering / n:.2f} vs 1.00); {seconds / n:.0f} s per sample"
    )


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--meta-model", default=f"local:{STRONGER_LOCAL}")
    p.add_argument("--parent", default="spatial_graph", help="library design the meta model edits")
    p.add_argument("--samples", type=int, default=3)
    p.add_argument("--rooms", type=int, default=8)
    p.add_argument("--seed", type=int, default=42, help="task whose learnable advice is the example")
    asyncio.run(main(p.parse_args()))
