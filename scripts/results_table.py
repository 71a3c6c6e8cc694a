"""A run's archive as a Markdown table: every design against no memory, and the best fully evaluated
design against each one on the tasks that design played (paired differences, bootstrap 95% intervals).

    python scripts/results_table.py docs/results/search-graphworld-0.5b
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from atlas.alma.state.stats import paired_difference


def _interval(d: dict[str, Any]) -> str:
    return f"{d['mean']:+.3f} [{d['ci95'][0]:+.3f}, {d['ci95'][1]:+.3f}]"


def table(run: Path) -> str:
    entries = json.loads((run / "archive.json").read_text(encoding="utf-8"))["entries"]
    full = [
        e
        for e in entries
        if e.get("stage") == "full" and e.get("normalized_score") is not None and e["name"] != "no_memory"
    ]
    best = max(full, key=lambda e: e["normalized_score"]) if full else None
    best_scores = {
        t["task_id"]: t["score"] for t in (best or {}).get("per_task", []) if t["phase"] == "deployment"
    }
    rows = [
        "| design | origin | played | collection solved | deployment solved | deployment mean | "
        "− no memory [95% CI] | best − design [95% CI] |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for e in entries:
        dep = [t for t in e["per_task"] if t["phase"] == "deployment"]
        col = [t for t in e["per_task"] if t["phase"] == "collection"]
        if e.get("deployment_score") is None:
            why = ":".join((e.get("errors") or ["?"])[-1].split(":")[:2])
            rows.append(f"| {e['name']} | {e['origin']} | — | — | — | — | {e['status']}: {why} | — |")
            continue
        vs = e.get("vs_no_memory") or (e["metadata"].get("staged") or {}).get("vs_no_memory_partial")
        against = _interval(vs) if vs and e["name"] != "no_memory" else "—"
        versus_best = "—"
        if best and e["id"] != best["id"] and e["name"] != "no_memory":
            pairs = [(best_scores[t["task_id"]], t["score"]) for t in dep if t["task_id"] in best_scores]
            if pairs:
                d = paired_difference([a for a, _ in pairs], [b for _, b in pairs]).to_dict()
                versus_best = f"{_interval(d)} (n={d['n']})"
        rows.append(
            f"| {e['name']} | {e['origin']} | {len(dep)}/{e['metadata'].get('staged', {}).get('of', len(dep))} | "
            f"{sum(t['success'] for t in col)}/{len(col)} | {sum(t['success'] for t in dep)}/{len(dep)} | "
            f"{e['deployment_score']:.3f} | {against} | {versus_best} |"
        )
    return "\n".join(rows)


if __name__ == "__main__":
    if len(sys.argv) != 2 or not (Path(sys.argv[1]) / "archive.json").is_file():
        sys.exit("usage: python scripts/results_table.py RUN_DIR  (a run folder holding archive.json)")
    print(table(Path(sys.argv[1])))
