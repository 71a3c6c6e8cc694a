"""`atlas guidelines ...` end to end through the real CLI app (typer CliRunner)."""

from __future__ import annotations

import json

import pytest
from gl_helpers import make_traj, openai_messages
from typer.testing import CliRunner

from atlas.cli import app

REPLIES = {
    "stages": {
        "segmentation": {
            "segments": [
                {"description": "Explore to locate the target object", "start": 0, "end": 0},
                {"description": "Carry the object to the destination room", "start": 1, "end": 2},
            ]
        },
        "tips": {
            "tips": [
                {
                    "category": "strategy",
                    "content": "Look at the room list before moving anywhere",
                    "trigger": "start of a delivery task",
                    "task_category": "delivery",
                },
                {
                    "category": "strategy",
                    "content": "Pick the object up as soon as you reach it",
                    "trigger": "object in the same room",
                },
            ]
        },
        "consolidate": {"decisions": [{"tip": 0, "action": "ADD"}, {"tip": 1, "action": "ADD"}]},
        "attribution": {
            "failure_enabler": {"description": "moved to a non-adjacent room", "step": 1},
            "recognition": {"description": "read the error", "step": 1},
            "corrective_action": {"description": "went via room_B", "step": 2},
            "why_it_worked": "rooms connect only to neighbours",
        },
    }
}


@pytest.fixture
def env(tmp_path):
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps(REPLIES))
    traj = tmp_path / "traj.json"
    traj.write_text(make_traj("clean").model_dump_json())
    msgs = tmp_path / "msgs.json"
    msgs.write_text(json.dumps(openai_messages(fail_first=True)))
    common = ["--path", str(tmp_path / "store"), "--namespace", "team"]
    return {"replies": replies, "traj": traj, "msgs": msgs, "common": common, "tmp": tmp_path}


def run(*args):
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def test_cli_end_to_end(env):
    c = env["common"]
    model = f"scripted:{env['replies']}"
    code, out = run("guidelines", "save", str(env["traj"]), *c, "--model", model)
    assert code == 0, out
    assert "processed, outcome clean_success" in out
    ids = [ln for ln in out.splitlines() if len(ln) == 36]
    assert len(ids) == 4
    code, out = run("guidelines", "save", str(env["msgs"]), *c, "--model", model, "--json")
    assert code == 0 and json.loads(out)["outcome"] == "recovery"

    code, out = run("guidelines", "get", "bring the apple to room_A", *c)
    assert code == 0 and "[strategy]" in out and "sim=" in out
    code, out = run("guidelines", "get", "bring the apple to room_A", *c, "--category", "recovery", "--json")
    assert code == 0 and {g["category"] for g in json.loads(out)} <= {"recovery"}
    code, out = run("guidelines", "get", "bring the apple to room_A", *c, "--namespace", "other")
    assert code == 0 and "[strategy]" not in out

    code, out = run("guidelines", "list", *c, "--json")
    listed = json.loads(out)
    assert code == 0 and len(listed) >= 4
    gid = listed[0]["id"]
    code, out = run("guidelines", "show", gid, *c)
    assert code == 0 and "Sources:" in out and gid in out
    code, out = run("guidelines", "delete", gid, *c)
    assert code == 0 and f"deleted {gid}" in out
    code, out = run("guidelines", "show", gid, *c)
    assert code == 1

    code, out = run("guidelines", "consolidate", *c, "--json")
    assert code == 0 and isinstance(json.loads(out), list)
    code, out = run("guidelines", "stats", *c)
    assert code == 0 and json.loads(out)["trajectories"] == {"processed": 2}


def test_cli_bad_input_names_the_field_and_stores_nothing(env):
    bad = env["tmp"] / "bad.json"
    bad.write_text(
        json.dumps(
            [
                {"role": "user", "content": "t"},
                {
                    "role": "assistant",
                    "tool_calls": [{"id": "a", "function": {"name": "f", "arguments": "{oops"}}],
                },
            ]
        )
    )
    code, out = run("guidelines", "save", str(bad), *env["common"], "--model", f"scripted:{env['replies']}")
    assert code == 2 and "messages[1].tool_calls[0].function.arguments" in out
    assert not (env["tmp"] / "store").exists()  # validated before the store was opened
    code, out = run("guidelines", "stats", *env["common"])
    assert code == 2 and "no guideline store" in out


def test_cli_not_processed_then_reprocess(env):
    garbage = env["tmp"] / "garbage.json"
    garbage.write_text(json.dumps({"stages": {}, "default": "I cannot do JSON"}))
    c = env["common"]
    code, out = run("guidelines", "save", str(env["traj"]), *c, "--model", f"scripted:{garbage}")
    assert code == 1 and "not processed" in out and "segmentation" in out
    code, out = run("guidelines", "reprocess", *c, "--model", f"scripted:{env['replies']}")
    assert code == 0 and ": processed" in out


def test_help_texts():
    for cmd in (["guidelines", "--help"], ["mcp", "--help"], ["guidelines", "save", "--help"]):
        code, out = run(*cmd)
        assert code == 0 and "Usage" in out


def test_bad_namespace_is_a_clean_error(env):
    code, out = run("guidelines", "list", "--path", str(env["tmp"] / "s"), "--namespace", "no spaces!")
    assert code == 2 and "namespace" in out
