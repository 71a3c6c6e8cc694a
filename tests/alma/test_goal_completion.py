"""Task and scenario goal completion on known per-task results."""

from __future__ import annotations

import pytest

from atlas.alma.state.archive import ArchiveEntry, TaskResult
from atlas.alma.state.goal_completion import goal_completion, scenario_of, wilson


def results(outcomes: dict[str, list[bool]]) -> list[dict]:
    return [
        {"task_id": f"{s}-{i}", "scenario": s, "success": ok}
        for s, oks in outcomes.items()
        for i, ok in enumerate(oks)
    ]


def test_a_scenario_counts_only_when_every_variant_succeeds():
    gc = goal_completion(results({"A": [True, True, True], "B": [True, True, False], "C": [False] * 3}))
    assert (gc.tgc.successes, gc.tgc.n) == (5, 9)
    assert (gc.sgc.successes, gc.sgc.n) == (1, 3)
    assert gc.tgc.rate == pytest.approx(5 / 9) and gc.sgc.rate == pytest.approx(1 / 3)


def test_consistent_agent_vs_inconsistent_agent_same_tgc_different_sgc():
    consistent = goal_completion(results({"A": [True] * 3, "B": [True] * 3, "C": [False] * 3}))
    scattered = goal_completion(
        results({"A": [True, True, False], "B": [True, False, True], "C": [False, True, True]})
    )
    assert consistent.tgc.rate == scattered.tgc.rate == pytest.approx(6 / 9)
    assert consistent.sgc.rate == pytest.approx(2 / 3) and scattered.sgc.rate == 0.0


def test_tasks_without_a_scenario_are_their_own_so_sgc_equals_tgc():
    items = [TaskResult(task_id=f"t{i}", success=i % 2 == 0) for i in range(6)]
    gc = goal_completion(items)
    assert gc.tgc.to_dict() == gc.sgc.to_dict()
    assert (gc.tgc.successes, gc.tgc.n) == (3, 6)


def test_wilson_interval_matches_the_textbook_values():
    assert wilson(0, 10) == (0.0, pytest.approx(0.277533, abs=1e-6))
    assert wilson(10, 10) == (pytest.approx(0.722467, abs=1e-6), 1.0)
    lo, hi = wilson(5, 9)
    assert (lo, hi) == (pytest.approx(0.266651, abs=1e-6), pytest.approx(0.811221, abs=1e-6))
    assert wilson(0, 0) == (0.0, 0.0)
    assert goal_completion([]).to_dict()["sgc"] == {"rate": 0.0, "ci95": [0.0, 0.0], "successes": 0, "n": 0}


def test_scenario_of_reads_the_tasks_metadata():
    assert scenario_of({"scenario": "checkout", "family": 3}) == "checkout"
    assert scenario_of({"family": 0, "seed": 7}) == "0"
    assert scenario_of({"seed": 7}) is None
    assert scenario_of({"family": True}) is None


def test_archive_entries_written_before_scenarios_still_load():
    entry = ArchiveEntry.model_validate(
        {"id": "d-1", "name": "x", "per_task": [{"task_id": "t", "phase": "deployment", "success": True}]}
    )
    assert entry.per_task[0].scenario is None
    assert goal_completion(entry.per_task).sgc.n == 1


def test_the_text_atlas_eval_prints():
    gc = goal_completion(results({"A": [True, True], "B": [True, False]}))
    assert gc.text() == (
        "task goal completion 75% [30%, 95%] (3/4), scenario goal completion 50% [9%, 91%] (1/2)"
    )


def test_the_headroom_table_shows_both_rates():
    from rich.console import Console

    from atlas.alma.evaluate.advice_headroom import HeadroomEpisode, HeadroomResult
    from atlas.cli.output import headroom_table

    def ep(task: str, scenario: str, condition: str, ok: bool) -> HeadroomEpisode:
        return HeadroomEpisode(task, condition, ok, float(ok), 3, 3, 0, 0.1, scenario=scenario)

    outcomes = {"none": [True, False, True, True], "learnable": [True, True, True, True]}
    episodes = {
        c: [ep(f"t{i}", "AB"[i // 2], c, ok) for i, ok in enumerate(oks)] for c, oks in outcomes.items()
    }
    result = HeadroomResult("scripted", "graphworld", [f"t{i}" for i in range(4)], episodes)
    data = result.to_dict()["conditions"]
    assert data["none"]["tgc"]["successes"] == 3 and data["none"]["sgc"]["successes"] == 1
    assert data["learnable"]["sgc"] == {"rate": 1.0, "ci95": [0.34238, 1.0], "successes": 2, "n": 2}
    console = Console(width=200, record=True)
    console.print(headroom_table(result))
    text = console.export_text()
    assert "SGC [95% CI]" in text and "50% [9%, 91%] of 2" in text and "100% [34%, 100%] of 2" in text
