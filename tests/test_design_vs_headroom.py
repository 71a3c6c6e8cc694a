"""scripts/design_vs_headroom.py on the committed seeded run and the 24-task headroom: the paired
difference is printed, and a file that is not headroom episodes is named with its line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "design_vs_headroom.py"
RUN = ROOT / "tests" / "fixtures" / "runs" / "graphworld-seed"
EPISODES = ROOT / "tests" / "fixtures" / "runs" / "graphworld-headroom" / "episodes.jsonl"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=120)


def test_the_seed_design_against_the_learnable_advice_on_the_same_tasks():
    out = run(str(RUN), "graphworld_seed", str(EPISODES))
    assert out.returncode == 0, out.stderr
    assert "on 24 shared tasks; learnable − graphworld_seed: +0.006 [-0.014, +0.034]" in out.stdout


def test_bad_input_is_named(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task_id": "t", "condition": "learnable", "score": 1.0}\nnot json\n')
    out = run(str(RUN), "graphworld_seed", str(bad))
    assert out.returncode != 0 and f"{bad}:2 is not an episode record" in out.stderr
    missing = run(str(RUN), "no_such_design", str(EPISODES))
    assert missing.returncode != 0 and "no evaluated design named 'no_such_design'" in missing.stderr
