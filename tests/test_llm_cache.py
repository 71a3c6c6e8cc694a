"""The response cache is data: a damaged, edited, oversized or misplaced entry is a miss with a
warning — the model is asked again, never a crash, never the agent's turn — and writes never follow
a linked shard folder. Every entry is sealed (the key it answers and the hash of its content): an
edit that leaves the hash alone is refused, and so is an entry written before entries were sealed.
The shape checks hold even for an entry whose hash was recomputed after the edit."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest

from atlas.infra.cache_seal import content_hash
from atlas.infra.llm import ResponseCache, ScriptedLLM

MSG = [{"role": "user", "content": "hello"}]


def _entry(directory: Path) -> Path:
    (path,) = [p for p in directory.rglob("*.json") if p.is_file() or p.is_symlink()]
    return path


def _good(directory: Path) -> tuple[Path, dict]:
    ScriptedLLM(["first"], cache=directory).complete(MSG, temperature=0.0, max_tokens=50)
    path = _entry(directory)
    return path, json.loads(path.read_text())


def _reseal(record: dict) -> dict:
    """What a careful forger does after editing the value: recompute its hash."""
    record["content_sha256"] = content_hash(record["value"])
    return record


BAD = {  # each applied to the entry's value (``c``: its completion), the hash recomputed after
    "text a number": lambda r: r["value"]["completion"].update(text=5),
    "completion a list": lambda r: r["value"].update(completion=["x"]),
    "tool calls a string": lambda r: r["value"]["completion"].update(tool_calls="look"),
    "tool call without a name": lambda r: r["value"]["completion"].update(tool_calls=[{"arguments": {}}]),
    "usage not numbers": lambda r: r["value"]["completion"].update(usage={"prompt_tokens": "many"}),
    "negative cost": lambda r: r["value"]["completion"].update(usage={"cost_usd": -1}),
    "key of another file": lambda r: r.update(key="0" * 64),
    "5 MB reply": lambda r: r["value"]["completion"].update(text="go north " * 600_000),
    "longer than max_tokens": lambda r: r["value"]["completion"].update(text="go north " * 500),
}


@pytest.mark.parametrize("damage", list(BAD))
def test_an_invalid_entry_is_a_miss_with_a_warning(tmp_path, caplog, damage):
    path, record = _good(tmp_path)
    BAD[damage](record)
    path.write_text(json.dumps(_reseal(record)))
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


@pytest.mark.parametrize(
    "edit",
    [
        lambda v: v["completion"].update(text="go south"),  # an action changed
        lambda v: v["completion"].update(text=v["completion"]["text"] + " x" * 200_000),  # text injected
        lambda v: v["completion"]["usage"].update(prompt_tokens=0),
    ],
    ids=["action changed", "text injected", "usage zeroed"],
)
def test_an_entry_edited_without_its_hash_is_refused_in_one_line_naming_the_file(tmp_path, caplog, edit):
    path, record = _good(tmp_path)
    edit(record["value"])
    path.write_text(json.dumps(record))
    cache = ResponseCache(tmp_path)
    llm = ScriptedLLM(["fresh"], cache=cache)
    with caplog.at_level(logging.WARNING, logger="atlas.infra.llm.cache"):
        got = llm.complete(MSG, temperature=0.0, max_tokens=50)
    assert (got.text, got.cached) == ("fresh", False) and cache.refused == 1 and llm.cache_hits == 0
    (line,) = [r.getMessage() for r in caplog.records]
    assert str(path) in line and "\n" not in line
    assert "does not match its hash" in line or "longer than" in line


def test_entries_written_before_entries_were_sealed_are_misses_said_once(tmp_path, caplog):
    """The older format (no hashes) is never trusted: each entry is a miss and is rewritten sealed;
    one line names the first file and says why, for the whole cache."""
    cache = ResponseCache(tmp_path)
    msgs = [[{"role": "user", "content": f"q{i}"}] for i in range(3)]
    for m in msgs:
        ScriptedLLM(["a"], cache=cache).complete(m, temperature=0.0, max_tokens=50)
    for p in tmp_path.rglob("*.json"):
        r = json.loads(p.read_text())
        p.write_text(json.dumps({"key": r["key"], **r["value"]}))
    fresh = ResponseCache(tmp_path)
    with caplog.at_level(logging.WARNING, logger="atlas.infra.llm.cache"):
        for m in msgs:
            assert not ScriptedLLM(["b"], cache=fresh).complete(m, temperature=0.0, max_tokens=50).cached
    assert fresh.refused == 3 and len(caplog.records) == 1
    line = caplog.records[0].getMessage()
    assert "older cache format" in line and str(tmp_path) in line and line.count(".json") == 1
    for m in msgs:  # rewritten, sealed: served again
        assert (
            ScriptedLLM([], cache=ResponseCache(tmp_path)).complete(m, temperature=0.0, max_tokens=50).cached
        )
