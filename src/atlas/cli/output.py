"""What `atlas run`, `atlas eval`, `atlas demo`, `atlas headroom` and `atlas archive` print: the
results table, the usage line, the verdicts and hints, the JSON of `atlas eval --json`; and the
console and error exit they share."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from atlas.cli.exits import fail  # the one error exit of every command, re-exported for the commands here

if TYPE_CHECKING:
    from atlas.alma.state.archive import Archive


def make_console(stderr: bool = False) -> Any:
    from rich.console import Console

    return Console(stderr=stderr, highlight=False)


def shown(name: str) -> str:
    """A name from an archive, safe inside a rich table: no escape sequences, no markup."""
    from rich.markup import escape

    from atlas.core.safetext import safe_text

    return escape(safe_text(name))


def fmt(v: float | None, signed: bool = False) -> str:
    if v is None:
        return "—"
    return f"{v:+.3f}" if signed else f"{v:.3f}"


def results_table(archive: Archive, title: str = "Results") -> Any:
    """No memory, hand-built designs, then the best evolved design (deployment is fitness)."""
    from rich.table import Table

    table = Table(title=title)
    for col in ("design", "origin", "status", "collection", "deployment", "normalized"):
        table.add_column(
            col, justify="right" if col in ("collection", "deployment", "normalized") else "left"
        )
    hand = [e for e in archive if e.origin != "meta"]
    evolved = [e for e in archive if e.origin == "meta"]
    for e in hand:
        table.add_row(
            f"{shown(e.name)} ({e.id})",
            e.origin,
            e.status,
            fmt(e.collection_score),
            fmt(e.deployment_score),
            fmt(e.normalized_score, True),
        )
    best = archive.best(origin="meta")
    if best is not None:
        table.add_row(
            f"[bold]best evolved: {shown(best.name)} ({best.id})[/bold]",
            "meta",
            best.status,
            fmt(best.collection_score),
            fmt(best.deployment_score),
            fmt(best.normalized_score, True),
        )
    failed = sum(1 for e in evolved if e.status != "ok")
    table.caption = (
        f"{len(evolved)} evolved designs ({failed} invalid or failed); "
        "normalized = deployment − no-memory baseline on the same held-out tasks"
    )
    return table


def ci_text(diff: dict[str, Any] | None) -> str:
    if not diff:
        return ""
    lo, hi = diff["ci95"]
    verdict = (
        "beats no memory" if lo > 0 else "worse than no memory" if hi < 0 else "cannot tell from no memory"
    )
    return f"  95% CI [{lo:+.3f}, {hi:+.3f}] over {diff['n']} tasks: {verdict}"


def eval_json(entry: Any, archive: Archive) -> dict[str, Any]:
    """What `atlas eval --json` prints."""
    from atlas.alma.state.goal_completion import goal_completion
    from atlas.alma.state.highest import highest_reached

    base = archive.baseline or {}
    diff = entry.vs_no_memory or {}
    settings = {}
    if archive.path is not None:
        cfg = archive.path.parent / "config.json"
        if cfg.exists():
            import json

            settings = json.loads(cfg.read_text(encoding="utf-8"))
    return {
        "design": entry.name,
        "status": entry.status,
        "errors": entry.errors,
        "scores": {t.task_id: t.score for t in entry.per_task if t.phase == "deployment"},
        "no_memory_scores": {t["task_id"]: t["score"] for t in base.get("per_task") or []},
        "deployment_score": entry.deployment_score,
        "no_memory_score": base.get("score"),
        "normalized": {
            "mean": diff.get("mean", entry.normalized_score),
            "ci95": diff.get("ci95"),
            "n": diff.get("n", 0),
        },
        "goal_completion": {
            "deployment": deployment_completion(entry).to_dict(),
            "no_memory": goal_completion(base.get("per_task") or []).to_dict(),
        },
        "highest_reached": highest_reached(entry.per_task, base.get("per_task") or []),
        "settings": settings,
    }


def reached_text(entry: Any, archive: Archive) -> str | None:
    """The ``atlas eval`` line on how far episodes got (``atlas.alma.state.highest``); None unrecorded."""
    from atlas.alma.state.highest import highest_reached

    reached = highest_reached(entry.per_task, (archive.baseline or {}).get("per_task") or [])
    if reached is None:
        return None
    return (
        f"reached     {reached['deployment']:.3f} at most on the way, no memory {reached['no_memory']:.3f}"
        f"{ci_text(reached['difference'])}"
    )


def deployment_completion(entry: Any) -> Any:
    """TGC and SGC of a design's deployment episodes (``atlas.alma.state.goal_completion``)."""
    from atlas.alma.state.goal_completion import goal_completion

    return goal_completion([t for t in entry.per_task if t.phase == "deployment"])


def headroom_table(result: Any) -> Any:
    """Per-condition outcomes and the paired differences with their intervals."""
    from rich.table import Table

    data = result.to_dict()
    table = Table(title=f"Headroom — {data['env']}, {data['model']}, {data['tasks']} tasks")
    for col in (
        "condition",
        "TGC",
        "SGC [95% CI]",
        "mean score",
        "mean steps",
        "s/episode",
        "vs none [95% CI]",
    ):
        table.add_column(col)
    diffs = data["differences"]
    for name, c in data["conditions"].items():
        d = diffs.get(f"{name}-none")
        vs = f"{d['mean']:+.3f} [{d['ci95'][0]:+.3f}, {d['ci95'][1]:+.3f}]" if d else "—"
        sgc = c["sgc"]
        table.add_row(
            name,
            f"{c['success_rate']:.0%}",
            f"{sgc['rate']:.0%} [{sgc['ci95'][0]:.0%}, {sgc['ci95'][1]:.0%}] of {sgc['n']}",
            f"{c['mean_score']:.3f}",
            f"{c['mean_steps']:.1f}",
            f"{c['seconds_per_episode']:.1f}",
            vs,
        )
    return table


def nothing_solved_hint(archive: Archive) -> str | None:
    """When no episode of any design was solved, fitness carries no signal: say so and what helps."""
    tasks = [t for e in archive for t in e.per_task]
    if not tasks or any(t.success for t in tasks):
        return None
    model = (archive.path and _config_value(archive.path.parent, "task_model")) or "the task model"
    return (
        f"No episode was solved by any design, so these scores cannot tell designs apart: {model} is too "
        "weak for these tasks. A larger model helps: `atlas models pull qwen2.5-coder-1.5b` then "
        "`--model local:qwen2.5-coder-1.5b`, or a hosted model (`--model openai/gpt-4.1-mini`)."
    )


def _config_value(run_dir: Path, key: str) -> Any:
    from atlas.alma.state.run_dir import RunDir
    from atlas.errors import ArchiveError

    try:
        config = RunDir(run_dir).read_config()
    except ArchiveError:
        return None
    return config.get(key) if isinstance(config, dict) else None


def usage_line(archive: Archive) -> str:
    """Tokens and cost of the whole run (every design's generation and evaluation)."""
    keys = ("prompt_tokens", "completion_tokens", "calls")
    tot = {k: sum(int(e.usage.get(k, 0) or 0) for e in archive) for k in keys}
    cost = sum(float(e.usage.get("cost_usd", 0.0) or 0.0) for e in archive)
    line = (
        f"tokens: {tot['prompt_tokens'] + tot['completion_tokens']:,} (prompt {tot['prompt_tokens']:,}, "
        f"completion {tot['completion_tokens']:,}) in {tot['calls']:,} LLM calls; cost ${cost:.4f}"
    )
    if saved := archive.episodes_saved():
        line += f"; staged evaluation saved {saved} deployment episodes"
    return line


def held_out_lines(archive: Archive) -> list[str]:
    """The run's result: each tested design's gain over no memory on the held-out test tasks, the pick
    first, and whether the interval separates it from no memory ([] before the test phase)."""
    from atlas.alma.search.held_out import HeldOut

    if not archive.held_out:
        return []
    held = HeldOut.model_validate(archive.held_out)
    lines = held.lines()
    pick = held.chosen()
    v = pick.vs_no_memory if pick else None
    if pick is None or v is None:
        return lines
    if v["ci95"][0] > 0:
        lines.append(
            f"The run's result: {pick.name} beats no memory on tasks no choice saw (interval above 0)."
        )
    else:
        lines.append(
            f"The run's result: on tasks no choice saw, {pick.name} is not separated from no memory "
            "(the interval includes 0)."
        )
    return lines


def demo_verdict(archive: Archive) -> list[str]:
    """What the demo's numbers show: the search's pick against no memory on the held-out test tasks
    (paired, with its 95% interval), where it was chosen, and what so few tasks cannot show."""
    evolved = [
        (e, e.vs_no_memory) for e in archive if e.origin == "meta" and e.status == "ok" and e.vs_no_memory
    ]
    if not evolved:
        return ["No discovered design reached the task agent (none beat the probe of the designs played)."]
    best, v = max(evolved, key=lambda pair: pair[1]["mean"])
    lo, hi = v["ci95"]
    lines = [
        f"best discovered design {best.name} ({best.id}): {v['mean']:+.3f} over no memory, "
        f"95% interval [{lo:+.3f}, {hi:+.3f}] on the {v['n']} deployment tasks it was chosen on"
    ]
    held = held_out_lines(archive)
    if held:
        lines += held
    elif lo > 0:
        lines.append("It beats no memory on these tasks: the interval is above 0.")
    else:
        lines.append("These tasks cannot separate it from no memory: the interval includes 0.")
    lines.append(
        f"What {v['n']} tasks cannot show: how large the gain is elsewhere, or which of two good designs is "
        "better. A search on 24 tasks, and `atlas eval` on a fresh seed, can (docs/results/README.md)."
    )
    return lines


__all__ = [
    "ci_text",
    "demo_verdict",
    "eval_json",
    "fail",
    "fmt",
    "headroom_table",
    "held_out_lines",
    "make_console",
    "nothing_solved_hint",
    "results_table",
    "shown",
    "usage_line",
]
