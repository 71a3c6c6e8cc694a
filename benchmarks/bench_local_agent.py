"""Cost of a local task-agent episode: the old path (a rolling JSON-action prompt rebuilt every turn,
grammar fallback, loop-guard resamples) against the choice path (numbered actions in an
append-only conversation, one constrained label per turn, KV cache reused), on the same GraphWorld
tasks with the same model, in one run.

For each path and model: seconds per episode and per turn, prompt tokens actually evaluated per
turn, completion tokens per turn, episodes per hour at concurrency 1 and 4, success rate. The
machine's prompt and generation rates are measured by the same script, and each path is compared
with the bound they imply: a turn that reads only ~80 new tokens and writes ~20 (what a turn of an
append-only conversation costs at best) — ``bound = turns x (80 / prompt_tps + 20 / gen_tps)``.

    python benchmarks/bench_local_agent.py            # both models, 6 tasks, concurrency 1 and 4
    python benchmarks/bench_local_agent.py --quick    # default model, <= 6 minutes on 2 cores

``--quick`` plays the old path for its first 10 turns only (an old episode takes ~4.5 minutes) and
prices its episode at its seconds per turn x the 20 turns its episodes run (it solves none within
the step budget); the report says so. The full run plays every episode to its end.

The last line of ``--quick`` is ``speedup <x> bound-ratio <y>``: x = choice episodes/hour ÷ old
episodes/hour (default model), y = choice seconds per episode ÷ bound.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from dataclasses import dataclass, field
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from atlas.agent import TaskAgent
from atlas.envs.registry import get_env
from atlas.infra.llm import make_llm

DEFAULT_MODEL = "local:qwen2.5-coder-0.5b"
OTHER_MODEL = "local:qwen2.5-coder-1.5b"
BOUND_NEW_TOKENS, BOUND_REPLY_TOKENS = 80, 20


@dataclass
class PathResult:
    name: str
    episodes: int = 0
    solved: int = 0
    turns: int = 0
    seconds: float = 0.0
    evaluated: int = 0  # prompt tokens the model actually evaluated
    completion: int = 0
    per_hour: dict[int, float] = field(default_factory=dict)

    def row(self) -> dict[str, Any]:
        t = max(1, self.turns)
        e = max(1, self.episodes)
        return {
            "path": self.name,
            "episodes": self.episodes,
            "success": f"{self.solved}/{self.episodes}",
            "s/episode": self.seconds / e,
            "s/turn": self.seconds / t,
            "turns/episode": self.turns / e,
            "prompt tok evaluated/turn": self.evaluated / t,
            "completion tok/turn": self.completion / t,
            **{f"episodes/h c={c}": v for c, v in sorted(self.per_hour.items())},
        }


class EvalCounter:
    """Counts the tokens llama.cpp evaluates (prompt and generated) by wrapping ``Llama.eval``."""

    def __init__(self, llama: Any) -> None:
        self.count = 0
        inner = llama.eval

        def counted(tokens: Any) -> None:
            self.count += len(tokens)
            inner(tokens)

        llama.eval = counted


def machine_rates(llama: Any) -> tuple[float, float]:
    """Prompt tokens/s (a 400-token batch) and generation tokens/s (64 greedy tokens), measured now."""
    text = " ".join(f"room_{chr(65 + i % 8)} holds the object number {i}." for i in range(60))
    tokens = llama.tokenize(text.encode(), add_bos=True)[:400]
    llama.reset()
    t0 = time.perf_counter()
    llama.eval(tokens)
    pps = len(tokens) / (time.perf_counter() - t0)
    llama.reset()
    t0 = time.perf_counter()
    out = llama.create_completion(
        prompt="Count from one to one hundred in words:", max_tokens=64, temperature=0.0
    )
    n = out["usage"]["completion_tokens"]
    gps = n / (time.perf_counter() - t0 - out["usage"]["prompt_tokens"] / pps)
    llama.reset()
    return pps, gps


async def play(agent: TaskAgent, env: Any, tasks: list[Any], concurrency: int) -> tuple[list[Any], float]:
    sem = asyncio.Semaphore(concurrency)

    async def one(task: Any) -> Any:
        async with sem:
            return await agent.run(env.clone(), task)

    t0 = time.perf_counter()
    trajs = await asyncio.gather(*(one(t) for t in tasks))
    return list(trajs), time.perf_counter() - t0


def measure(
    path: str,
    llm: Any,
    counter: EvalCounter,
    env: Any,
    tasks: list[Any],
    concurrencies: list[int],
    old_turns: int | None,
) -> PathResult:
    fmt = "tools" if path == "old" else "choice"
    agent = TaskAgent(llm, action_format=fmt, max_turns=old_turns if path == "old" else None)
    res = PathResult(path)
    for c in concurrencies:
        before_eval, before_usage = counter.count, llm.usage.completion_tokens
        trajs, wall = asyncio.run(play(agent, env, tasks, c))
        if old_turns is None:
            res.per_hour[c] = len(trajs) * 3600 / wall
        else:  # capped: price a whole episode (env.max_steps turns) at the measured seconds per turn
            turns = sum(int(t.metadata.get("turns", 0)) for t in trajs)
            res.per_hour[c] = 3600 / (wall / max(1, turns) * env.max_steps)
        if c == concurrencies[0]:
            res.episodes = len(trajs)
            res.solved = sum(bool(t.success) for t in trajs)
            res.turns = sum(int(t.metadata.get("turns", 0)) for t in trajs)
            res.seconds = wall
            res.completion = llm.usage.completion_tokens - before_usage
            res.evaluated = counter.count - before_eval - (res.completion if path == "old" else 0)
    return res


def run_model(
    model: str,
    tasks_n: int,
    rooms: int,
    concurrencies: list[int],
    old_tasks: int,
    old_turns: int | None = None,
) -> dict[str, Any]:
    llm = make_llm(model)
    backend = llm.backend
    backend.load()
    llama = backend._llama
    pps, gps = machine_rates(llama)
    counter = EvalCounter(llama)
    env = get_env("graphworld", rooms=rooms)
    tasks = env.generate_family_tasks(tasks_n, 42, 42 + 10_007)
    new = measure("choice", llm, counter, env, tasks, concurrencies, None)
    old = measure("old", llm, counter, env, tasks[:old_tasks], concurrencies[:1], old_turns)
    turns_new = new.turns / max(1, new.episodes)
    bound = turns_new * (BOUND_NEW_TOKENS / pps + BOUND_REPLY_TOKENS / gps)
    return {
        "model": model,
        "pps": pps,
        "gps": gps,
        "old": old,
        "new": new,
        "bound": bound,
        "old_turns": old_turns,
        "max_steps": env.max_steps,
    }


def print_report(results: list[dict[str, Any]]) -> None:
    for r in results:
        print(
            f"\n== {r['model']}: prompt {r['pps']:.0f} tok/s, generation {r['gps']:.1f} tok/s (measured now)"
        )
        for p in (r["old"], r["new"]):
            row = p.row()
            print(
                "  "
                + "  ".join(f"{k}={v:.2f}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items())
            )
        new_s = r["new"].seconds / max(1, r["new"].episodes)
        old_s = 3600 / r["old"].per_hour[min(r["old"].per_hour)]
        if r["old_turns"]:
            print(
                f"  old path played {r['old_turns']} turns per episode; its episode is priced at "
                f"{r['max_steps']} turns x {r['old'].seconds / max(1, r['old'].turns):.1f} s/turn = {old_s:.0f} s"
            )
        print(
            f"  bound (turns x ({BOUND_NEW_TOKENS}/pps + {BOUND_REPLY_TOKENS}/gps)) = {r['bound']:.1f} s/episode; "
            f"old/bound = {old_s / r['bound']:.2f}, new/bound = {new_s / r['bound']:.2f}"
        )
        print(
            f"  episodes/hour at c=1: old {r['old'].per_hour[min(r['old'].per_hour)]:.0f}, "
            f"new {r['new'].per_hour[min(r['new'].per_hour)]:.0f} "
            f"(x{r['new'].per_hour[min(r['new'].per_hour)] / r['old'].per_hour[min(r['old'].per_hour)]:.1f})"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--quick", action="store_true", help="default model only, 4 tasks (1 on the old path, 10 turns), c=1"
    )
    ap.add_argument("--tasks", type=int, default=6)
    ap.add_argument("--rooms", type=int, default=8)
    ap.add_argument("--models", default=f"{DEFAULT_MODEL},{OTHER_MODEL}")
    args = ap.parse_args()
    if args.quick:
        results = [run_model(DEFAULT_MODEL, 4, args.rooms, [1], old_tasks=1, old_turns=10)]
    else:
        results = [
            run_model(m, args.tasks, args.rooms, [1, 4], old_tasks=max(1, args.tasks // 3))
            for m in args.models.split(",")
        ]
    print_report(results)
    r = results[0]
    new_s = r["new"].seconds / max(1, r["new"].episodes)
    speedup = r["new"].per_hour[1] / r["old"].per_hour[1]
    print(f"speedup {speedup:.2f} bound-ratio {new_s / r['bound']:.2f}")


if __name__ == "__main__":
    main()
