"""scripts/advice_adherence.py on committed GraphWorld runs: how often the agent took the action the
advice ranked first, and whether the advice probe, given the same advice, solves the same tasks."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "advice_adherence.py"
RUNS = ROOT / "tests" / "fixtures" / "runs"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=300)


def rows(out: str) -> dict[str, list[str]]:
    return {line.split()[0]: line.split()[1:] for line in out.splitlines()[1:] if line.startswith("d-")}


def test_counts_replayed_from_the_runs_episodes():
    out = run(str(RUNS / "graphworld-genome"), "d-0001", "d-0002", "d-0004", "--guard", "plain")
    assert out.returncode == 0, out.stderr
    got = rows(out.stdout)
    assert "d-0001     no deployment episode was given advice" in out.stdout  # no memory
    # trajectory retrieval's advice names no listed action as a rule the matcher can use
    assert got["d-0002"] == ["24", "0", "-", "1", "0", "23"]
    # the discovered design: 238 advised turns, the agent took the advised action at half of them;
    # the probe following the same advice solves 18 tasks (its loop guard lets a walk onward go on), the
    # agent 13, and they agree on 15
    assert got["d-0004"] == ["24", "238", "0.50", "13", "18", "15"]
    assert "at 118 of 238 advised turns (0.50)" in out.stdout
    # where nothing was advised and a listed action named the goal's thing, how often the agent took one
    assert "in reach, d-0001: took an action naming the goal's thing at 95 of 240 turns" in out.stdout
    assert "in reach, d-0004: took an action naming the goal's thing at 9 of 23 turns" in out.stdout


def test_a_design_that_the_agent_followed_throughout():
    out = run(str(RUNS / "demo"), "d-0003")
    assert out.returncode == 0, out.stderr
    assert rows(out.stdout)["d-0003"] == ["6", "37", "1.00", "5", "5", "6"]


def test_a_design_without_episodes_is_named():
    out = run(str(RUNS / "demo"), "d-9999")
    assert out.returncode != 0 and "no episodes of design 'd-9999'" in out.stderr


def test_the_guard_of_the_agent_that_played(tmp_path):
    """Episodes the agent played with the loop guard that lets a walk onward go on (fetch, seed 2024):
    replayed with that guard, the agent took the advised action at all but one advised turn it was played
    with; replayed with the guard before it, the third step up a corridor reads as a loop, and the agent
    seems to have passed the advice over at 22 turns. Six turns more are advised than were played: a
    listed 'take <another thing>' made the search plan yield to the goal 'Find the key and take it.' then
    (the agent chose as without memory); the goal's verb is no thing in reach now, so the plan's step is
    advised there, and the agent had taken it at one."""
    folder = ROOT / "docs" / "results" / "eval-fetch-sighted-route-seeds" / "seed2024-off-map"
    with tarfile.open(folder / "raw.tar.xz") as raw:
        logs = [m for m in raw.getmembers() if m.name.startswith("logs/d-0002")]
        raw.extractall(tmp_path, members=logs)  # only the logs/ files of one design
    shutil.copy(folder / "config.json", tmp_path)
    onward = run(str(tmp_path), "d-0002", "--guard", "onward")
    plain = run(str(tmp_path), "d-0002", "--guard", "plain")
    assert onward.returncode == 0 and plain.returncode == 0, onward.stderr + plain.stderr
    # the probe plays with today's loop guard, which lets a repeat never taken from this state walk on
    assert rows(onward.stdout)["d-0002"] == ["24", "246", "0.98", "13", "15", "20"]
    assert "at 240 of 246 advised turns" in onward.stdout
    assert "in reach, d-0002: took an action naming the goal's thing at 15 of 24 turns" in onward.stdout
    assert "at 217 of 239 advised turns" in plain.stdout


def test_the_episodes_in_which_the_guard_held_the_advised_action_off():
    """With the agent's own guard, the discovered GraphWorld design's advice named an action the guard
    took off the choices in 2 of its 24 episodes (a move that would have gone round again)."""
    out = run(str(RUNS / "graphworld-genome"), "d-0004")
    assert out.returncode == 0, out.stderr
    assert (
        "held off, d-0004: the guard took the action the advice ranked first off the choices in 2 of 24"
        in (out.stdout)
    )
