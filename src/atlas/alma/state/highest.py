"""How far episodes got, not only where they ended: the highest score an episode reached after any step.

Where an environment gives a partial score, an agent can advance a task and then undo it (a sample
ruined after two of its three stages scores 0 at the end); the final score then hides what the memory
made the agent reach. ``atlas eval`` reports both, each paired with no memory on the same tasks.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from atlas.alma.state.stats import paired_difference
from atlas.core.types import Trajectory


def highest_score(traj: Trajectory) -> float | None:
    """The highest of the scores after each step and the final score; None when no step recorded one."""
    scores = [s.score for s in traj.steps if s.score is not None]
    return round(max([*scores, float(traj.score)]), 6) if scores else None


def collection_reached(results: Iterable[Any]) -> float | None:
    """The mean over collection episodes (``TaskResult``s or ``EpisodeRecord``s) of the highest score
    each reached (its final score where none was recorded); None without collection episodes."""
    reached = [
        float(r.highest if r.highest is not None else r.score) for r in results if r.phase == "collection"
    ]
    return round(sum(reached) / len(reached), 6) if reached else None


def gives_partial_score(results: Iterable[Any]) -> bool:
    """Whether an environment gives a partial score, as its episodes (``TaskResult``s) show it: one of
    them reached a score above 0 without being solved. Decided per environment from the task agent's
    episodes, not per probe episode, so that every design's probe reads progress the same way
    (``advice_probe.progress_of``)."""
    return any(not r.success and float(r.highest if r.highest is not None else r.score) > 0 for r in results)


def highest_reached(design: Iterable[Any], no_memory: Iterable[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The mean highest score of a design's deployment episodes (``TaskResult``) and of no memory's
    (the baseline's rows), and their paired difference, over the tasks both recorded it for; None when
    there are none (results from before it was recorded)."""
    mine = {t.task_id: float(t.highest) for t in design if t.phase == "deployment" and t.highest is not None}
    base = {str(r.get("task_id")): float(r["highest"]) for r in no_memory if r.get("highest") is not None}
    both = sorted(set(mine) & set(base))
    if not both:
        return None
    a, b = [mine[k] for k in both], [base[k] for k in both]
    diff = paired_difference(a, b)
    return {
        "deployment": round(sum(a) / len(a), 6),
        "no_memory": round(sum(b) / len(b), 6),
        "difference": {"mean": round(diff.mean, 6), "ci95": [round(x, 6) for x in diff.ci95], "n": diff.n},
    }


__all__ = ["collection_reached", "highest_reached", "highest_score"]
