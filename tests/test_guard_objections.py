"""scripts/guard_objections.py on the committed GraphWorld discovery run: the logged steps today's loop
guard would have taken off the choices (the run's own guard objected to none of them)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "guard_objections.py"
RUN = ROOT / "tests" / "fixtures" / "runs" / "graphworld-genome"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=300)


def test_steps_taken_twice_before_from_the_same_state_are_counted():
    out = run(str(RUN))
    assert out.returncode == 0, out.stderr
    rows = {line.split()[0]: line.split()[1:] for line in out.stdout.splitlines()[1:]}
    # episodes, solved, steps, objected, objected in unsolved episodes
    assert rows["d-0001"] == ["24", "1", "466", "35", "35"]
    assert rows["d-0004"] == ["24", "13", "344", "6", "6"]


def test_a_packed_folder_without_logs_says_how_to_unpack(tmp_path):
    (tmp_path / "config.json").write_text((RUN / "config.json").read_text())
    out = run(str(tmp_path))
    assert out.returncode != 0 and "raw.tar.xz" in out.stderr
