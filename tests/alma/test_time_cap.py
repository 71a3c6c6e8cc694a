"""Whether a search under ``--max-minutes`` starts another generation (``too_late``), with the timings
of a 120-minute TextWorld ``fetch`` search: no memory took 845 s, ``trajectory_retrieval`` 966 s, the
design of generation 2 459 s, and the first two generations 1,053 s and 1,711 s."""

from __future__ import annotations

from pathlib import Path

import pytest

from atlas.alma.search.held_out import reserve_s, too_late
from atlas.alma.state.archive import Archive, ArchiveEntry
from atlas.alma.state.config import AlmaConfig

SRC = "def update(memory, episode, tools):\n    pass\n\n\ndef recall(memory, task, tools):\n    return ''\n"
CFG = AlmaConfig.build(env="textworld", episodes=3, deploy_seeds=8, max_minutes=120)


def _entry(i: int, name: str, origin: str, score: float, seconds: float) -> ArchiveEntry:
    return ArchiveEntry(
        id=f"d-{i:04d}",
        name=name,
        origin=origin,
        normalized_score=score,
        metadata={"eval_duration_s": seconds},
    )


def _fetch_run(*, found: bool = True) -> Archive:
    arch = Archive()
    arch.baseline = {"score": 0.444, "per_task": []}
    arch.add(_entry(1, "no_memory", "baseline", 0.0, 845.5), SRC)
    arch.add(_entry(2, "trajectory_retrieval", "baseline", -0.150, 966.2), SRC)
    arch.iterations = [{"generation": 1, "duration_s": 1053.5}]
    if found:
        arch.add(_entry(4, "recombine-d-0004", "meta", 0.221, 459.5), SRC)
        arch.iterations.append({"generation": 2, "duration_s": 1711.5})
    return arch


def _at(arch: Archive, minutes: float) -> Archive:
    arch.clock.earlier_s = minutes * 60
    return arch


def test_a_generation_that_would_end_in_the_test_phases_time_is_not_started():
    # The test phase keeps time for the pick at the designs' pace (the median of 966 s and 460 s) and
    # for no memory at its own (845 s), 26 minutes (the designs after the pick play only in what is left
    # then); generation 3 takes about 23 (the median so far).
    assert reserve_s(_fetch_run(), CFG, 24) == pytest.approx((966.2 + 459.5) / 2 + 845.5)
    assert too_late(_at(_fetch_run(), 30), CFG, 3, 24, Path("run")) is None
    why = too_late(_at(_fetch_run(), 76), CFG, 3, 24, Path("run"))
    assert why and "stopped before generation 3" in why and "a generation takes about 23" in why
    assert "keeping 26.0 for the held-out test tasks" in why and "--resume run --max-minutes" in why


def test_no_memory_keeps_its_own_pace_in_the_test_phase():
    # On greenhouse no memory played its 27 episodes in 179 s and the design in 1,146: keeping the
    # design's pace for no memory too kept 57 minutes where the test phase took 9, and the run stopped
    # after one generation at minute 53 of 120.
    arch = Archive()
    arch.baseline = {"score": 0.0, "per_task": []}
    arch.add(_entry(1, "no_memory", "baseline", 0.0, 179.2), SRC)
    arch.add(_entry(3, "mutate-d-0003", "meta", 0.108, 1145.5), SRC)
    arch.iterations = [{"generation": 1, "duration_s": 1994.0}]
    cfg = AlmaConfig.build(env="greenhouse", episodes=3, deploy_seeds=8, max_minutes=120)
    assert reserve_s(arch, cfg, 24) == pytest.approx(1145.5 + 179.2)
    assert too_late(_at(arch, 43.9), cfg, 2, 24, Path("run")) is None


def test_before_anything_beats_no_memory_only_the_generation_is_counted():
    # Nothing to confirm yet: no test time is kept, so a slow environment still gets its generations.
    assert reserve_s(_fetch_run(found=False), CFG, 24) == 0.0
    assert too_late(_at(_fetch_run(found=False), 100), CFG, 2, 24, Path("run")) is None
    why = too_late(_at(_fetch_run(found=False), 103), CFG, 2, 24, Path("run"))
    assert why and "keeping" not in why and "a generation takes about 18" in why


def test_without_a_time_cap_every_generation_starts():
    cfg = AlmaConfig.build(env="textworld", episodes=3, deploy_seeds=8)
    assert too_late(_at(_fetch_run(), 10_000), cfg, 3, 24, Path("run")) is None


def test_the_first_generation_has_no_pace_to_go_by():
    arch = _at(_fetch_run(found=False), 119)
    arch.iterations = []
    assert too_late(arch, CFG, 1, 24, Path("run")) is None
