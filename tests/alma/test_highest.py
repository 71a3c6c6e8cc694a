"""How far episodes got: the highest score after any step, paired with no memory."""

from __future__ import annotations

import pytest

from atlas.alma.state.archive import TaskResult
from atlas.alma.state.highest import collection_reached, highest_reached, highest_score
from atlas.core.types import Step, Task, Trajectory


def _played(scores: list[float | None], final: float) -> Trajectory:
    steps = [Step(action=f"a{i}()", score=s) for i, s in enumerate(scores)]
    return Trajectory(task=Task(id="t", description="Turn the sample green."), steps=steps, score=final)


def test_the_highest_score_is_the_best_after_any_step_and_none_when_unrecorded():
    assert highest_score(_played([0.0, 0.25, 0.5, 0.0], 0.0)) == 0.5  # advanced, then ruined
    assert highest_score(_played([0.0, 0.0], 1.0)) == 1.0
    assert highest_score(_played([None, None], 0.0)) is None
    assert highest_score(_played([], 0.0)) is None


def test_highest_reached_pairs_the_tasks_both_recorded():
    design = [
        TaskResult(task_id="a", score=0.0, highest=0.5),
        TaskResult(task_id="b", score=0.25, highest=0.25),
        TaskResult(task_id="c", score=0.0),  # not recorded: left out
        TaskResult(task_id="a", phase="collection", score=0.0, highest=1.0),  # not a deployment task
    ]
    base = [
        {"task_id": "a", "highest": 0.0},
        {"task_id": "b", "highest": 0.25},
        {"task_id": "c", "highest": 0.0},
    ]
    out = highest_reached(design, base)
    assert out is not None
    assert out["deployment"] == pytest.approx(0.375) and out["no_memory"] == pytest.approx(0.125)
    assert out["difference"]["n"] == 2 and out["difference"]["mean"] == pytest.approx(0.25)
    lo, hi = out["difference"]["ci95"]
    assert lo <= 0.25 <= hi
    assert highest_reached([TaskResult(task_id="a", score=0.0)], base) is None


def test_collection_reached_is_the_mean_highest_of_collection_games_only():
    games = [
        TaskResult(task_id="a", phase="collection", score=0.0, highest=0.2),  # advanced, then undone
        TaskResult(task_id="b", phase="collection", score=0.1),  # no step recorded a score: the final one
        TaskResult(task_id="c", phase="deployment", score=1.0, highest=1.0),
    ]
    assert collection_reached(games) == pytest.approx(0.15)
    assert collection_reached(games[2:]) is None
