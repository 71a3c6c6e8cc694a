"""`atlas guidelines ingest` end to end (real Chroma and embedder, a scripted model), and the jobs hooks
leave while the server is down."""

from __future__ import annotations

import json
import logging

from lite_helpers import FIX_TIP, PUBLISH_TIP, REPLIES, SAMPLES
from typer.testing import CliRunner

from atlas.cli import app

CLAUDE = SAMPLES / "claude_code_session.jsonl"


def run(*args: str):
    return CliRunner().invoke(app, list(args))


def test_ingest_learns_each_turn_once(tmp_path):
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps(REPLIES))
    common = ["--path", str(tmp_path / "store"), "--namespace", "shop", "--model", f"scripted:{replies}"]
    first = run("guidelines", "ingest", str(CLAUDE), *common, "--json")
    assert first.exit_code == 0, first.output
    results = json.loads(first.stdout)
    assert [r["status"] for r in results] == ["processed", "processed"]
    assert [r["outcome"] for r in results] == ["recovery", "failure"]
    listed = run("guidelines", "list", "--path", str(tmp_path / "store"), "--namespace", "shop", "--json")
    contents = {g["content"] for g in json.loads(listed.stdout)}
    assert {FIX_TIP, PUBLISH_TIP} <= contents

    again = run("guidelines", "ingest", str(CLAUDE), *common, "--json")
    assert [r["status"] for r in json.loads(again.stdout)] == ["duplicate", "duplicate"]


def test_dry_run_shows_tool_calls_errors_and_outcomes_without_a_model(tmp_path):
    out = run("guidelines", "ingest", str(SAMPLES / "codex_rollout.jsonl"), "--dry-run", "--json")
    assert out.exit_code == 0, out.output
    (traj,) = json.loads(out.stdout)
    assert [s["tool"] for s in traj["steps"]] == ["shell", "apply_patch", "shell"]
    assert [s["error"] is not None for s in traj["steps"]] == [True, False, False]
    assert traj["success"] is True and traj["metadata"]["source"] == "codex"
    text = run("guidelines", "ingest", str(CLAUDE), "--dry-run")
    assert "success, 4 tool call(s), 1 error(s)" in text.stdout
    assert "failure, 1 tool call(s), 1 error(s)" in text.stdout
    assert not (tmp_path / ".atlas").exists()


def test_ingest_errors_say_how_to_fix(tmp_path):
    missing = run("guidelines", "ingest", str(tmp_path / "nope.jsonl"), "--dry-run")
    assert missing.exit_code != 0 and "check the path" in missing.output
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"a": 1}\n{"b": 2}\n')
    out = run("guidelines", "ingest", str(bad), "--dry-run")
    assert out.exit_code != 0 and "--format openai" in out.output
    fmt = run("guidelines", "ingest", str(CLAUDE), "--format", "cursor", "--dry-run")
    assert fmt.exit_code != 0 and "format: must be one of" in fmt.output


async def test_jobs_left_while_the_server_was_down_are_learned_on_start(tmp_path, embedder, caplog):
    from atlas.infra.llm import ScriptedLLM
    from atlas.mcp_hooks import IngestQueue, drain_pending
    from atlas.mcp_server import MemoryHub
    from guideline_doubles import auto_responder

    pending = tmp_path / "pending"
    pending.mkdir()
    (pending / "s1.json").write_text(json.dumps({"transcript_path": str(CLAUDE), "namespace": "shop-1"}))
    (pending / "s2.json").write_text(
        json.dumps({"transcript_path": str(tmp_path / "gone.jsonl"), "namespace": "x"})
    )
    (pending / "s3.json").write_text("{broken")
    hub = MemoryHub(tmp_path / "mem", llm=ScriptedLLM(auto_responder()), embedder=embedder)
    queue = IngestQueue(hub)
    with caplog.at_level(logging.WARNING, logger="atlas.mcp_hooks"):
        assert await drain_pending(queue, pending) == 1
        await queue.join()
    assert list(pending.iterdir()) == []  # taken or dropped, never retried forever
    assert "gone.jsonl" in caplog.text and "s3.json dropped" in caplog.text
    (summary,) = list(queue.done)
    assert {k: summary[k] for k in ("namespace", "saved", "duplicate", "failed", "learner")} == {
        "namespace": "shop-1",
        "saved": 2,
        "duplicate": 0,
        "failed": [],
        "learner": "model",
    }
    assert hub.bank("shop-1").store.count() > 0


async def test_a_turn_that_keeps_failing_is_left_for_reprocess(tmp_path, embedder):
    from atlas.infra.llm import ScriptedLLM
    from atlas.mcp_hooks import MAX_ATTEMPTS, IngestQueue, Job
    from atlas.mcp_server import MemoryHub
    from atlas.memory.guidelines.transcripts import read_transcript

    hub = MemoryHub(tmp_path / "mem", llm=ScriptedLLM(lambda messages, **kw: "{}"), embedder=embedder)
    queue = IngestQueue(hub)
    (fix, _) = read_transcript(CLAUDE).trajectories
    for _ in range(MAX_ATTEMPTS + 1):  # a Stop after every turn hands the same turn over again
        queue.put(Job(str(CLAUDE), "shop"), [fix])
        await queue.join()
    reasons = [job["failed"][0]["reason"] for job in queue.done]
    assert all("stage failed" in r for r in reasons[:MAX_ATTEMPTS])
    assert "reprocess" in reasons[-1]
    assert hub.bank("shop").store.trajectory(fix.id)["attempts"] == MAX_ATTEMPTS


async def test_turns_are_on_disk_before_extraction_so_a_stopped_server_loses_nothing(tmp_path, embedder):
    from atlas.infra.llm import ScriptedLLM
    from atlas.mcp_hooks import IngestQueue, ingest
    from atlas.mcp_server import MemoryHub
    from atlas.memory.guidelines import GuidelineBank
    from guideline_doubles import auto_responder

    hub = MemoryHub(tmp_path / "mem", llm=ScriptedLLM(auto_responder()), embedder=embedder)
    queue = IngestQueue(hub)
    reply = await ingest(queue, {"transcript_path": str(CLAUDE), "namespace": "shop"})
    assert reply["queued"] == 2 and reply["format"] == "claude-code"
    assert queue._worker is not None
    queue._worker.cancel()  # the server stops before any tip is extracted
    waiting = hub.bank("shop").unprocessed()
    assert [(w["reason"], w["attempts"]) for w in waiting] == [("queued", 0), ("queued", 0)]

    later = GuidelineBank.open(
        tmp_path / "mem", namespace="shop", llm=ScriptedLLM(auto_responder()), embedder=embedder
    )
    results = await later.areprocess()
    assert [r.status for r in results] == ["processed", "processed"]
    assert later.unprocessed() == []


def test_project_namespace_is_the_hooks_namespace(tmp_path):
    from lite_helpers import load_hook_module

    from atlas.memory.guidelines.config import check_namespace, project_namespace

    hook = load_hook_module()
    for name in ("shop", "my project (copy)", "ünïcode-ñame", "x" * 90, "---"):
        folder = tmp_path / name
        folder.mkdir()
        assert project_namespace(str(folder)) == hook.project_namespace(str(folder))
        check_namespace(project_namespace(str(folder)))
    a, b = tmp_path / "one" / "shop", tmp_path / "two" / "shop"
    assert project_namespace(str(a)) != project_namespace(str(b))  # same name, other checkout


def test_ingest_into_a_projects_namespace(tmp_path):
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps(REPLIES))
    project = tmp_path / "shop"
    project.mkdir()
    store = ["--path", str(tmp_path / "store")]
    out = run(
        "guidelines",
        "ingest",
        str(CLAUDE),
        "--project",
        str(project),
        *store,
        "--model",
        f"scripted:{replies}",
    )
    assert out.exit_code == 0, out.output
    from atlas.memory.guidelines.config import project_namespace

    ns = project_namespace(str(project))
    listed = run("guidelines", "list", *store, "--namespace", ns, "--json")
    assert FIX_TIP in {g["content"] for g in json.loads(listed.stdout)}
