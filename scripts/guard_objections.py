"""How many of the task agent's logged steps the current loop guard would not have offered (no LLM).

    python scripts/guard_objections.py RUN_DIR [DESIGN_ID ...]     # default: every design in RUN_DIR/logs

Each deployment episode is replayed on the run's own tasks (``logged_episodes.py``) with today's guard
(``atlas.agent.loops.Guard``): a step it would have taken off the choices is one the agent that played the
run took anyway, because its guard was older or off; how many of those were in episodes it did not solve.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from logged_episodes import deployment_rows, replay, run_environment


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="a run or eval folder (config.json and logs/)")
    parser.add_argument("designs", nargs="*", help="design ids under RUN/logs (default: all)")
    args = parser.parse_args()
    env, tasks = run_environment(args.run)
    logs = args.run / "logs"
    if not logs.is_dir():
        raise SystemExit(
            f"no logs/ in {args.run}: a packed result keeps them in raw.tar.xz (tar xJf raw.tar.xz)"
        )
    designs = args.designs or sorted(p.name for p in logs.iterdir() if p.is_dir())
    print(
        f"{'design':10s} {'episodes':>8s} {'solved':>6s} {'steps':>6s} {'objected':>8s} {'in unsolved':>11s}"
    )
    for design in designs:
        episodes = solved = steps = objected = unsolved = 0
        for row in deployment_rows(args.run, design, tasks):
            episodes += 1
            won = bool(row.get("success"))
            solved += won
            for turn in replay(env, tasks[row["task_id"]], row):
                steps += 1
                if turn.taken not in turn.options:
                    objected += 1
                    unsolved += not won
        print(f"{design:10s} {episodes:8d} {solved:6d} {steps:6d} {objected:8d} {unsolved:11d}")


if __name__ == "__main__":
    main()
