"""scripts/highest_reached.py: the highest score each logged deployment episode reached, replayed in the
run's environment. On the committed GraphWorld run, where a task scores only when it is done, it is the
score each episode ended with, as the run's archive recorded it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "highest_reached.py"
RUN = ROOT / "tests" / "fixtures" / "runs" / "graphworld-genome"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=300)


def test_the_highest_reached_is_the_final_score_where_a_task_scores_only_when_done():
    out = run(f"{RUN}:d-0004", f"{RUN}:d-0001")
    assert out.returncode == 0, out.stderr
    archive = json.loads((RUN / "archive.json").read_text())
    for design, line in zip(["d-0004", "d-0001"], out.stdout.splitlines(), strict=False):
        entry = next(e for e in archive["entries"] if e["id"] == design)
        mean = float(line.split(", mean ")[1].split()[0])
        assert abs(mean - entry["deployment_score"]) < 1e-3 and "over 24 episodes" in line
    assert out.stdout.splitlines()[2].endswith("(paired, 24 tasks)")


def test_a_malformed_design_argument_is_named():
    out = run(str(RUN))
    assert out.returncode != 0 and "expected RUN:DESIGN" in out.stderr
