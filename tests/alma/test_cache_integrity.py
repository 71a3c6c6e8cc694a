"""Caches a search trusts carry the hash of what they answer and of their own content. A no-memory
baseline entry whose scores were zeroed by hand, or one written before entries were sealed, is
refused with one line naming the file and played again (the run's result is the one a run without
the cache gives); the trace says what each cache did; ``--no-cache`` reads and writes neither."""

from __future__ import annotations

import json
import logging

import pytest
from alma_doubles import task_policy
from typer.testing import CliRunner

import atlas.alma
from atlas.infra.llm import ScriptedLLM
from atlas.trace import read_trace

SETTINGS = dict(
    env="graphworld", iterations=0, episodes=2, rooms=5, deploy_seeds=1, seed=42, quiet=True,
    baselines=[], env_seed=False,
)  # fmt: skip


def _run(tmp_path, name, cache):
    archive, trace = atlas.alma.run(
        llm=ScriptedLLM(task_policy), run_dir=tmp_path / name, baseline_cache=cache, no_embed=True, **SETTINGS
    )
    return archive, read_trace(trace)


def _stop(events):
    return next(e for e in events if e["event"] == "run.stop")


def _zero_scores(record):
    for e in record["value"]["episodes"]:
        e["score"], e["success"] = 0.0, False


def _unsealed(record):
    value = record["value"]
    record.clear()
    record.update(value)  # the layout written before entries were sealed: the evaluation alone


@pytest.mark.parametrize(
    ("damage", "why"),
    [(_zero_scores, "does not match its hash"), (_unsealed, "older cache format")],
    ids=["scores zeroed by hand", "written before entries were sealed"],
)
def test_a_baseline_entry_that_does_not_match_is_refused_in_one_line_and_played_again(
    tmp_path, caplog, damage, why
):
    first, events = _run(tmp_path, "a", tmp_path / "cache")
    assert first.baseline["cache"] == "miss" and _stop(events)["cache"]["baseline"] == "miss"
    (entry,) = (tmp_path / "cache").glob("*.json")
    record = json.loads(entry.read_text())
    assert record["key"] == entry.stem and len(record["content_sha256"]) == 64
    damage(record)
    entry.write_text(json.dumps(record))
    with caplog.at_level(logging.WARNING, logger="atlas.alma.search.baseline_cache"):
        second, events = _run(tmp_path, "b", tmp_path / "cache")
    (line,) = [r.getMessage() for r in caplog.records if r.name == "atlas.alma.search.baseline_cache"]
    assert str(entry) in line and why in line and "\n" not in line
    assert second.baseline["cached"] is False and second.baseline["cache"] == "refused"
    assert second.baseline["per_task"] == first.baseline["per_task"]  # recomputed, not the zeroes
    assert _stop(events)["cache"] == {
        "baseline": "refused",
        "replay": False,
        "replayed_calls": 0,
        "refused": 1,
    }
    third, events = _run(tmp_path, "c", tmp_path / "cache")  # rewritten, sealed: a hit
    assert third.baseline["cache"] == "hit" and third.baseline["per_task"] == first.baseline["per_task"]
    assert _stop(events)["cache"]["baseline"] == "hit"
    baseline_done = next(e for e in events if e["event"] == "baseline.done")
    assert baseline_done["cached"] is True and baseline_done["cache"] == "hit"


def test_an_entry_filed_under_another_key_is_refused(tmp_path, caplog):
    _run(tmp_path, "a", tmp_path / "cache")
    (entry,) = (tmp_path / "cache").glob("*.json")
    other = {**SETTINGS, "seed": 43}
    atlas.alma.run(
        llm=ScriptedLLM(task_policy), run_dir=tmp_path / "o", baseline_cache=tmp_path / "cache2",
        no_embed=True, **other,
    )  # fmt: skip
    (foreign,) = (tmp_path / "cache2").glob("*.json")
    entry.write_text(foreign.read_text())  # a sealed entry, but of another run's tasks
    with caplog.at_level(logging.WARNING, logger="atlas.alma.search.baseline_cache"):
        second, _ = _run(tmp_path, "b", tmp_path / "cache")
    assert second.baseline["cache"] == "refused" and "another key" in caplog.text


def _reusable(rest: str) -> ScriptedLLM:
    llm = ScriptedLLM(task_policy)
    llm.reusable_results = True  # a model known by its name: its baseline is cached by default
    return llm


def test_no_cache_reads_and_writes_no_cache(tmp_path):
    from atlas.cli import app
    from atlas.infra.llm.providers import register_provider

    register_provider("reusable-task", _reusable)
    args = [
        "run",
        "--model",
        "reusable-task:x",
        "--iterations",
        "0",
        "--episodes",
        "1",
        "--deploy-seeds",
        "1",
    ]
    args += ["--rooms", "5", "--baselines", "none", "--no-env-seed", "--no-embed", "--quiet"]
    env = {"ATLAS_CACHE_DIR": str(tmp_path / "cache"), "COLUMNS": "200"}
    runner = CliRunner()
    res = runner.invoke(app, [*args, "--no-cache", "--run-dir", str(tmp_path / "a")], env=env)
    assert res.exit_code == 0, res.output
    evaluated = ["eval", "no_memory", "--model", "reusable-task:x", "--episodes", "1", "--deploy-seeds", "1"]
    evaluated += ["--rooms", "5", "--no-embed", "--quiet", "--no-cache", "--run-dir", str(tmp_path / "e")]
    res = runner.invoke(app, evaluated, env=env)
    assert res.exit_code == 0, res.output
    assert not (tmp_path / "cache").exists()  # nothing written by either command
    res = runner.invoke(app, [*args, "--run-dir", str(tmp_path / "b")], env=env)
    assert res.exit_code == 0, res.output
    assert len(list((tmp_path / "cache" / "baselines").glob("*.json"))) == 1
    res = runner.invoke(app, [*args, "--no-cache", "--run-dir", str(tmp_path / "c")], env=env)
    assert res.exit_code == 0, res.output
    stop = _stop(read_trace(tmp_path / "c" / "trace.jsonl"))
    assert stop["cache"]["baseline"] == "off"
    start = next(e for e in read_trace(tmp_path / "c" / "trace.jsonl") if e["event"] == "run.start")
    assert start["cache"] == {"baseline": None, "replay": None}
    res = runner.invoke(app, [*args, "--run-dir", str(tmp_path / "d")], env=env)
    assert res.exit_code == 0, res.output
    assert _stop(read_trace(tmp_path / "d" / "trace.jsonl"))["cache"]["baseline"] == "hit"


def test_the_run_report_counts_replayed_and_refused_task_model_replies(tmp_path):
    """What ``run.stop`` carries for the replay cache: replies served, and entries refused."""
    from atlas.alma.search.usage import cache_report
    from atlas.alma.state.archive import Archive
    from atlas.infra.llm import ResponseCache

    msgs = [[{"role": "user", "content": f"question {i}"}] for i in range(3)]
    for m in msgs:
        ScriptedLLM(["an answer"], cache=tmp_path).complete(m, temperature=0.0)
    (edited, *_) = sorted(tmp_path.rglob("*.json"))
    record = json.loads(edited.read_text())
    record["value"]["completion"]["text"] = "go south"  # an action changed, its hash left alone
    edited.write_text(json.dumps(record))
    llm = ScriptedLLM(["asked again"], cache=ResponseCache(tmp_path, greedy_only=True))
    for m in msgs:
        llm.complete(m, temperature=0.0)
    report = cache_report(Archive(), llm, None)
    assert report == {"baseline": "off", "replay": True, "replayed_calls": 2, "refused": 1}
