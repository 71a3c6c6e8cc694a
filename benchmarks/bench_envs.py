"""Environment throughput and task-agent framework overhead.

Measures, in one run:
  * raw environment steps/s for GraphWorld, ALFWorld (generated games) and TextWorld
    (reset time reported separately; ALFWorld/TextWorld skipped if the extras are missing);
  * TaskAgent overhead per step on GraphWorld with an instant ScriptedLLM (native tool calls
    and JSON mode), compared against a bare loop doing the same env steps (the reference): the
    ratio is agent time per step / raw time per step, the difference is the framework's cost.

    python benchmarks/bench_envs.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from atlas.envs import ExplorerPolicy
from atlas.envs.graphworld import GraphWorldEnv
from atlas.protocols.env import Action


def bench_graphworld(episodes: int) -> dict:
    env = GraphWorldEnv()
    tasks = env.generate_tasks(episodes, seed=0)
    rng = random.Random(0)
    steps = 0
    t0 = time.perf_counter()
    for task in tasks:
        obs = env.reset(task)
        done = False
        while not done:
            r = env.step(rng.choice(env.candidate_actions(obs)))
            obs, done = r.observation, r.done
            steps += 1
    dt = time.perf_counter() - t0
    return {"env": "graphworld", "steps": steps, "seconds": round(dt, 4), "steps_per_s": round(steps / dt, 1)}


def bench_text_env(name: str, env, tasks) -> dict:
    resets, step_times = [], []
    for task in tasks:
        t = time.perf_counter()
        env.reset(task)
        resets.append(time.perf_counter() - t)
        for command in env.gold_plan() or []:
            t = time.perf_counter()
            env.step(Action("act", {"command": command}))
            step_times.append(time.perf_counter() - t)
    # A second reset of the same task (ALMA replays the same tasks for every design).
    t = time.perf_counter()
    env.reset(tasks[0])
    again = time.perf_counter() - t
    return {
        "env": name,
        "steps": len(step_times),
        "steps_per_s": round(len(step_times) / sum(step_times), 1),
        "ms_per_step": round(1000 * statistics.mean(step_times), 1),
        "first_reset_s_mean": round(statistics.mean(resets), 2),
        "repeat_reset_s": round(again, 2),
    }


def bench_alfworld(episodes: int, cache: Path) -> dict:
    try:
        from atlas.envs.alfworld import AlfWorldEnv
    except ImportError as e:  # pragma: no cover
        return {"env": "alfworld", "skipped": str(e)}
    try:
        import alfworld  # noqa: F401
    except ImportError:
        return {"env": "alfworld", "skipped": "alfworld not installed (extra atlas-memory[alfworld])"}
    env = AlfWorldEnv(cache_dir=cache / "alfworld", family_mode=False)
    return bench_text_env("alfworld", env, env.generate_tasks(episodes, seed=100))


def bench_textworld(episodes: int, cache: Path) -> dict:
    try:
        import textworld  # noqa: F401
    except ImportError:
        return {"env": "textworld", "skipped": "textworld not installed (extra atlas-memory[textworld])"}
    from atlas.envs.textworld import TextWorldEnv

    env = TextWorldEnv(challenge="coin_collector", level=5, cache_dir=cache / "textworld")
    tasks = env.generate_tasks(episodes, seed=100)
    t = time.perf_counter()
    for task in tasks:
        env.game_path(task)
    compile_s = (time.perf_counter() - t) / len(tasks)
    out = bench_text_env("textworld", env, tasks)
    out["compile_s_mean"] = round(compile_s, 2)
    return out


def bench_agent_overhead(episodes: int) -> dict:
    from atlas.agent import TaskAgent
    from atlas.infra.llm import ScriptedLLM

    env = GraphWorldEnv(max_steps=40)
    tasks = env.generate_tasks(episodes, seed=0)
    # Reference: the same policy's actions replayed in a bare loop.
    plans = [[(s.tool, s.args) for s in ExplorerPolicy(0).run(env.clone(), t).steps] for t in tasks]
    reps = 20  # the bare loop is fast: repeat it for a stable reference
    t0 = time.perf_counter()
    raw_steps = 0
    for _ in range(reps):
        for task, plan in zip(tasks, plans, strict=True):
            env.reset(task)
            for tool, args in plan:
                env.step(Action(tool, args))
                raw_steps += 1
    raw = (time.perf_counter() - t0) / raw_steps

    results = {"raw_env_us_per_step": round(raw * 1e6, 1), "steps": raw_steps // reps}
    for mode in ("native", "json"):
        total_steps = 0
        t0 = time.perf_counter()
        for task, plan in zip(tasks, plans, strict=True):
            queue = list(plan)

            def reply(messages, _q=queue, _mode=mode, **kwargs):
                tool, args = _q.pop(0)
                if _mode == "native":
                    return {"tool_calls": [{"name": tool, "arguments": args}]}
                return json.dumps({"thought": "go", "tool": tool, "args": args})

            traj = asyncio.run(TaskAgent(ScriptedLLM(reply), tool_mode=mode).run(env.clone(), task))
            total_steps += traj.metadata["turns"]
        per = (time.perf_counter() - t0) / total_steps
        results[f"agent_{mode}_us_per_step"] = round(per * 1e6, 1)
        results[f"agent_{mode}_overhead_us_per_step"] = round((per - raw) * 1e6, 1)
        results[f"agent_{mode}_ratio_vs_raw"] = round(per / raw, 1)
    return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer episodes (a smoke run)")
    ap.add_argument("--skip-text", action="store_true", help="skip ALFWorld and TextWorld")
    args = ap.parse_args(argv)
    n = 3 if args.quick else 10
    with tempfile.TemporaryDirectory(prefix="atlas-bench-envs-") as tmp:
        rows = [bench_graphworld(200 if args.quick else 2000)]
        if not args.skip_text:
            rows.append(bench_alfworld(2 if args.quick else 6, Path(tmp)))
            rows.append(bench_textworld(1 if args.quick else 3, Path(tmp)))
        agent = bench_agent_overhead(n)
    print("== environment throughput (raw env.step, gold/random actions) ==")
    for row in rows:
        print(json.dumps(row))
    print("== TaskAgent framework overhead on GraphWorld, instant ScriptedLLM ==")
    print(json.dumps(agent))
    print(
        f"reference: raw env step {agent['raw_env_us_per_step']} us; agent step native "
        f"{agent['agent_native_us_per_step']} us (x{agent['agent_native_ratio_vs_raw']}), json "
        f"{agent['agent_json_us_per_step']} us (x{agent['agent_json_ratio_vs_raw']})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
