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

from logged_episodes import deployment_rows, replay, run_environment

from atlas.envs.base import words
from atlas.envs.policies import goal_words


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="a run folder (config.json and logs/)")
    parser.add_argument("designs", nargs="+", help="design ids, e.g. d-0001 d-0003")
    parser.add_argument("--min-words", type=int, default=2, help="goal words a listed action must name")
    args = parser.parse_args()
    env, tasks = run_environment(args.run)
    print(
        f"{'design':10s} {'episodes':>8s} {'in reach':>8s} {'solved':>6s} {'turns':>6s} {'taken':>6s} {'rate':>5s}"
    )
    for design in args.designs:
        episodes = reached = solved = turns = taken = 0
        for row in deployment_rows(args.run, design, tasks):
            task = tasks[row["task_id"]]
            wanted = goal_words(env.format_goal(task))
            episodes += 1
            here = False
            for turn in replay(env, task, row):
                near = {lb for lb in turn.labels if len(wanted & set(words(lb))) >= args.min_words}
                if near:
                    here, turns, taken = True, turns + 1, taken + (turn.taken in near)
            reached += here
            solved += here and bool(row.get("success"))
        rate = f"{taken / turns:.2f}" if turns else "-"
        print(f"{design:10s} {episodes:8d} {reached:8d} {solved:6d} {turns:6d} {taken:6d} {rate:>5s}")


if __name__ == "__main__":
    main()
