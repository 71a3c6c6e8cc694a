"""The screening probe runs a genome compiled as is in shared sandbox workers (the parts' own code keeps
no state in a worker), and any other design — one edited after compiling included — in a never-used
worker per frozen recall, as an evaluation does. Real GraphWorld, the real sandbox, the real embedder."""

from __future__ import annotations

import asyncio

import pytest

import atlas.alma.genome.step as step
from atlas.alma.design import Design
from atlas.alma.genome import genome_design
from atlas.alma.genome.baselines import baseline_genome
from atlas.alma.sandbox.pool import WorkerPool
from atlas.envs.registry import get_env

pytestmark = pytest.mark.slow


def test_a_compiled_genome_shares_workers_and_scores_as_it_would_isolated(embedder):
    env = get_env("graphworld")
    tasks = env.generate_tasks(9, seed=42)
    compiled = genome_design(baseline_genome("trajectory_retrieval"))
    edited = Design(name="edited", source=compiled.source + "# edited\n", metadata=compiled.metadata)
    results, started = {}, {}
    for design in (compiled, edited):
        pool = WorkerPool(max_workers=2)
        try:
            results[design.name] = asyncio.run(
                step.probe(design, env, tasks[:3], tasks[3:], embedder=embedder, pool=pool)
            )
        finally:
            pool.close()
        started[design.name] = pool.started
    shared, isolated = results[compiled.name], results["edited"]
    assert shared == isolated and shared["played"] >= len(step.PROBE_COLLECTIONS) and not shared["error"]
    # one worker for the design and the pool's spare, against a fresh one per recall
    assert started[compiled.name] <= 3
    assert started["edited"] >= shared["played"]
