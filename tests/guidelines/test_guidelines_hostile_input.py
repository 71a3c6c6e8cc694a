"""Hostile and broken input to the guideline bank, its CLI and its LLM stages: a clear AtlasError (or
CLI exit 2 without a traceback), nothing partially written, a failed stage recorded for reprocess."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from gl_helpers import make_traj, openai_messages
from typer.testing import CliRunner

from atlas.errors import InvalidInputError
from atlas.infra.llm import ScriptedLLM
from atlas.memory.guidelines import GuidelineBank
from atlas.memory.guidelines.messages import parse_trajectory
from atlas.memory.guidelines.prompts import stage_of
from guideline_doubles import auto_responder

GOOD = json.loads(make_traj("clean").model_dump_json())


def _call(tid: str, name: str = "look", args: str = "{}") -> dict:
    return {"id": tid, "type": "function", "function": {"name": name, "arguments": args}}


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({**GOOD, "score": float("nan")}, "score"),
        ({**GOOD, "score": 3}, "score: must be a number from 0 to 1"),
        ({**GOOD, "success": "yes"}, "success: must be true or false"),
        ({"messages": openai_messages(), "success": "yes"}, "success: must be true or false"),
        ({"messages": openai_messages(), "score": "high"}, "score"),
        ({"messages": openai_messages(), "score": float("inf")}, "score"),
        ({"messages": openai_messages(), "id": 5}, "id"),
        ({"task": {"goal": "g"}, "steps": [], "success": True, "score": "abc"}, "score"),
        ({**GOOD, "metadata": {"x": float("nan")}}, "metadata.x"),
        (json.dumps(GOOD).replace("bring the apple", "bring \\ud800 apple"), "task.description"),
        (b"\xff\xfe{", "not UTF-8"),
        (
            [
                {"role": "user", "content": "t"},
                {"role": "assistant", "tool_calls": [_call("c1"), _call("c1")]},
            ],
            "messages[1].tool_calls[1].id",
        ),
        (
            [
                {"role": "user", "content": "t"},
                {"role": "assistant", "tool_calls": [{"function": {"name": "look", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "r"},
            ],
            "give each tool call an 'id'",
        ),
        (
            [
                {"role": "user", "content": "t"},
                {"role": "assistant", "tool_calls": [_call("c1", args='{"x": NaN}')]},
            ],
            "args.x",
        ),
        (
            {**GOOD, "steps": [{"action": "look", "observation": "a room", "reward": 1}]},
            "steps[0].reward: not a field here; the fields are action, observation,",
        ),
    ],
)
def test_bad_values_are_refused_naming_the_field(data, field):
    with pytest.raises(InvalidInputError, match=field.replace("[", r"\[").replace("]", r"\]")):
        parse_trajectory(data)


def _failing_at(stage: str, error: BaseException):
    auto = auto_responder()

    def respond(messages, **kw):
        if stage_of(messages) == stage:
            raise error
        return auto(messages, **kw)

    return respond


@pytest.mark.parametrize(
    ("llm", "reason"),
    [
        (ScriptedLLM(_failing_at("segmentation", ConnectionError("connection refused"))), "ConnectionError"),
        (ScriptedLLM([TimeoutError()] * 4, timeout=5.0), "no reply within 5 s"),
    ],
)
def test_a_stage_that_raises_records_the_trajectory_for_reprocess(tmp_path, embedder, llm, reason):
    bank = GuidelineBank.open(tmp_path, llm=llm, embedder=embedder)
    result = bank.save(make_traj("clean"))
    assert result.status == "not_processed" and reason in (result.reason or "")
    assert bank.list_guidelines() == []
    (pending,) = bank.unprocessed()
    assert pending["id"] == result.trajectory_id
    reopened = GuidelineBank.open(tmp_path, llm=ScriptedLLM(auto_responder()), embedder=embedder)
    (retried,) = reopened.reprocess()
    assert retried.status == "processed" and retried.guideline_ids


def test_consolidation_stage_that_raises_is_recorded(embedder):
    bank = GuidelineBank(llm=ScriptedLLM(auto_responder()), embedder=embedder)
    bank.save(make_traj("clean"))
    before = {g.id for g in bank.list_guidelines()}
    broken = GuidelineBank(
        store=bank.store, llm=ScriptedLLM(_failing_at("consolidate", ValueError("boom"))), embedder=embedder
    )
    result = broken.save(make_traj("clean", task="bring the pear to room_D"))
    assert result.status == "not_processed" and "consolidation" in (result.reason or "")
    assert {g.id for g in bank.list_guidelines()} == before  # nothing partially written


def test_bad_category_limit_and_filter_values_are_errors(bank):
    bank.save(make_traj("clean"))
    with pytest.raises(InvalidInputError, match="category: must be one of"):
        bank.list_guidelines(category="zzz")
    for limit in (0, -1):
        with pytest.raises(InvalidInputError, match="limit"):
            bank.list_guidelines(limit=limit)
    with pytest.raises(InvalidInputError, match="category: must be one of"):
        bank.get_guidelines("bring the apple", filters={"category": "zzz"})
    with pytest.raises(InvalidInputError, match="k:"):
        bank.get_guidelines("bring the apple", k="3")  # type: ignore[arg-type]


def _cli(*args: str):
    from atlas.cli import app

    res = CliRunner().invoke(app, list(args))
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception  # no traceback
    return res.exit_code, res.output


def test_cli_bad_bytes_and_values_create_nothing(tmp_path):
    store = tmp_path / "store"
    for name, content in (
        ("bytes.json", b"\xff\xfe{"),
        ("nan.json", json.dumps({**GOOD, "score": float("nan")}).encode()),
        ("yes.json", json.dumps({**GOOD, "success": "yes"}).encode()),
    ):
        (tmp_path / name).write_bytes(content)
        code, out = _cli(
            "guidelines", "save", str(tmp_path / name), "--path", str(store), "--model", "scripted:x"
        )
        assert code == 2 and ("UTF-8" in out or "score" in out or "success" in out), out
    assert not store.exists()


def test_cli_read_commands_on_missing_or_file_path(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("hi")
    for cmd in (["list"], ["stats"], ["get", "task"], ["show", "x"], ["delete", "x"], ["consolidate"]):
        code, out = _cli("guidelines", *cmd, "--path", str(tmp_path / "none"))
        assert code == 2 and "no guideline store" in out
        code, out = _cli("guidelines", *cmd, "--path", str(afile))
        assert code == 2 and "is a file" in out
    assert not (tmp_path / "none").exists() and afile.read_text() == "hi"


def test_cli_list_bad_category_is_an_error(tmp_path, embedder):
    GuidelineBank.open(tmp_path, embedder=embedder)
    code, out = _cli("guidelines", "list", "--path", str(tmp_path), "--category", "zzz")
    assert code == 2 and "category" in out


CRASH_CHILD = textwrap.dedent(
    """
    import os, sys
    sys.path[:0] = [sys.argv[2], os.path.dirname(sys.argv[2])]  # gl_helpers, guideline_doubles
    from gl_helpers import make_traj
    from atlas.infra.embeddings import default_embedder
    from atlas.infra.llm import ScriptedLLM
    from atlas.memory.guidelines import GuidelineBank
    from guideline_doubles import auto_responder

    bank = GuidelineBank.open(sys.argv[1], llm=ScriptedLLM(auto_responder()), embedder=default_embedder())

    async def die(*args, **kwargs):
        os._exit(9)  # killed after the SQLite commit, before the vector write

    bank.store.vectors.add = die
    bank.save(make_traj("clean"))
    """
)


def test_reopen_after_a_crash_between_record_and_vector_write(tmp_path, embedder):
    from pathlib import Path

    here = str(Path(__file__).parent)
    proc = subprocess.run([sys.executable, "-c", CRASH_CHILD, str(tmp_path), here], capture_output=True)
    assert proc.returncode == 9, proc.stderr.decode()[-2000:]
    bank = GuidelineBank.open(tmp_path, embedder=embedder)
    tips = bank.list_guidelines()
    assert tips and bank.store.vectors.count_sync() == 3 * len(tips)  # re-indexed on open (3 keys each)
    found = bank.get_guidelines(tips[0].subtask or tips[0].content, k=5)
    assert found, "committed tips must be retrievable after the crash"
