"""What a memory of N games could know on TextWorld fetch: a ceiling for any design (no LLM).

    python scripts/fetch_collection_reach.py RUN_DIR [--design d-0001] [--games 3,6,9,12] [--held 12]

Reads a fetch run's logged episodes of one design (by default its no-memory baseline, whose walks no
advice steers), and for each N takes its first N games in order (the collection games, then deployment
games as if they had been collected too). Every room a game entered shows the things lying there, so
a memory of those games could at best know, per thing, the room it was seen in most. The script prints
how many of the household's habits that guess gets right, and on how many of the last ``--held``
deployment tasks it names the room the task's object lies in — beside the same count for the true
habits (what ``atlas headroom``'s learnable advice tells the agent). A design's memory can point the
agent right no more often than this, whatever its parts.
"""

from __future__ import annotations

import argparse
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from atlas.alma.evaluate.harness import run_tasks
from atlas.alma.state.config import AlmaConfig
from atlas.alma.state.run_dir import read_jsonl
from atlas.envs.registry import get_env
from atlas.envs.textworld import fetch


def errand_of(task: Any) -> tuple[fetch.House, fetch.Errand]:
    meta = task.metadata
    if meta.get("challenge") != fetch.CHALLENGE:
        raise SystemExit(f"task {task.id} is not a fetch task: this script reads TextWorld fetch runs")
    h = fetch.house(int(meta["family"]), int(meta["level"]), int(meta.get("things", fetch.LEGACY_THINGS)))
    return h, fetch.errand(h, int(meta["seed"]), float(meta["habit"]))


def rooms_entered(h: fetch.House, e: fetch.Errand, actions: list[dict[str, Any]]) -> set[str]:
    at, out = e.start, {e.start}
    for step in actions:
        text = str(step.get("text") or "")
        if text.startswith("go "):
            at = h.exits[at].get(text[3:], at)
            out.add(at)
    return out


def sightings(games: list[tuple[Any, dict[str, Any]]]) -> dict[str, str]:
    """Per thing, the room the games saw it in most (the first seen of a tie)."""
    seen: dict[str, Counter[str]] = defaultdict(Counter)
    for task, row in games:
        h, e = errand_of(task)
        entered = rooms_entered(h, e, row.get("actions") or [])
        for thing, room in e.placement.items():
            if room in entered:
                seen[thing][room] += 1
    return {thing: c.most_common(1)[0][0] for thing, c in seen.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", type=Path)
    ap.add_argument(
        "--design", default="d-0001", help="whose episodes (default d-0001, the no-memory baseline)"
    )
    ap.add_argument("--games", default="3,6,9,12", help="memory sizes to try, in games")
    ap.add_argument("--held", type=int, default=12, help="score on the last this many deployment tasks")
    args = ap.parse_args()
    cfg = AlmaConfig.load(args.run / "config.json")
    collection, deployment = run_tasks(cfg, get_env(cfg.env, **cfg.env_kwargs()))
    log = args.run / "logs" / args.design / "episodes.jsonl"
    if not log.is_file():
        raise SystemExit(f"no episodes of design {args.design!r} in {args.run}: expected {log}")
    rows = {(r.get("phase"), r.get("task_id")): r for r in read_jsonl(log)}
    games = [(t, rows[("collection", t.id)]) for t in collection if ("collection", t.id) in rows]
    games += [(t, rows[("deployment", t.id)]) for t in deployment if ("deployment", t.id) in rows]
    held = [(t, r) for t, r in games[-args.held :] if r.get("phase") == "deployment"]
    h, _ = errand_of(games[0][0])
    errands = [errand_of(t)[1] for t, _ in held]
    truth = sum(e.placement[e.target] == h.habits[e.target] for e in errands)
    print(f"{len(games)} logged games of {args.design}; scored on the last {len(held)} deployment tasks")
    print(f"the true habits name the object's room in {truth}/{len(held)}")
    for n in (int(x) for x in args.games.split(",")):
        if n > len(games) - len(held):
            print(f"memory of {n:2d} games: not enough games before the scored ones")
            continue
        guess = sightings(games[:n])
        right = sum(guess.get(e.target) == e.placement[e.target] for e in errands)
        habits = sum(guess.get(thing) == room for thing, room in h.habits.items())
        print(
            f"memory of {n:2d} games: {habits}/{len(h.habits)} habits right ({len(guess)} things seen); "
            f"names the object's room in {right}/{len(held)}"
        )


if __name__ == "__main__":
    main()
