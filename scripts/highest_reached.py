"""The highest score each logged deployment episode reached on its way, not only where it ended: a
design whose agent advances a task and then ruins it scores 0 at the end and more here. Per design, and
the paired difference of each from the first on the tasks both played (bootstrap 95% interval).

    python scripts/highest_reached.py RUN:d-0002 RUN:d-0001 OTHER_RUN:d-0002

Replays each episode's logged actions in the run's environment (rebuilt from its ``config.json``; a
plug-in must be loadable through ``$ATLAS_PLUGINS``). Needs an environment that lists its actions, replays
a task the same way each time, and gives a partial score (``score()``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from logged_episodes import deployment_rows, replay, run_environment

from atlas.alma.state.stats import paired_difference


def highest(spec: str) -> dict[str, float]:
    """``{task id: the highest score reached}`` for ``RUN:DESIGN``."""
    run, _, design = spec.rpartition(":")
    if not run or not design:
        raise SystemExit(f"expected RUN:DESIGN (e.g. runs/eval-1:d-0002), got {spec!r}")
    env, tasks = run_environment(Path(run))
    out = {}
    for row in deployment_rows(Path(run), design, tasks):
        top = 0.0
        for _turn in replay(env, tasks[row["task_id"]], row):
            top = max(top, float(env.score()))
        out[row["task_id"]] = max(top, float(env.score()))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "designs", nargs="+", help="RUN:DESIGN, e.g. runs/eval-1:d-0002; the first is the reference"
    )
    args = parser.parse_args()
    reached = [(spec, highest(spec)) for spec in args.designs]
    first_spec, first = reached[0]
    for spec, scores in reached:
        mean = sum(scores.values()) / max(len(scores), 1)
        print(f"{spec}: highest score reached, mean {mean:.3f} over {len(scores)} episodes", end="")
        print(f" ({sum(s > 0 for s in scores.values())} above 0)")
    for spec, scores in reached[1:]:
        both = sorted(set(first) & set(scores))
        diff = paired_difference([first[k] for k in both], [scores[k] for k in both])
        lo, hi = diff.ci95
        print(f"{first_spec} - {spec}: {diff.mean:+.3f} [{lo:+.3f}, {hi:+.3f}] (paired, {diff.n} tasks)")


if __name__ == "__main__":
    main()
