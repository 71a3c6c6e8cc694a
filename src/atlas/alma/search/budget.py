"""When a search stops early, and what it tells the user: a cost cap reached, a time cap reached,
or iterations in a row that could not run. Each returns the reason (None: go on); the archive is
already saved, and the reason says how to continue with ``atlas run --resume``."""

from __future__ import annotations

from pathlib import Path

MAX_FAILED_ITERATIONS = 2  # iterations in a row whose models or sandbox failed before the search stops


def over_cost(generation: int, spent: float, cap: float | None, run_dir: Path) -> str | None:
    """Stop before ``generation`` once the run (resumed parts included) has cost ``cap`` dollars."""
    if cap is None or spent < cap:
        return None
    return (
        f"stopped before generation {generation}: the run has cost ${spent:.4f}, reaching --max-cost "
        f"${cap:g}. The archive is saved in {run_dir}; to continue, raise the budget: "
        f"atlas run --resume {run_dir} --max-cost <dollars>"
    )


def over_time(generation: int, elapsed_s: float, cap: float | None, run_dir: Path) -> str | None:
    """Stop before ``generation`` once this invocation has run ``cap`` minutes (a generation is not
    cut short: the search may overrun by one generation)."""
    if cap is None or elapsed_s < cap * 60:
        return None
    return (
        f"stopped before generation {generation}: {elapsed_s / 60:.1f} minutes reached --max-minutes "
        f"{cap:g}. The archive is saved in {run_dir}; to continue: "
        f"atlas run --resume {run_dir} --max-minutes <minutes>"
    )


def too_many_failures(failed: list[str], run_dir: Path) -> str | None:
    """Stop after ``MAX_FAILED_ITERATIONS`` iterations in a row that could not run."""
    if len(failed) < MAX_FAILED_ITERATIONS:
        return None
    return (
        f"stopped after {len(failed)} iterations in a row could not run:\n  "
        + "\n  ".join(failed)
        + f"\nThe archive is saved in {run_dir}. Once the model (or sandbox) works again, "
        f"continue with: atlas run --resume {run_dir}"
    )


__all__ = ["MAX_FAILED_ITERATIONS", "over_cost", "over_time", "too_many_failures"]
