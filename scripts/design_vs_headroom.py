"""A design's deployment scores against a headroom condition on the same tasks (paired, bootstrap 95%).

    atlas headroom --tasks 24 --deploy-seeds 8 --conditions none,learnable --episodes-out H.jsonl
    python scripts/design_vs_headroom.py docs/results/search-graphworld-0.5b graphworld_seed H.jsonl

Prints ``condition − design``: how much room the condition's advice leaves above the design.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from atlas.alma.state.archive import Archive
from atlas.alma.state.stats import paired_difference


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("run_dir", type=Path)
    p.add_argument("design", help="archive entry name")
    p.add_argument("episodes", type=Path, help="atlas headroom --episodes-out file")
    p.add_argument("--condition", default="learnable")
    args = p.parse_args()
    archive = Archive.load(args.run_dir / "archive.json")
    entry = next((e for e in archive if e.name == args.design and e.status == "ok"), None)
    if entry is None:
        raise SystemExit(f"no evaluated design named {args.design!r} in {args.run_dir}")
    design = {t.task_id: t.score for t in entry.per_task if t.phase == "deployment"}
    cond: dict[str, float] = {}
    for n, line in enumerate(args.episodes.read_text(encoding="utf-8").splitlines(), start=1):
        try:
            row = json.loads(line) if line.strip() else None
            if row is not None and row["condition"] == args.condition:
                cond[str(row["task_id"])] = float(row["score"])
        except (ValueError, KeyError, TypeError) as exc:
            raise SystemExit(
                f"{args.episodes}:{n} is not an episode record of atlas headroom --episodes-out ({exc!r})"
            ) from None
    ids = sorted(set(design) & set(cond))
    if not ids:
        raise SystemExit("the design and the headroom episodes share no task: use the run's settings")
    diff = paired_difference([cond[i] for i in ids], [design[i] for i in ids])
    lo, hi = diff.ci95
    print(
        f"{args.condition} {sum(cond[i] for i in ids) / len(ids):.3f}, {args.design} "
        f"{sum(design[i] for i in ids) / len(ids):.3f} on {len(ids)} shared tasks; "
        f"{args.condition} − {args.design}: {diff.mean:+.3f} [{lo:+.3f}, {hi:+.3f}]"
    )


if __name__ == "__main__":
    main()
