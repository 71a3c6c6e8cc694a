"""How often the short ScienceWorld action list holds the gold path's next action.

For each variation (test split, spread over the supported task types), the gold path is played
*through the list*: at each gold step the list entry that does the same thing (same template,
same objects: ``atlas.envs.scienceworld.gold.find``) is taken; a gold step the list lacks is
skipped; steps after the task is complete are not counted. Printed: coverage over all gold steps, over the gold steps the simulator's full
valid-action list holds (the reference: a step it lacks is a no-op there, e.g. opening an open
door), the final scores, and the median list size beside the median full valid-action count.

    python benchmarks/bench_scienceworld_actions.py [--per-type 4] [--types a,b] [--out file.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

from atlas.envs.scienceworld import catalog
from atlas.envs.scienceworld.actions import Choice
from atlas.envs.scienceworld.env import ScienceWorldEnv
from atlas.envs.scienceworld.gold import find
from atlas.envs.scienceworld.simulator import check_runtime
from atlas.errors import ConfigError
from atlas.protocols.env import Action


def play(env: ScienceWorldEnv, task_type: str, variation: int) -> dict:
    task = env._task_of(task_type, variation)
    gold = env.gold_path(task)
    hits = in_full = hits_in_full = asked = 0
    sizes, fulls, missed = [], [], []
    for command in gold:
        if env.done:  # the task is complete: the gold path's remaining steps ask nothing of the list
            break
        asked += 1
        scene = env._scene
        assert scene is not None
        listed = list(env._choices.values())
        everything = [Choice(c.command, c.command, c.template, c.objects) for c in scene.combos]
        sizes.append(len(listed))
        fulls.append(len(scene.combos))
        entry = find(command, listed, scene)
        reference = find(command, everything, scene) is not None
        in_full += reference
        if entry is None:
            missed.append(command)
            continue
        hits += 1
        hits_in_full += reference
        env.step(Action("act", {"command": entry.label}))
    return {
        "task_type": task_type,
        "variation": variation,
        "gold_steps": asked,
        "gold_path": len(gold),
        "hits": hits,
        "in_full": in_full,
        "hits_in_full": hits_in_full,
        "score": env.score(),
        "success": env.success(),
        "list_sizes": sizes,
        "full_sizes": fulls,
        "missed": missed,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-type", type=int, default=4, help="test variations per task type (default 4)")
    ap.add_argument("--types", default=",".join(catalog.SUPPORTED), help="comma list of task types")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None, help="write every variation's figures here (JSON)")
    args = ap.parse_args(argv)
    try:
        check_runtime()
    except ConfigError as exc:
        print(f"skipped: {exc}")
        return 0
    types = catalog.task_types(args.types)
    env = ScienceWorldEnv(task_type=types, max_steps=500)
    t0 = time.perf_counter()
    rows = []
    for t in types:
        for _, v in catalog.pick((t,), "test", args.per_type, args.seed):
            row = play(env, t, v)
            rows.append(row)
            print(
                f"{t:45s} v{v:<5d} list {row['hits']:3d}/{row['gold_steps']:<3d} "
                f"(of the reference's {row['in_full']:3d}: {row['hits_in_full']:3d})  score {row['score']:.2f}",
                flush=True,
            )
    env.close()
    seconds = time.perf_counter() - t0
    steps = sum(r["gold_steps"] for r in rows)
    hits = sum(r["hits"] for r in rows)
    ref = sum(r["in_full"] for r in rows)
    ref_hits = sum(r["hits_in_full"] for r in rows)
    sizes = [s for r in rows for s in r["list_sizes"]]
    fulls = [s for r in rows for s in r["full_sizes"]]
    solved = sum(r["score"] >= 1.0 for r in rows)
    print()
    print(f"variations: {len(rows)} over {len(types)} task types ({seconds:.0f} s)")
    print(f"gold next action in the list: {hits}/{steps} = {hits / max(1, steps):.3f} of all gold steps")
    print(
        f"  of the gold steps the full valid-action list holds (reference): {ref_hits}/{ref} = "
        f"{ref_hits / max(1, ref):.3f}"
    )
    print(f"gold paths played through the list to score 1.0: {solved}/{len(rows)}")
    med, med_full = statistics.median(sizes), statistics.median(fulls)
    print(
        f"median actions a turn: list {med:.0f} vs full valid-action list {med_full:.0f} (ratio {med / med_full:.3f})"
    )
    per_type = {}
    for t in types:
        own = [r for r in rows if r["task_type"] == t]
        per_type[t] = {
            "coverage": round(sum(r["hits"] for r in own) / max(1, sum(r["gold_steps"] for r in own)), 3),
            "solved": f"{sum(r['score'] >= 1.0 for r in own)}/{len(own)}",
        }
        print(f"  {t:45s} coverage {per_type[t]['coverage']:.3f}  solved {per_type[t]['solved']}")
    misses = Counter((r["task_type"], m) for r in rows for m in r["missed"])
    if misses:
        print("most missed:", "; ".join(f"{t}: {m!r} x{n}" for (t, m), n in misses.most_common(8)))
    if args.out is not None:
        args.out.write_text(json.dumps({"rows": rows, "per_type": per_type}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
