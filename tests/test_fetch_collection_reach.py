"""scripts/fetch_collection_reach.py on committed fetch runs: what a memory of the no-memory agent's first
N games could know of a house, beside what its true habits say."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "fetch_collection_reach.py"
RUNS = ROOT / "tests" / "fixtures" / "runs"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=300)


def test_three_games_teach_half_the_habits_of_a_four_thing_house_and_six_teach_all():
    out = run(str(RUNS / "fetch-four-things"))
    assert out.returncode == 0, out.stderr
    assert "the true habits name the object's room in 9/12" in out.stdout
    assert (
        "memory of  3 games: 2/4 habits right (4 things seen); names the object's room in 4/12" in out.stdout
    )
    assert (
        "memory of  6 games: 4/4 habits right (4 things seen); names the object's room in 9/12" in out.stdout
    )


def test_all_deployment_tasks_scored_leaves_room_only_for_the_collection():
    out = run(str(RUNS / "fetch-four-things"), "--held", "24", "--games", "3,6")
    assert out.returncode == 0, out.stderr
    assert "names the object's room in 7/24" in out.stdout
    assert "memory of  6 games: not enough games before the scored ones" in out.stdout


def test_a_run_that_is_not_fetch_is_refused():
    out = run(str(RUNS / "demo"))
    assert out.returncode != 0 and "not a fetch task" in out.stderr
