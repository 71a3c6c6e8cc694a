"""Did the agent get the goal's action in reach, and take it? Per design of a run, over its deployment
episodes.

    python scripts/reach_and_take.py RUN_DIR DESIGN_ID [DESIGN_ID ...]

Replays each deployment episode's actions in the run's environment (rebuilt from its ``config.json``)
and counts the turns at which a listed action named at least ``--min-words`` of the goal's words
(TextWorld fetch: ``take key`` for "Find the key and take it."), the episodes with such a turn, how
many of those were solved, and the share of such turns at which that action was taken. Separates
"memory did not bring the agent there" from "it got there and did not act". Needs an environment
that lists its actions and replays a task the same way each time (the built-ins do).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from atlas.agent import choice as ch
from atlas.alma.evaluate.harness import run_tasks
from atlas.alma.state.config import AlmaConfig
from atlas.alma.state.run_dir import read_jsonl
from atlas.envs.base import words
from atlas.envs.policies import goal_words
from atlas.envs.registry import get_env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="a run folder (config.json and logs/)")
    parser.add_argument("designs", nargs="+", help="design ids, e.g. d-0001 d-0003")
    parser.add_argument("--min-words", type=int, default=2, help="goal words a listed action must name")
    args = parser.parse_args()
    cfg = AlmaConfig.load(args.run / "config.json")
    env = get_env(cfg.env, **cfg.env_kwargs())
    _, deployment = run_tasks(cfg, env)
    tasks = {t.id: t for t in deployment}
    print(
        f"{'design':10s} {'episodes':>8s} {'in reach':>8s} {'solved':>6s} {'turns':>6s} {'taken':>6s} {'rate':>5s}"
    )
    for design in args.designs:
        log = args.run / "logs" / design / "episodes.jsonl"
        if not log.is_file():
            raise SystemExit(f"no episodes of design {design!r} in {args.run}: expected {log}")
        episodes = reached = solved = turns = taken = 0
        for row in read_jsonl(log):
            if row.get("phase") != "deployment" or row.get("task_id") not in tasks:
                continue
            task = tasks[row["task_id"]]
            wanted = goal_words(env.format_goal(task))
            obs = env.reset(task)
            episodes += 1
            here = False
            for step in row.get("actions") or []:
                actions = env.candidate_actions(obs)
                labels = ch.labels(actions)
                near = {lb for lb in labels if len(wanted & set(words(lb))) >= args.min_words}
                if near:
                    here, turns, taken = True, turns + 1, taken + (step.get("text") in near)
                if step.get("text") not in labels:
                    break
                result = env.step(actions[labels.index(step["text"])])
                obs = result.observation
                if result.done:
                    break
            reached += here
            solved += here and bool(row.get("success"))
        rate = f"{taken / turns:.2f}" if turns else "-"
        print(f"{design:10s} {episodes:8d} {reached:8d} {solved:6d} {turns:6d} {taken:6d} {rate:>5s}")


if __name__ == "__main__":
    main()
