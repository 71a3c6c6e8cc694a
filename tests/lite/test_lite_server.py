"""The Lite tier end to end with a real server process on 127.0.0.1 that has no model: a session's
correction becomes a tip file, the prompt hook adds it (through the server, and from the files when
the server is gone), a person's edit or deletion counts at the next prompt; and a server killed with
SIGKILL while it learns a transcript learns it after a restart, exactly once."""

from __future__ import annotations

import os
import shutil
import signal
import stat
import sys
import time
from pathlib import Path

import pytest
from lite_helpers import SAMPLES, get_json, hook_input, run_hook, start_server

from atlas.memory.guidelines.tipfiles import read_tips

pytestmark = pytest.mark.slow

RELATED = "how do I run the tests?"
UNRELATED = "write a haiku"


def wait_for(predicate, timeout: float = 120, what: str = "the condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"{what} did not happen in {timeout} s")


def prompt(server_env: dict[str, str], project: Path, text: str) -> str:
    run = run_hook("prompt", hook_input("UserPromptSubmit", project, prompt=text), server_env)
    assert run.returncode == 0 and run.stderr == "", run.stderr
    return run.context()["additionalContext"] if run.stdout else ""


def test_a_correction_becomes_a_tip_file_that_the_prompts_follow(tmp_path):
    server = start_server(tmp_path, scripted=False, env_extra={"ATLAS_LITE_LEARNER": "rules"})
    try:
        assert get_json(server.url + "/hooks/health")["learner"] == "rules"
        project = tmp_path / "shop"
        project.mkdir()
        shutil.copy(SAMPLES / "make_test_correction.jsonl", project / "session.jsonl")
        env = server.hook_env()
        start = run_hook("session-start", hook_input("SessionStart", project, source="startup"), env)
        assert "richer tips need a model" in start.stderr  # said once, in one line
        assert len(start.stderr.strip().splitlines()) == 1
        run = run_hook("stop", hook_input("Stop", project), env)
        assert (run.returncode, run.stdout, run.stderr) == (0, "", "")
        server.wait_jobs(1)
        folder = project / ".atlas" / "tips"
        (tip,) = read_tips(folder)[0]
        assert tip.content == "Tests must be run with `make test`, never bare pytest."

        assert "`make test`" in prompt(env, project, RELATED)
        assert prompt(env, project, UNRELATED) == ""
        wait_for(lambda: read_tips(folder)[0][0].uses == 1, 10, "the count of uses")  # written in batches

        # a person edits the tip: the next prompt gets the new text
        assert tip.path is not None
        tip.path.write_text(tip.path.read_text().replace("never bare pytest", "never bare pytest or tox"))
        assert "never bare pytest or tox" in prompt(env, project, RELATED)
        # ... and deletes it: the next prompt gets nothing
        tip.path.unlink()
        assert prompt(env, project, RELATED) == ""
    finally:
        server.proc.terminate()
        server.proc.wait(timeout=15)

    # the server is gone: the hook reads the files itself
    from atlas.memory.guidelines.tipfiles import TipFile, write_tip

    write_tip(folder, TipFile("tip-2", "Run the tests with `make test`.", trigger="tests"))
    assert "`make test`" in prompt(env, project, RELATED)
    assert prompt(env, project, UNRELATED) == ""


def slow_agent(folder: Path, marker: Path) -> None:
    """A `claude` that says it started (its pid) and then takes its time: learning is under way."""
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / "claude"
    exe.write_text(
        f"#!{sys.executable}\nimport os, time\n"
        f"open({str(marker)!r}, 'w').write(str(os.getpid()))\ntime.sleep(300)\n"
    )
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)


def test_kill_9_while_learning_then_learned_once_after_restart(tmp_path):
    marker = tmp_path / "learning.pid"
    slow_agent(tmp_path / "bin", marker)
    path = f"{tmp_path / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"
    first = start_server(tmp_path, scripted=False, env_extra={"ATLAS_LITE_LEARNER": "claude", "PATH": path})
    project = tmp_path / "shop"
    project.mkdir()
    shutil.copy(SAMPLES / "make_test_correction.jsonl", project / "session.jsonl")
    env = first.hook_env()
    try:
        run = run_hook("stop", hook_input("Stop", project), env)
        assert (run.returncode, run.stderr) == (0, "")
        pid = int(wait_for(lambda: marker.exists() and marker.read_text(), what="learning"))
    finally:
        first.proc.send_signal(signal.SIGKILL)  # mid-way through learning the transcript
        first.proc.wait(timeout=15)
    os.kill(pid, signal.SIGKILL)  # the headless agent it had started
    jobs = first.home / "jobs"
    assert len(list(jobs.glob("*.json"))) == 1  # the job is still in the journal
    assert read_tips(project / ".atlas" / "tips") == ([], [])

    second = start_server(tmp_path, scripted=False, env_extra={"ATLAS_LITE_LEARNER": "rules"})
    try:
        second.wait_jobs(1)
        (tip,) = read_tips(project / ".atlas" / "tips")[0]
        assert "`make test`" in tip.content
        assert list(jobs.glob("*.json")) == []
        summary = get_json(second.url + "/hooks/health")["last_jobs"][-1]
        assert (summary["saved"], summary["duplicate"], summary["failed"]) == (2, 0, [])

        # the same transcript handed over again: nothing is learned twice
        run = run_hook("session-end", hook_input("SessionEnd", project, reason="logout"), second.hook_env())
        assert (run.returncode, run.stderr) == (0, "")
        second.wait_jobs(2)
        assert len(read_tips(project / ".atlas" / "tips")[0]) == 1
        summary = get_json(second.url + "/hooks/health")["last_jobs"][-1]
        assert (summary["saved"], summary["duplicate"]) == (0, 2)
        assert get_json(second.url + "/hooks/health")["pending"] == 0
    finally:
        second.proc.terminate()
        second.proc.wait(timeout=15)
