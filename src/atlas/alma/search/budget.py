"""When a search stops early, and what it tells the user: a cost cap reached, a time cap reached,
iterations in a row that could not run, or (``until_found``) a design that beats no memory. Each
returns the reason (None: go on); the archive is already saved, and the reason says how to continue
with ``atlas run --resume``. ``pace_note`` says early when a time cap leaves the search little room."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

from atlas.alma.search.usage import UsageMeter, archive_usage
from atlas.alma.state.archive import Archive, ArchiveEntry
from atlas.alma.state.config import AlmaConfig
from atlas.errors import BudgetReached

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


def generation_s(archive: Archive) -> float:
    """Seconds the next generation is expected to take: the median of the run's generations so far
    (0 before the first)."""
    times = [float(t) for it in archive.iterations if isinstance(t := it.get("duration_s"), int | float)]
    return statistics.median(times) if times else 0.0


def over_time(
    generation: int,
    elapsed_s: float,
    cap: float | None,
    run_dir: Path,
    reserve_s: float = 0.0,
    next_s: float = 0.0,
) -> str | None:
    """Stop before ``generation`` once the run (resumed parts included) has run ``cap`` minutes, less
    ``reserve_s`` kept for the held-out test and ``next_s`` the generation is expected to take (a
    generation is not cut short, so one that would end in the test phase's time is not started: on
    TextWorld fetch one started 23 minutes before the cap took 25, and the run ended 34 minutes late)."""
    if cap is None or elapsed_s + reserve_s + next_s < cap * 60:
        return None
    kept = f", keeping {reserve_s / 60:.1f} for the held-out test tasks" if reserve_s > 0 else ""
    takes = f" (a generation takes about {next_s / 60:.0f} here)" if next_s > 0 else ""
    return (
        f"stopped before generation {generation}: the run has run {elapsed_s / 60:.1f} minutes (resumed "
        f"parts included){kept}{takes}, reaching --max-minutes {cap:g}. The archive is saved in {run_dir}; "
        f"to continue, raise the limit: atlas run --resume {run_dir} --max-minutes <minutes>"
    )


def staged_s(per_episode_s: float, cfg: AlmaConfig, deployment: int) -> float:
    """Seconds a new design takes at this pace up to its first stage: its collection games and the first
    batch of deployment tasks (all of them when unstaged)."""
    return per_episode_s * (cfg.episodes + min(cfg.stage_tasks or deployment, deployment))


def test_phase_s(per_episode_s: float, cfg: AlmaConfig) -> float:
    """Seconds the test phase takes at this pace at least: no memory and the pick on the test tasks."""
    return per_episode_s * cfg.test_count * 2


def pace_note(per: float, cfg: AlmaConfig, deployment: int, elapsed_s: float) -> str | None:
    """What ``--max-minutes`` leaves for the search at the pace the no-memory baseline showed (``per``
    seconds an episode): a line saying so when it leaves room for fewer than two played designs beside
    the test phase, else None."""
    if not cfg.max_minutes or per <= 0:
        return None
    design, test = staged_s(per, cfg, deployment), test_phase_s(per, cfg)
    left = cfg.max_minutes * 60 - elapsed_s - test
    if left >= 2 * design:
        return None
    return (
        f"at the no-memory baseline's pace ({per:.0f} s per episode with --concurrency {cfg.concurrency}), "
        f"the test phase needs about {test / 60:.0f} minutes and each design the search plays about "
        f"{design / 60:.0f}: --max-minutes {cfg.max_minutes:g} leaves room for {max(0, int(left // design))} "
        "played designs. For a search, raise --max-minutes or add workers (--executor ray)"
    )


def no_room(per_episode_s: float, cfg: AlmaConfig, deployment: int, elapsed_s: float) -> str | None:
    """Why a hand-built design is not played under ``--max-minutes`` (None: it fits): at this pace its
    first stage would end past the cap, less the test phase."""
    if not cfg.max_minutes or per_episode_s <= 0:
        return None
    need = staged_s(per_episode_s, cfg, deployment) + test_phase_s(per_episode_s, cfg)
    if elapsed_s + need <= cfg.max_minutes * 60:
        return None
    return (
        f"not played: at {per_episode_s:.0f} s per episode its first {cfg.stage_tasks} tasks and the test "
        f"phase would end past --max-minutes {cfg.max_minutes:g} ({elapsed_s / 60:.0f} minutes run)"
    )


OUT_OF_TIME = "out of time"  # how a hand-built design's stop under --max-minutes reads


def seed_out_of_time(
    cfg: AlmaConfig, elapsed_s: float, per_episode_s: float, left_episodes: int, test_s: float
) -> str | None:
    """Why a hand-built design stops after a batch under ``--max-minutes`` (None: it goes on): its
    ``left_episodes`` at its own pace so far, then the test phase (``test_s``), would end past the cap.
    A hand-built design is the comparison, not the search, and is staged only against the best so far:
    on ScienceWorld two of them that tied the leader played all 24 tasks, 33 minutes of the 57 the
    search had left, and the test phase ended past the cap."""
    if not cfg.max_minutes or per_episode_s <= 0 or left_episodes <= 0:
        return None
    if elapsed_s + per_episode_s * left_episodes + test_s <= cfg.max_minutes * 60:
        return None
    return (
        f"{OUT_OF_TIME}: at {per_episode_s:.0f} s per episode its {left_episodes} other tasks and the test "
        f"phase would end past --max-minutes {cfg.max_minutes:g} ({elapsed_s / 60:.0f} minutes run)"
    )


def no_time_to_test(cfg: AlmaConfig, elapsed_s: float, design_s: float) -> str | None:
    """Why a design after the pick is not played on the test tasks (None: it is): at the pick's time
    there (``design_s``) it would end past ``--max-minutes``. The pick and no memory are the run's
    result and always play; the others only show how much the choice was luck."""
    if not cfg.max_minutes or elapsed_s + design_s <= cfg.max_minutes * 60:
        return None
    return (
        f"not played on the test tasks: at the pick's {design_s / 60:.0f} minutes there it would end past "
        f"--max-minutes {cfg.max_minutes:g} ({elapsed_s / 60:.0f} minutes run)"
    )


SEED_SHARE = 0.25  # of --max-minutes, what the hand-built designs may take before the next is left out


def over_seed_share(spent_s: float, cfg: AlmaConfig, next_s: float = 0.0) -> str | None:
    """Why the next hand-built design is not played under ``--max-minutes`` (None: it is): the hand-built
    designs played so far, with the next one's first stage at the latest pace (``next_s``, see
    ``staged_s``), would take more than ``SEED_SHARE`` of the run's minutes. They are the comparison, not
    the search: on GraphWorld two of them that learn with the 0.5B took 28 minutes each for 8 tasks; on
    the held-out ``greenhouse``, counted without the next one's cost, four took 42 of 120 minutes and
    left the search one generation."""
    cap = SEED_SHARE * cfg.max_minutes * 60 if cfg.max_minutes else 0.0
    if not cfg.max_minutes or spent_s + next_s <= cap:
        return None
    then = f" and the next would take about {next_s / 60:.0f} more" if next_s else ""
    return (
        f"not played: the hand-built designs took {spent_s / 60:.0f} minutes{then}, past their share "
        f"({SEED_SHARE:.0%} of --max-minutes {cfg.max_minutes:g}, {cap / 60:.0f} minutes); the rest is the "
        "search's"
    )


SCREEN_SHARE = 0.1  # of --max-minutes, the most one generation's screening may take (a minute at least)


def screening_s(cfg: AlmaConfig) -> float | None:
    """Seconds a generation's screening may run under ``--max-minutes`` (None: no cap, it screens
    ``--genome-candidates``). The screening plays no model, but on a simulator such as ScienceWorld its
    256 candidates' probes took longer than the rest of a generation, and the cap then left one or two."""
    return max(60.0, SCREEN_SHARE * cfg.max_minutes * 60) if cfg.max_minutes else None


def found(entry: ArchiveEntry) -> str | None:
    """Stop once a discovered design beats no memory with its paired 95% interval above 0."""
    v = entry.vs_no_memory or {}
    ci = v.get("ci95") or [0.0, 0.0]
    if entry.origin != "meta" or entry.status != "ok" or not ci[0] > 0:
        return None
    return (
        f"stopped after generation {entry.generation}: {entry.name} ({entry.id}) beats no memory by "
        f"{v['mean']:+.3f}, 95% interval [{ci[0]:+.3f}, {ci[1]:+.3f}] on {v['n']} paired tasks (--until-found)"
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


class SpendCap:
    """``--max-cost`` checked after every episode as well: a generation spends most of its cost in
    episodes, so the search stops at the first one that reaches the cap (``BudgetReached``; the
    generation under way is not recorded and ``--resume`` plays it again) instead of overrunning by a
    generation. Made once the archive is loaded: its cost so far plus what the clients spend from now."""

    def __init__(
        self,
        cap: float | None,
        meter: UsageMeter,
        archive: Archive,
        run_dir: Path,
        then: Callable[[Any], None] | None = None,
    ) -> None:
        self.cap, self.meter, self.run_dir, self.then = cap, meter, run_dir, then
        self.before = float(archive_usage(archive)["cost_usd"]) - float(meter.now()["cost_usd"])

    def spent(self) -> float:
        return self.before + float(self.meter.now()["cost_usd"])

    def __call__(self, record: Any) -> None:
        if self.then is not None:
            self.then(record)
        if self.cap is not None and (spent := self.spent()) >= self.cap:
            raise BudgetReached(
                f"stopped during a generation: the run has cost ${spent:.4f}, reaching --max-cost "
                f"${self.cap:g}. The archive is saved in {self.run_dir} (the generation under way is not "
                f"recorded); to continue, raise the budget: atlas run --resume {self.run_dir} --max-cost <dollars>"
            )


__all__ = [
    "MAX_FAILED_ITERATIONS",
    "OUT_OF_TIME",
    "SCREEN_SHARE",
    "SpendCap",
    "generation_s",
    "no_time_to_test",
    "over_cost",
    "over_time",
    "screening_s",
    "seed_out_of_time",
    "too_many_failures",
]
