"""Where a run's time went: the no-memory baseline, the hand-built designs, the search's generations
(and how much of them was playing designs with the task agent) and the test tasks, read from the
archive's own timings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from atlas.viewer.run_reader import HAND_BUILT_ORIGINS, _num

if TYPE_CHECKING:
    from atlas.viewer.run_reader import RunSnapshot


@dataclass(frozen=True)
class Phase:
    name: str
    seconds: float
    note: str = ""


def _played_s(entry: dict[str, Any]) -> float:
    return entry.get("played_s") or 0.0  # read_run keeps a finite number or None


def time_spent(run: RunSnapshot) -> list[Phase]:
    """The run's phases in the order they start, each with its seconds (0 for one not reached; a
    baseline read from the cache took none of this run's time)."""
    baseline = [e for e in run.entries if e.get("origin") == "baseline" and e.get("name") == "no_memory"]
    base_s = sum(_played_s(e) for e in baseline)
    hand = [
        e
        for e in run.entries
        if e.get("generation") == 0 and e.get("origin") in HAND_BUILT_ORIGINS and e not in baseline
    ]
    searched = [e for e in run.entries if e.get("origin") == "meta"]
    playing = sum(_played_s(e) for e in searched)
    phases = [
        Phase("no-memory baseline", 0.0, f"read from the cache ({base_s / 60:.1f} min when played)")
        if any(e.get("baseline_cached") for e in baseline)
        else Phase("no-memory baseline", base_s),
        Phase(f"hand-built designs ({len(hand)})", sum(_played_s(e) for e in hand)),
        Phase(
            f"search generations ({len(run.iterations)})",
            sum(_num(it.get("duration_s")) or 0.0 for it in run.iterations if isinstance(it, dict)),
            f"{playing / 60:.1f} min of it playing designs with the task agent" if playing else "",
        ),
        Phase("test tasks no choice saw", _num((run.held_out or {}).get("duration_s")) or 0.0),
    ]
    counted = sum(p.seconds for p in phases)
    if run.run_time_s and run.run_time_s - counted > 0.01 * run.run_time_s:
        phases.append(Phase("other (setup, checks, writing)", run.run_time_s - counted))
    return phases


def time_section(run: RunSnapshot) -> list[str]:
    """The report's "Where the time went" section (markdown lines)."""
    phases = time_spent(run)
    total = run.run_time_s or sum(p.seconds for p in phases)
    out = ["## Where the time went", ""]
    if total <= 0:
        return [*out, "No timing recorded yet.", ""]
    out += ["| Phase | Minutes | Share | Note |", "|---|---:|---:|---|"]
    for p in phases:
        out.append(f"| {p.name} | {p.seconds / 60:.1f} | {p.seconds / total:.0%} | {p.note} |")
    out += ["", f"Of the run's {total / 60:.1f} minutes.", ""]
    return out


__all__ = ["Phase", "time_section", "time_spent"]
