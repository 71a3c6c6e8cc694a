"""`atlas run/eval/demo --help`, `atlas archive show|best|export`, and the CLI's error paths."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from atlas.alma.archive import Archive, ArchiveEntry, TaskResult
from atlas.cli import app

runner = CliRunner()
SRC = "def update(memory, episode, tools):\n    pass\n\n\ndef recall(memory, task, tools):\n    return 'hi'\n"


@pytest.fixture
def run_dir(tmp_path):
    arch = Archive()
    arch.baseline = {"score": 0.5, "per_task": []}
    arch.add(ArchiveEntry(id="d-0001", name="no_memory", origin="baseline", collection_score=0.4,
                          deployment_score=0.5, normalized_score=0.0,
                          per_task=[TaskResult(task_id="t", phase="deployment", success=True, score=0.5, steps=20)]),
             SRC.replace("'hi'", "''"))
    arch.add(ArchiveEntry(id="d-0002", name="route_map", origin="meta", generation=1, parent_ids=["d-0001"],
                          collection_score=0.6, deployment_score=0.7, normalized_score=0.2), SRC)
    arch.add(ArchiveEntry(id="d-0003", name="broken", origin="meta", generation=2, status="invalid",
                          errors=["line 1: syntax error"]), "def (")
    d = tmp_path / "run"
    arch.save(d / "archive.json")
    (d / "config.json").write_text("{}")
    return d


def test_help_lists_every_flag():
    out = runner.invoke(app, ["run", "--help"], env={"COLUMNS": "200"}).output
    for flag in ("--env", "--iterations", "--episodes", "--rooms", "--seed", "--family", "--no-family",
                 "--deploy-seeds", "--model", "--meta-model", "--embed-model", "--no-embed", "--no-trace",
                 "--quiet", "--alfworld-data", "--run-dir", "--resume", "--concurrency"):
        assert flag in out, flag
    for cmd in (["eval", "--help"], ["demo", "--help"], ["archive", "show", "--help"], ["archive", "best", "--help"],
                ["archive", "export", "--help"]):
        res = runner.invoke(app, cmd)
        assert res.exit_code == 0, res.output


def test_archive_show_best_export(run_dir, tmp_path):
    res = runner.invoke(app, ["archive", "show", str(run_dir)], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "route_map" in res.output and "broken" in res.output and "+0.200" in res.output
    res = runner.invoke(app, ["archive", "best", str(run_dir)])
    assert res.exit_code == 0 and "d-0002 route_map" in res.output and "return 'hi'" in res.output
    out = tmp_path / "export.json"
    res = runner.invoke(app, ["archive", "export", str(run_dir), "-o", str(out)])
    assert res.exit_code == 0
    data = json.loads(out.read_text())
    assert [e["source"] for e in data["entries"]][1] == SRC


def test_archive_errors_are_clear(tmp_path):
    res = runner.invoke(app, ["archive", "show", str(tmp_path)])
    assert res.exit_code == 1 and "no archive" in res.output
    (tmp_path / "archive.json").write_text("{ torn")
    res = runner.invoke(app, ["archive", "best", str(tmp_path)])
    assert res.exit_code == 1 and "corrupt" in res.output


def test_eval_refuses_an_invalid_design(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import os\n\ndef update(memory, episode, tools):\n    pass\n")
    res = runner.invoke(app, ["eval", str(bad)], env={"COLUMNS": "200"})
    assert res.exit_code == 1
    assert "import of 'os' is not allowed" in res.output and "missing top-level function" in res.output
    res = runner.invoke(app, ["eval", str(tmp_path / "missing.py")])
    assert res.exit_code == 1 and "no design file" in res.output
    res = runner.invoke(app, ["eval", "no_such_baseline"])
    assert res.exit_code == 1 and "unknown baseline" in res.output


def test_resume_of_a_missing_run_is_an_error(tmp_path):
    res = runner.invoke(app, ["run", "--resume", str(tmp_path / "nope")])
    assert res.exit_code == 1 and "no config file" in res.output
