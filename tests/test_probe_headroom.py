"""scripts/probe_headroom.py: the advice probe's none / learnable / full conditions on real GraphWorld
tasks (no LLM), paired over tasks; a bad environment or parameter is named and nothing runs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "probe_headroom.py"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=300)


def test_learnable_advice_steers_the_probe_on_graphworld():
    out = run("--env", "graphworld", "--param", "rooms=6", "--tasks", "6", "--seed", "3")
    assert out.returncode == 0, out.stderr
    solved = {m[0]: int(m[1]) for m in re.findall(r"(none|learnable|full)\s+solved\s+(\d+)/6", out.stdout)}
    assert solved["none"] == 0 and solved["learnable"] >= 4 and solved["full"] >= 4, out.stdout
    assert re.search(r"learnable − none: \+0\.\d+, 95% CI \[\+0\.\d+, \+\d\.\d+\] over 6 tasks", out.stdout)


def test_bad_environment_and_parameter_are_named():
    out = run("--env", "graphworld", "--param", "rooms")
    assert out.returncode == 2 and "NAME=VALUE, got 'rooms'" in out.stderr
    out = run("--env", "no_such_world")
    assert out.returncode == 2 and "no_such_world" in out.stderr
