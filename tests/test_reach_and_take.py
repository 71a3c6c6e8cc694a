"""scripts/reach_and_take.py on the committed GraphWorld discovery run: per design, the deployment
episodes in which an action naming the goal was listed, and how often the agent took it then."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "reach_and_take.py"
RUN = ROOT / "tests" / "fixtures" / "runs" / "graphworld-genome"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=300)


def test_counts_replayed_from_the_runs_episodes():
    out = run(str(RUN), "d-0001", "d-0004", "--min-words", "1")
    assert out.returncode == 0, out.stderr
    rows = {line.split()[0]: line.split()[1:] for line in out.stdout.splitlines()[1:]}
    # no memory: 24 episodes, 23 with a goal-naming action in reach, 1 solved; 95 of 240 such turns taken
    assert rows["d-0001"] == ["24", "23", "1", "240", "95", "0.40"]
    assert rows["d-0004"] == ["24", "24", "13", "156", "86", "0.55"]


def test_a_design_without_episodes_is_named():
    out = run(str(RUN), "d-9999")
    assert out.returncode != 0 and "no episodes of design 'd-9999'" in out.stderr
