"""Coding-agent transcripts → trajectories, on the sample sessions under tests/fixtures/transcripts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from atlas.errors import InvalidInputError
from atlas.memory.guidelines import transcripts
from atlas.memory.guidelines.transcripts import read_transcript

SAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
CLAUDE = SAMPLES / "claude_code_session.jsonl"
CODEX = SAMPLES / "codex_rollout.jsonl"


def test_claude_code_session_one_trajectory_per_turn_with_tool_calls_errors_and_outcome():
    t = read_transcript(CLAUDE)
    assert t.format == "claude-code"
    assert t.session_id == "3f1c2a9e-5b7d-4c1e-9a2f-7e6d5c4b3a21"
    assert t.skipped_lines == 0
    # three prompts; the question without a tool call teaches no procedure; meta, slash-command,
    # summary, snapshot and sidechain lines are not turns
    fix, publish = t.trajectories
    assert fix.task.description == "The test tests/test_parser.py::test_dates fails, fix it"
    assert [s.tool for s in fix.steps] == ["Bash", "Read", "Edit", "Bash"]
    assert fix.steps[0].args == {
        "command": "pytest -q tests/test_parser.py::test_dates",
        "description": "Run the failing test",
    }
    assert "unconverted data remains" in (fix.steps[0].error or "")  # is_error: true is kept
    assert [s.error for s in fix.steps[1:]] == [None, None, None]
    assert fix.steps[0].thought == "I'll run the failing test first."
    assert "def parse_date" in fix.steps[1].observation  # a list-of-blocks tool result
    assert fix.success is True
    assert fix.metadata["final_answer"].startswith("Fixed: parse_date")
    assert fix.metadata["source"] == "claude-code" and fix.metadata["turn"] == 0
    # the user rejected the tool call and interrupted: a failure, whatever the last message was
    assert publish.success is False
    assert publish.steps[0].error and "rejected" in publish.steps[0].error


def test_codex_rollout_keeps_shell_exit_codes_and_patches():
    t = read_transcript(CODEX)
    assert t.format == "codex" and t.session_id == "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
    (traj,) = t.trajectories  # the environment context is not a prompt
    assert traj.task.description == "Add a --verbose flag to the cli and make the tests pass"
    assert [s.tool for s in traj.steps] == ["shell", "apply_patch", "shell"]
    assert "unknown option --verbose" in (traj.steps[0].error or "")  # exit_code 1
    assert traj.steps[1].args and "*** Begin Patch" in traj.steps[1].args["input"]
    assert traj.steps[2].error is None and "3 passed" in traj.steps[2].observation  # "Exit code: 0"
    assert traj.success is True


def test_ids_are_stable_so_reading_twice_gives_the_same_trajectories():
    a = [t.id for t in read_transcript(CLAUDE).trajectories]
    b = [t.id for t in read_transcript(CLAUDE.read_bytes()).trajectories]
    assert a == b and len(set(a)) == 2 and all(i.startswith("cc-") for i in a)


def test_malformed_lines_are_skipped_and_counted(tmp_path):
    f = tmp_path / "s.jsonl"
    lines = CLAUDE.read_text().splitlines()
    f.write_text("\n".join([lines[0], "{not json", *lines[1:], '{"type": "user", "message": {"rol']) + "\n")
    t = read_transcript(f)
    assert t.skipped_lines == 2 and len(t.trajectories) == 2


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "no JSON line"),
        (b"garbage\n\x00\x01\n", "no JSON line"),
        (b'{"hello": 1}\n{"world": 2}\n', "neither a Claude Code session"),
        (b'{"type": "summary", "summary": "x", "sessionId": "s"}\n', "no user prompt"),
    ],
)
def test_unreadable_transcripts_say_why(tmp_path, content, message):
    f = tmp_path / "t.jsonl"
    f.write_bytes(content)
    with pytest.raises(InvalidInputError, match=message):
        read_transcript(f)


def test_missing_file_names_the_path(tmp_path):
    with pytest.raises(InvalidInputError, match=r"cannot read .*nope\.jsonl.*check the path"):
        read_transcript(tmp_path / "nope.jsonl")


def test_a_huge_transcript_is_read_from_its_end(tmp_path, monkeypatch):
    monkeypatch.setattr(transcripts, "MAX_TRANSCRIPT_BYTES", 20_000)
    f = tmp_path / "big.jsonl"
    filler = json.dumps({"type": "progress", "data": "x" * 200}) + "\n"
    f.write_text(filler * 500 + CLAUDE.read_text())
    t = read_transcript(f)
    assert t.truncated and len(t.trajectories) == 2


def test_long_tool_outputs_are_cut_to_keep_a_turn_storable(tmp_path):
    rows = [json.loads(x) for x in CLAUDE.read_text().splitlines()]
    for r in rows:
        content = (r.get("message") or {}).get("content")
        if isinstance(content, list) and content and content[0].get("tool_use_id") == "toolu_04":
            content[0]["content"] = "ok\n" * 100_000
    f = tmp_path / "long.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in rows))
    fix = read_transcript(f).trajectories[0]
    assert len(fix.steps[3].observation) < transcripts.MAX_OUTPUT_CHARS + 100
    assert "characters cut" in fix.steps[3].observation


def test_an_openai_message_list_is_one_trajectory(tmp_path):
    msgs = [
        {"role": "user", "content": "list the files"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "1", "content": "Error: permission denied"},
        {"role": "assistant", "content": "I could not list them."},
    ]
    f = tmp_path / "m.json"
    f.write_text(json.dumps(msgs))
    t = read_transcript(f)
    (traj,) = t.trajectories
    assert t.format == "openai" and traj.steps[0].error == "Error: permission denied"
    assert traj.success is False


def test_unknown_format_is_refused():
    with pytest.raises(InvalidInputError, match="format: must be one of"):
        read_transcript(CLAUDE, "cursor")


def test_a_turn_too_big_to_store_is_skipped_with_its_reason_not_the_whole_session(tmp_path, monkeypatch):
    from atlas.memory import common

    monkeypatch.setattr(common, "MAX_TRAJECTORY_CHARS", 1_500)  # the fix turn is larger, the other smaller
    t = read_transcript(CLAUDE)
    assert [tr.task.description for tr in t.trajectories] == [
        "Now bump the version in pyproject.toml and publish"
    ]
    (reason,) = t.skipped_turns
    assert reason.startswith("turn 0: ") and "over the limit" in reason


def test_a_compaction_summary_continues_the_turn_it_interrupted(tmp_path):
    rows = [json.loads(x) for x in CLAUDE.read_text().splitlines()]
    at = next(i for i, r in enumerate(rows) if r.get("uuid") == "a4")  # before the Edit
    summary = {
        **rows[at],
        "type": "user",
        "uuid": "c1",
        "isCompactSummary": True,
        "message": {
            "role": "user",
            "content": "This conversation is continued from an earlier one...",
        },
    }
    f = tmp_path / "compacted.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in [*rows[:at], summary, *rows[at:]]))
    fix, _ = read_transcript(f).trajectories
    assert [s.tool for s in fix.steps] == ["Bash", "Read", "Edit", "Bash"]
    assert fix.id == read_transcript(CLAUDE).trajectories[0].id
