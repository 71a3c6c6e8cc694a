"""The response cache is data (issue 29, item 7): a damaged, edited, oversized or misplaced entry is
a miss with a warning — the model is asked again, never a crash, never the agent's turn — and writes
never follow a linked shard folder."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest

from atlas.infra.llm import ScriptedLLM

MSG = [{"role": "user", "content": "hello"}]


def _entry(directory: Path) -> Path:
    (path,) = [p for p in directory.rglob("*.json") if p.is_file() or p.is_symlink()]
    return path


def _good(directory: Path) -> tuple[Path, dict]:
    ScriptedLLM(["first"], cache=directory).complete(MSG, temperature=0.0, max_tokens=50)
    path = _entry(directory)
    return path, json.loads(path.read_text())


BAD = {
    "text a number": lambda r, p: r["completion"].update(text=5),
    "completion a list": lambda r, p: r.update(completion=["x"]),
    "tool calls a string": lambda r, p: r["completion"].update(tool_calls="look"),
    "tool call without a name": lambda r, p: r["completion"].update(tool_calls=[{"arguments": {}}]),
    "usage not numbers": lambda r, p: r["completion"].update(usage={"prompt_tokens": "many"}),
    "negative cost": lambda r, p: r["completion"].update(usage={"cost_usd": -1}),
    "key of another file": lambda r, p: r.update(key="0" * 64),
    "5 MB reply": lambda r, p: r["completion"].update(text="go north " * 600_000),
    "longer than max_tokens": lambda r, p: r["completion"].update(text="go north " * 500),
}


@pytest.mark.parametrize("damage", list(BAD))
def test_an_invalid_entry_is_a_miss_with_a_warning(tmp_path, caplog, damage):
    path, record = _good(tmp_path)
    BAD[damage](record, path)
    path.write_text(json.dumps(record))
    llm = ScriptedLLM(["fresh"], cache=tmp_path)
    with caplog.at_level(logging.WARNING, logger="atlas.infra.llm.cache"):
        got = llm.complete(MSG, temperature=0.0, max_tokens=50)
    assert (got.text, got.cached) == ("fresh", False) and len(llm.history) == 1
    assert "ignoring the response cache entry" in caplog.text
    again = ScriptedLLM([], cache=tmp_path).complete(MSG, temperature=0.0, max_tokens=50)
    assert (again.text, again.cached) == ("fresh", True)  # the entry was replaced


@pytest.mark.timeout(60)
@pytest.mark.parametrize("how", ["fifo", "dev-zero", "not json", "nan"])
def test_an_entry_that_is_not_a_plain_json_file_is_a_miss(tmp_path, caplog, how):
    path, record = _good(tmp_path)
    path.unlink()
    if how == "fifo":
        os.mkfifo(path)
    elif how == "dev-zero":
        path.symlink_to("/dev/zero")
    elif how == "not json":
        path.write_bytes(b"\xff{")
    else:
        path.write_text(json.dumps(record).replace('"cost_usd": 0.0', '"cost_usd": NaN'))
    llm = ScriptedLLM(["fresh"], cache=tmp_path)
    with caplog.at_level(logging.WARNING, logger="atlas.infra.llm.cache"):
        assert llm.complete(MSG, temperature=0.0, max_tokens=50).text == "fresh"
    assert "ignoring the response cache entry" in caplog.text


def test_writes_never_follow_a_linked_shard_folder(tmp_path, caplog):
    path, _ = _good(tmp_path / "cache")
    shard = path.parent
    for f in shard.iterdir():
        f.unlink()
    shard.rmdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shard.symlink_to(elsewhere)
    with caplog.at_level(logging.WARNING, logger="atlas.infra.llm.cache"):
        assert ScriptedLLM(["fresh"], cache=tmp_path / "cache").complete(MSG, temperature=0.0, max_tokens=50)
    assert list(elsewhere.iterdir()) == [] and "not a plain folder" in caplog.text
