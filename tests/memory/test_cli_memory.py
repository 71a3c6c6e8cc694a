"""`atlas memory store / query / stats` end to end (real stores, n-gram embedder for speed)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from atlas.cli import app

runner = CliRunner()


def _write(tmp_path, data) -> str:
    path = tmp_path / "t.json"
    path.write_text(json.dumps(data))
    return str(path)


def test_store_query_stats_round_trip(tmp_path, traj):
    store_dir = str(tmp_path / "mem")
    file = _write(
        tmp_path,
        [
            traj("find the key in the kitchen").model_dump(mode="json"),
            traj("bring the lamp to room B", success=False).model_dump(mode="json"),
        ],
    )
    res = runner.invoke(app, ["memory", "store", file, "--path", store_dir, "--no-embed"])
    assert res.exit_code == 0, res.output
    lines = [json.loads(x) for x in res.stdout.strip().splitlines()]
    assert len(lines) == 2 and all(x["experience"] for x in lines)

    res = runner.invoke(app, ["memory", "query", "find the key in the kitchen now", "--path", store_dir])
    assert res.exit_code == 0 and "find the key in the kitchen" in res.stdout

    res = runner.invoke(
        app, ["memory", "query", "find the key in the kitchen now", "--path", store_dir, "--json", "-k", "1"]
    )
    assert len(json.loads(res.stdout)["experiences"]) == 1

    res = runner.invoke(app, ["memory", "stats", "--path", store_dir])
    stats = json.loads(res.stdout)
    assert stats["experience"] == 2 and stats["embedder"] == "ngram"


def test_bad_file_stores_nothing(tmp_path, traj):
    store_dir = str(tmp_path / "mem")
    good = traj("fine").model_dump(mode="json")
    file = _write(tmp_path, [good, {"steps": []}])
    res = runner.invoke(app, ["memory", "store", file, "--path", store_dir, "--no-embed"])
    assert res.exit_code == 2 and "task" in res.output
    assert not (tmp_path / "mem").exists()


def test_a_json_lines_file_stores_a_trajectory_per_line(tmp_path, traj):
    store_dir = str(tmp_path / "mem")
    rows = [
        traj("find the key").model_dump(mode="json"),
        traj("bring the lamp", success=False).model_dump(mode="json"),
    ]
    file = tmp_path / "t.jsonl"
    file.write_text(json.dumps(rows[0]) + "\n\n" + json.dumps(rows[1]) + "\n")
    res = runner.invoke(app, ["memory", "store", str(file), "--path", store_dir, "--no-embed"])
    assert res.exit_code == 0, res.output
    assert [json.loads(x)["success"] for x in res.stdout.strip().splitlines()] == [True, False]


def test_a_bad_json_line_is_named_and_nothing_is_stored(tmp_path, traj):
    file = tmp_path / "t.jsonl"
    file.write_text(json.dumps(traj("fine").model_dump(mode="json")) + "\n{not json\n")
    res = runner.invoke(app, ["memory", "store", str(file), "--path", str(tmp_path / "mem"), "--no-embed"])
    assert res.exit_code == 2 and "line 2: not valid JSON" in res.output
    assert not (tmp_path / "mem").exists()


def test_query_without_memory_is_an_error(tmp_path):
    res = runner.invoke(app, ["memory", "query", "x", "--path", str(tmp_path / "none")])
    assert res.exit_code == 2 and "no memory" in res.output


def test_every_command_has_help():
    for cmd in ("store", "query", "stats"):
        res = runner.invoke(app, ["memory", cmd, "--help"])
        assert res.exit_code == 0 and "--path" in res.stdout
