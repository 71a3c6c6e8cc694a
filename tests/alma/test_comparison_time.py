"""Under ``--max-minutes`` the comparisons do not eat the test phase's time: a hand-built design stops
after a batch once the rest of its tasks and the test phase would end past the cap (``in_time``), and in
the test phase a design after the pick is played only while the pick's time there still fits (a run
past its cap: tests/alma/test_held_out.py)."""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any

from atlas.alma.search.budget import OUT_OF_TIME, no_time_to_test, seed_out_of_time
from atlas.alma.search.record import either
from atlas.alma.search.seeds import in_time
from atlas.alma.state.archive import Archive
from atlas.alma.state.config import AlmaConfig
from atlas.alma.state.staging import Verdict


def _config(**kw: Any) -> AlmaConfig:
    return AlmaConfig(env="scienceworld", episodes=3, deploy_seeds=8, concurrency=2, **kw)


def test_a_hand_built_design_stops_once_its_other_tasks_and_the_test_phase_would_not_fit():
    cfg, test_s = _config(max_minutes=120), 28 * 60.0  # 35 s an episode: the test phase about 28 minutes
    # ScienceWorld: after its first 8 tasks at 71 minutes, 16 more (9 minutes) and the test phase fit
    assert seed_out_of_time(cfg, 71 * 60, 35.0, 16, test_s) is None
    why = seed_out_of_time(cfg, 85 * 60, 35.0, 16, test_s)  # the next one, at 85 minutes, does not
    assert why is not None and why.startswith(OUT_OF_TIME)
    assert "16 other tasks" in why and "--max-minutes 120" in why and "85 minutes run" in why
    assert seed_out_of_time(_config(max_minutes=None), 10**6, 35.0, 16, test_s) is None
    assert seed_out_of_time(cfg, 10**6, 35.0, 0, test_s) is None, "nothing left to play"


def test_the_check_goes_by_the_designs_own_pace_and_the_run_clock():
    deployment = [object()] * 24

    def rec(run_s: float, cap: float | None) -> SimpleNamespace:
        archive = Archive()
        archive.clock.earlier_s = run_s
        return SimpleNamespace(
            config=_config(max_minutes=cap),
            archive=archive,
            collection_tasks=[1, 2, 3],
            deployment_tasks=deployment,
        )

    played, almost = [object()] * 8, 120 * 60 - 0.05
    checks = [in_time(rec(s, cap), test_s=0.0) for s, cap in ((almost, 120), (0.0, 120), (almost, None))]
    time.sleep(0.1)  # 11 episodes in 0.1 s at least: 16 more take 0.14 s, past the 0.05 s left
    late = checks[0](played)
    assert not late.go_on and late.reason.startswith(OUT_OF_TIME) and "16 other tasks" in late.reason
    assert checks[1](played).go_on, "two hours left"
    assert checks[2](played).go_on, "no cap"
    assert checks[0](deployment).go_on, "every task played"


def test_either_stops_where_the_first_stops_and_else_where_the_second_does():
    go, stop = Verdict(True, "can still beat"), Verdict(False, f"{OUT_OF_TIME}: late")
    assert either(None, None) is None
    check = either(lambda recs: go, lambda recs: stop)
    assert check is not None and check([]) is stop
    kept = either(lambda recs: go, lambda recs: Verdict(True, ""))
    assert kept is not None and kept([]) is go, "the staging rule's reason is kept"
    first = either(lambda recs: Verdict(False, "cannot win"), lambda recs: stop)
    assert first is not None and first([]).reason == "cannot win"


def test_a_design_after_the_pick_is_tested_only_while_the_picks_time_fits():
    cfg = _config(max_minutes=120)
    assert no_time_to_test(cfg, 100 * 60, 15 * 60) is None
    why = no_time_to_test(cfg, 110 * 60, 15 * 60)
    assert why is not None and "the pick's 15 minutes" in why and "110 minutes run" in why
    assert no_time_to_test(_config(max_minutes=None), 10**6, 15 * 60) is None
