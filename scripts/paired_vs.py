"""One design of a run against every other scored design, paired on the deployment tasks both played.

    python scripts/paired_vs.py RUN_DIR DESIGN_ID [--against OTHER_RUN_DIR] [--reached]
        [--pool RUN_DIR OTHER_RUN_DIR ...]

Prints, per design, the mean of (DESIGN_ID − it) over the common deployment tasks with its bootstrap
95% interval (``atlas.alma.state.stats.paired_difference``): the tables behind docs/results/README.md's claims that a
discovered design beats the hand-built ones. A design stopped early by staged evaluation is compared
on the tasks it played. ``--against`` compares with the designs of another run folder instead (an
``atlas eval`` of a baseline with the run's task settings and seed plays the same task ids).
``--reached`` pairs the highest score each task reached on the way instead of its final score.
``--pool`` adds the tasks of more runs (another seed's evaluation and what to compare it with, the design
under the same id, the others matched by name) to one paired difference.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from atlas.alma.state.run_dir import read_jsonl
from atlas.alma.state.stats import paired_difference


def deployment_scores(run: Path, design_id: str, key: str = "score") -> dict[str, float]:
    """Per-task deployment scores (``key``: ``score``, or ``highest`` on the way) from the archive's
    ``per_task`` (the logs when it has none)."""
    archive = json.loads((run / "archive.json").read_text(encoding="utf-8"))
    entry = next((e for e in archive["entries"] if e["id"] == design_id), None)
    if entry is None:
        raise SystemExit(f"no design {design_id!r} in {run / 'archive.json'}")
    rows = entry.get("per_task") or read_jsonl(run / "logs" / design_id / "episodes.jsonl")
    rows = [r for r in rows if r.get("phase") == "deployment"]
    if any(key not in r for r in rows):
        raise SystemExit(
            f"{design_id} in {run} records no per-task {key!r}: it was scored before that was kept"
        )
    return {str(r["task_id"]): float(r[key]) for r in rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="a run folder (with archive.json)")
    parser.add_argument("design", help="the design id to compare, e.g. d-0004")
    parser.add_argument(
        "--against", type=Path, help="compare with this run folder's designs (e.g. an atlas eval)"
    )
    parser.add_argument(
        "--reached", action="store_true", help="pair the highest score reached on the way, not the final one"
    )
    parser.add_argument(
        "--pool",
        nargs=2,
        action="append",
        default=[],
        type=Path,
        metavar=("RUN", "AGAINST"),
        help="pool the tasks of another run (and the folder to compare it with) into the difference",
    )
    args = parser.parse_args()
    key = "highest" if args.reached else "score"
    others = args.against or args.run
    pairs = [(args.run, others), *[(run, against) for run, against in args.pool]]
    archive = json.loads((others / "archive.json").read_text(encoding="utf-8"))
    for entry in archive["entries"]:
        if (entry["id"] == args.design and others == args.run) or entry.get("status") != "ok":
            continue
        mine, theirs = [], []
        for run, against in pairs:
            other_id = _id_named(against, entry["name"])
            if other_id is None:
                raise SystemExit(f"no design named {entry['name']!r} in {against / 'archive.json'}")
            best, other = deployment_scores(run, args.design, key), deployment_scores(against, other_id, key)
            common = sorted(set(best) & set(other))
            mine += [best[t] for t in common]
            theirs += [other[t] for t in common]
        if not mine:
            print(f"{args.design} − {entry['name']:24s} no deployment task in common")
            continue
        d = paired_difference(mine, theirs)
        print(
            f"{args.design} − {entry['name']:24s} {d.mean:+.3f} [{d.ci95[0]:+.3f}, {d.ci95[1]:+.3f}] on {d.n} tasks"
        )


def _id_named(run: Path, name: str) -> str | None:
    archive = json.loads((run / "archive.json").read_text(encoding="utf-8"))
    return next((e["id"] for e in archive["entries"] if e["name"] == name), None)


if __name__ == "__main__":
    main()
