"""Progress a person can follow when the output is not a terminal: plain, timestamped lines for
each design played, each generation and each headroom episode, and a line while a long phase runs."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import time

from atlas.alma.search.progress import PlainProgress, default_progress, elapsed
from scripted_provider import subprocess_env

STAMP = re.compile(r"^\d\d:\d\d:\d\d \+ *\d+[smh]")


def _atlas(args: list[str], cwd, *, stdout_path, stderr_path) -> int:
    """``atlas ARGS > stdout_path 2> stderr_path``: both outputs are files, not terminals."""
    with open(stdout_path, "w") as out, open(stderr_path, "w") as err:
        return subprocess.run(
            [sys.executable, "-m", "atlas.cli", *args],
            cwd=cwd,
            stdout=out,
            stderr=err,
            env=subprocess_env(COLUMNS="200"),
            timeout=600,
        ).returncode


def test_a_redirected_run_prints_a_line_per_design_and_per_generation(tmp_path):
    (tmp_path / "replies.json").write_text(json.dumps({"default": "look"}))
    args = ["run", "--env", "graphworld", "--rooms", "5", "--episodes", "1", "--deploy-seeds", "2"]
    args += ["--iterations", "2", "--model", "scripted:replies.json", "--run-dir", "runs/r"]
    assert _atlas(args, tmp_path, stdout_path=tmp_path / "log", stderr_path=tmp_path / "err") == 0
    log = (tmp_path / "log").read_text().splitlines()
    progress = [ln for ln in log if STAMP.match(ln)]
    played = [ln for ln in progress if "playing " in ln]
    scored = [ln for ln in progress if re.search(r"\+\s*\S+\s+(baseline|seed|gen \d)\s", ln)]
    # lines come before any design is scored, then one as each design starts and as it is scored
    assert scored and progress.index(scored[0]) >= 2 and any("started" in ln for ln in progress[:2])
    assert len(played) >= len(scored) - 2 >= 1  # generations whose design was invalid play nothing
    assert [re.search(r"gen (\d)", ln).group(1) for ln in scored if " gen " in ln] == ["1", "2"]
    assert any("baseline  no_memory" in ln for ln in scored)
    # the generation lines carry what was played, how it scored and how long it took
    assert all(re.search(r"d-\d{4}", ln) for ln in scored if " gen " in ln)


def test_a_redirected_headroom_prints_each_episode_on_standard_error_beside_its_json(tmp_path):
    (tmp_path / "replies.json").write_text(json.dumps({"default": "look"}))
    args = ["headroom", "--env", "graphworld", "--rooms", "5", "--tasks", "2"]
    args += ["--model", "scripted:replies.json", "--json"]
    assert _atlas(args, tmp_path, stdout_path=tmp_path / "out", stderr_path=tmp_path / "err") == 0
    json.loads((tmp_path / "out").read_text())  # standard output holds the JSON object only
    lines = [ln for ln in (tmp_path / "err").read_text().splitlines() if STAMP.match(ln)]
    episodes = [ln for ln in lines if " episode " in ln]
    assert len(episodes) == 6 and "6/6" in episodes[-1]
    assert {c for ln in episodes for c in ("none", "learnable", "full") if f" {c} " in ln} == {
        "none",
        "learnable",
        "full",
    }
    assert "score 0.000" in episodes[0]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_long_phase_says_what_it_plays_and_how_far_it_got():
    out, clock = io.StringIO(), Clock()
    progress = PlainProgress(out, every_s=60, clock=clock)
    progress.start(3)
    progress.design("cheatsheet", 27)
    progress.episode()
    assert "cheatsheet" not in out.getvalue().splitlines()[-1].split("playing")[0]
    clock.now = 61.0
    progress.episode()
    last = out.getvalue().splitlines()[-1]
    assert "cheatsheet: 2/27 episodes, 1m01s on it" in last and "+ 1m01s" in last
    progress.episode()  # the next one within the minute says nothing
    assert out.getvalue().splitlines()[-1] == last
    for _ in range(25):
        progress.episode()
    clock.now = 200.0
    assert "generation 1 of 3 under way" in progress.status()
    progress.stop()


def test_a_design_that_stopped_early_is_no_longer_said_to_be_playing():
    """A staged design stops after 8 of its 27 episodes: the next heartbeat names the generation, not
    the design."""
    out, clock = io.StringIO(), Clock()
    progress = PlainProgress(out, every_s=60, clock=clock)
    progress.start(3)
    progress.design("mutate-d-0003", 27)
    for _ in range(8):
        progress.episode()
    assert "mutate-d-0003: 8/27" in progress.status()
    progress.design_done()
    clock.now = 300.0
    assert "mutate-d-0003" not in progress.status()
    assert "generation 1 of 3 under way" in progress.status()
    progress.stop()


def test_a_phase_with_no_episode_still_prints_a_line_every_interval():
    out = io.StringIO()
    progress = PlainProgress(out, every_s=0.2)
    progress.start(2)
    try:
        deadline = time.monotonic() + 30
        while "under way" not in out.getvalue() and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        progress.stop()
    assert "generation 1 of 2 under way" in out.getvalue()


def test_the_library_prints_plain_lines_unless_quiet():
    assert isinstance(default_progress(False), PlainProgress)
    assert not isinstance(default_progress(True), PlainProgress)
    assert [elapsed(s) for s in (5, 62, 3725)] == ["5s", "1m02s", "1h02m"]
