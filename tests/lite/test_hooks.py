"""The hook script driven exactly as Claude Code (or Codex) drives it, against a real ATLAS server:
what it prints, what it stores, and that nothing that goes wrong ever fails the hook."""

from __future__ import annotations

import json
import re
import shutil
import sys
import time
from pathlib import Path

import pytest
from lite_helpers import (
    CODEX_TIP,
    FIX_TIP,
    PUBLISH_TIP,
    SAMPLES,
    free_port,
    hook_input,
    load_hook_module,
    run_hook,
)

from atlas.memory.guidelines.transcripts import read_transcript

pytestmark = pytest.mark.slow


def one_warning(run) -> str:
    """The hook exited 0, printed nothing for the model and one warning line."""
    assert run.returncode == 0
    assert run.stdout == ""
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith("atlas: ")
    return lines[0]


@pytest.fixture
def project(tmp_path) -> Path:
    p = tmp_path / "shop"
    p.mkdir()
    return p


def test_session_start_names_the_projects_namespace(server, project):
    run = run_hook("session-start", hook_input("SessionStart", project, source="startup"), server.hook_env())
    assert run.returncode == 0 and run.stderr == ""
    out = run.context()
    namespace = load_hook_module().project_namespace(str(project))
    assert out["hookEventName"] == "SessionStart"
    assert f'namespace="{namespace}"' in out["additionalContext"]
    assert namespace.startswith("shop-") and len(namespace) <= 64


def test_prompt_adds_nothing_when_nothing_is_learned(server, project):
    data = hook_input("UserPromptSubmit", project, prompt="the test test_totals fails, fix it")
    run = run_hook("prompt", data, server.hook_env())
    assert (run.returncode, run.stdout, run.stderr) == (0, "", "")


async def test_session_end_learns_and_later_prompts_get_the_relevant_guideline(server, project):
    transcript = project / "session.jsonl"
    shutil.copy(SAMPLES / "claude_code_session.jsonl", transcript)
    env = server.hook_env()
    namespace = load_hook_module().project_namespace(str(project))

    run = run_hook("stop", hook_input("Stop", project, stop_hook_active=False), env)
    assert (run.returncode, run.stdout, run.stderr) == (0, "", "")
    assert run.seconds < 10  # the tips are extracted after the hook returned
    server.wait_jobs(1)

    related = hook_input(
        "UserPromptSubmit", project, prompt="tests/test_cart.py::test_totals fails, please fix the test"
    )
    run = run_hook("prompt", related, env)
    assert run.returncode == 0 and run.stderr == ""
    out = run.context()
    assert out["hookEventName"] == "UserPromptSubmit"
    assert FIX_TIP in out["additionalContext"]
    assert out["additionalContext"].startswith("Guidelines learned from earlier sessions")

    unrelated = hook_input("UserPromptSubmit", project, prompt="write a haiku about autumn leaves")
    run = run_hook("prompt", unrelated, env)
    assert (run.returncode, run.stdout, run.stderr) == (0, "", "")

    # another project sees none of it
    other = project.parent / "blog"
    other.mkdir()
    run = run_hook("prompt", {**related, "cwd": str(other)}, env)
    assert (run.returncode, run.stdout) == (0, "")

    # the same tips over MCP, through the official SDK client, with their provenance
    from mcp import ClientSession
    from mcp.client.streamable_http import streamablehttp_client

    ids = {t.id for t in read_transcript(transcript).trajectories}
    async with (
        streamablehttp_client(f"{server.url}/mcp") as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        got = await session.call_tool(
            "get_guidelines", {"task": "a unit test fails after a change", "namespace": namespace}
        )
        assert not got.isError, got.content
        found = json.loads(got.content[0].text)["guidelines"]
        fix = next(g for g in found if g["content"] == FIX_TIP)
        assert set(fix["source_trajectory_ids"]) <= ids
        listed = json.loads(
            (await session.call_tool("list_guidelines", {"namespace": namespace})).content[0].text
        )
        assert {FIX_TIP, PUBLISH_TIP} <= {g["content"] for g in listed["guidelines"]}

        # SessionEnd after the last Stop: the same turns again are skipped, nothing is learned twice
        run = run_hook("session-end", hook_input("SessionEnd", project, reason="prompt_input_exit"), env)
        assert (run.returncode, run.stderr) == (0, "")
        server.wait_jobs(2)
        again = json.loads(
            (await session.call_tool("list_guidelines", {"namespace": namespace})).content[0].text
        )
        assert again["count"] == listed["count"]

    # Codex: its Stop hook input names the rollout file; the same hook hands it over
    cli = project.parent / "cli-tool"
    cli.mkdir()
    rollout = project.parent / "rollout-2026-11-20T11-00-00-0199a1b2.jsonl"
    shutil.copy(SAMPLES / "codex_rollout.jsonl", rollout)
    data = hook_input("Stop", cli, transcript_path=str(rollout), turn_id="t1", model="gpt-5-codex")
    run = run_hook("stop", data, env)
    assert (run.returncode, run.stdout, run.stderr) == (0, "", "")
    server.wait_jobs(3)
    run = run_hook(
        "prompt", hook_input("UserPromptSubmit", cli, prompt="add a --dry-run option to the cli"), env
    )
    assert CODEX_TIP in run.context()["additionalContext"]


def test_malformed_transcript_one_warning(server, project):
    (project / "session.jsonl").write_bytes(b"\x00garbage\n{not json\n")
    line = one_warning(run_hook("stop", hook_input("Stop", project), server.hook_env()))
    assert "refused" in line and "no JSON line" in line


def test_no_transcript_path_one_warning(server, project):  # Codex may give null
    line = one_warning(run_hook("stop", hook_input("Stop", project, transcript_path=None), server.hook_env()))
    assert "names no transcript_path" in line


def test_missing_transcript_one_warning(server, project):
    line = one_warning(
        run_hook("session-end", hook_input("SessionEnd", project, reason="other"), server.hook_env())
    )
    assert "session.jsonl cannot be read" in line


def test_huge_transcript_one_warning_and_its_end_is_still_read(server, project):
    big = project / "session.jsonl"
    with big.open("wb") as fh:
        filler = b'{"type": "progress", "data": "' + b"x" * 1000 + b'"}\n'
        for _ in range(33_000):
            fh.write(filler)
        fh.write((SAMPLES / "claude_code_session.jsonl").read_bytes())
    line = one_warning(run_hook("stop", hook_input("Stop", project), server.hook_env()))
    assert re.search(r"transcript is 3[34] MB: only its last 32 MB are read$", line), line


@pytest.mark.parametrize("stdin", [b"", b"not json", b"[1, 2]", b'{"prompt": 3}'])
def test_bad_hook_input_never_fails(server, stdin):
    run = run_hook("prompt", stdin, server.hook_env())
    assert run.returncode == 0 and run.stdout == ""
    assert len(run.stderr.strip().splitlines()) <= 1


def test_server_down_one_warning_fast_and_the_transcript_waits(tmp_path, project):
    home = tmp_path / "home"
    env = {
        "PATH": "",
        "HOME": str(home),
        "ATLAS_LITE_URL": f"http://127.0.0.1:{free_port()}",
        "ATLAS_LITE_HOME": str(home),
        "ATLAS_LITE_AUTOSTART": "0",
    }
    # the prompt hook reads the project's tip files itself: none yet, so nothing, and no warning
    run = run_hook("prompt", hook_input("UserPromptSubmit", project, prompt="fix the test"), env)
    assert (run.returncode, run.stdout, run.stderr) == (0, "", "")

    shutil.copy(SAMPLES / "claude_code_session.jsonl", project / "session.jsonl")
    line = one_warning(run_hook("session-end", hook_input("SessionEnd", project, reason="logout"), env))
    assert "waits in" in line
    (job,) = (home / "pending").glob("*.json")
    assert json.loads(job.read_text())["transcript_path"] == str(project / "session.jsonl")

    # session-start with the server down and autostart off: says how to start it, still names the namespace
    run = run_hook("session-start", hook_input("SessionStart", project, source="startup"), env)
    assert run.returncode == 0 and "atlas mcp --transport streamable-http" in run.stderr
    assert "namespace" in run.context()["additionalContext"]


def test_session_start_starts_the_server_when_it_is_down(tmp_path, project):
    home = tmp_path / "home"
    record = tmp_path / "argv.json"
    fake = tmp_path / "fake_atlas.py"
    fake.write_text(f"import json, sys\nopen({str(record)!r}, 'w').write(json.dumps(sys.argv[1:]))\n")
    port = free_port()
    env = {
        "PATH": "",
        "HOME": str(home),
        "ATLAS_LITE_URL": f"http://127.0.0.1:{port}",
        "ATLAS_LITE_HOME": str(home),
        "ATLAS_LITE_ATLAS_CMD": f"{sys.executable} {fake}",
    }
    run = run_hook("session-start", hook_input("SessionStart", project, source="startup"), env)
    assert run.returncode == 0 and "starting it now" in run.stderr
    for _ in range(100):
        if record.exists() and record.read_text():
            break
        time.sleep(0.05)
    argv = json.loads(record.read_text())
    assert argv == [
        "mcp",
        "--transport",
        "streamable-http",
        "--port",
        str(port),
        "--path",
        str(home / "memory"),
    ]

    record.unlink()
    env["ATLAS_LITE_MODEL"] = "openai/gpt-4.1-mini"
    run_hook("session-start", hook_input("SessionStart", project, source="startup"), env)
    for _ in range(100):
        if record.exists() and record.read_text():
            break
        time.sleep(0.05)
    assert json.loads(record.read_text())[-2:] == ["--model", "openai/gpt-4.1-mini"]


def test_unknown_event_prints_usage_and_exits_0(server):
    run = run_hook("pre-tool-use", b"{}", server.hook_env())
    assert run.returncode == 0 and "usage: atlas_hook.py" in run.stderr


def test_requests_a_web_page_could_send_are_refused(server, project):
    import urllib.error
    import urllib.request

    transcript = project / "session.jsonl"
    shutil.copy(SAMPLES / "claude_code_session.jsonl", transcript)
    body = json.dumps({"transcript_path": str(transcript), "namespace": "web"}).encode()
    req = urllib.request.Request(
        f"{server.url}/hooks/ingest", data=body, headers={"Content-Type": "text/plain"}
    )
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(req, timeout=5)
    assert err.value.code == 403 and "application/json" in json.loads(err.value.read())["error"]


def test_requests_from_another_machine_are_refused(embedder, tmp_path):
    from starlette.testclient import TestClient

    from atlas.mcp_server import MemoryHub, create_server

    app = create_server(MemoryHub(tmp_path / "mem", embedder=embedder), hooks=True).streamable_http_app()
    with TestClient(app) as client:  # its requests come from the host "testclient", not loopback
        out = client.post("/hooks/ingest", json={"transcript_path": "/etc/passwd", "namespace": "x"})
    assert out.status_code == 403 and "this machine only" in out.json()["error"]
