"""Rebuilding the learned memory of a run made before it was kept: replay the recorded episodes,
keep the memory only when every recall matches the run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from atlas.alma.deploy.export import export_design, load_export
from atlas.alma.deploy.relearn import parse_action, relearn
from atlas.alma.state.archive import Archive
from atlas.cli import app


def _as_old_run(run: Path, dest: Path) -> Path:
    """A copy of ``run`` as a run made before learned memory was kept."""
    shutil.copytree(run, dest)
    shutil.rmtree(dest / "memory")
    data = json.loads((dest / "archive.json").read_text())
    for e in data["entries"]:
        e.pop("memory_path", None)
    (dest / "archive.json").write_text(json.dumps(data))
    for f in dest.glob("logs/*/episodes.jsonl"):
        rows = [json.loads(x) for x in f.read_text().splitlines()]
        f.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "task"}) + "\n" for r in rows))
    return dest


def test_replay_rebuilds_exactly_what_the_search_kept(scripted_run, tmp_path, embedder):
    old = _as_old_run(scripted_run, tmp_path / "old")
    results = relearn(old, embedder=embedder)
    assert [(r.name, r.ok) for r in results] == [
        ("no_memory", True),
        ("graphworld_seed", True),
        ("route_map", True),
    ]
    assert all(r.recalls_matched == 4 for r in results)  # 2 collection + 2 deployment recalls each
    kept, rebuilt = Archive.load(scripted_run).hydrate(), Archive.load(old).hydrate()
    for e in kept:
        assert rebuilt.get(e.id).learned == e.learned
        assert "rebuilt by replaying" in rebuilt.get(e.id).metadata["learned_memory"]
    route = kept.find(name="route_map")[0].id
    a = load_export(export_design(scripted_run, tmp_path / "a", design_id=route)).advice
    b = load_export(export_design(old, tmp_path / "b", design_id=route)).advice
    assert a == b


def test_a_replay_that_differs_from_the_run_is_not_kept(scripted_run, tmp_path, embedder):
    old = _as_old_run(scripted_run, tmp_path / "old")
    route = Archive.load(old).find(name="route_map")[0]
    calls = old / route.logs_dir / "calls.jsonl"
    rows = [json.loads(x) for x in calls.read_text().splitlines()]
    for r in rows:
        if r["phase"] == "recall" and r["episode"] == "D2":
            r["return_value"] = "Route: somewhere else"
    calls.write_text("".join(json.dumps(r) + "\n" for r in rows))
    res = CliRunner().invoke(
        app, ["archive", "relearn", str(old), "--design", route.id], env={"COLUMNS": "300"}
    )
    assert res.exit_code == 0, res.output
    assert "not rebuilt: the replay differs from the run: D2: recall returned" in res.output
    entry = Archive.load(old).get(route.id)
    assert entry.memory_path is None and "not rebuilt" in entry.metadata["learned_memory"]
    res = CliRunner().invoke(
        app,
        ["archive", "export", str(old), "--design", route.id, "--out", str(tmp_path / "x")],
        env={"COLUMNS": "300"},
    )
    assert res.exit_code == 2 and "not rebuilt: the replay differs" in res.output


def test_parse_action_inverts_action_text():
    tools = {"move_to", "look", "pick_up"}
    assert parse_action('move_to(room="room_B")', tools) == ("move_to", {"room": "room_B"})
    assert parse_action("look()", tools) == ("look", {})
    assert parse_action('fly(to="moon")', tools) is None
    assert parse_action("(no action)", tools) is None
    assert parse_action('move_to("room_B")', tools) is None


def test_readvise_replays_the_recorded_games_through_another_design(scripted_run, tmp_path):
    route = Archive.load(scripted_run).find(name="route_map")[0]
    calls = [json.loads(x) for x in (scripted_run / route.logs_dir / "calls.jsonl").read_text().splitlines()]
    recorded = {c["episode"]: c["return_value"] for c in calls if c["phase"] == "recall"}
    assert recorded["D1"], recorded  # the route map says something once it has learned the rooms

    def readvise(design: str, using: str) -> object:
        args = ["archive", "readvise", str(scripted_run), "--design", design, "--with", using, "--tasks", "1"]
        return CliRunner().invoke(app, args, env={"COLUMNS": "300"})

    # the same design over its own games says what the run recorded; no memory over them says nothing
    res = readvise(route.id, str(scripted_run / route.source_path))
    assert res.exit_code == 0, res.output
    assert recorded["D1"] in res.output, res.output
    res = readvise(route.id, "no_memory")
    assert res.exit_code == 0 and "(no advice)" in res.output and recorded["D1"] not in res.output, res.output
    res = readvise("d-9999", "no_memory")
    assert res.exit_code == 2 and "has no design 'd-9999'" in res.output, res.output
    crashing = tmp_path / "crashing.py"
    crashing.write_text(
        "def update(memory, episode, tools):\n    raise ValueError('no room for it')\n\n\n"
        "def recall(memory, task, tools):\n    return 'never reached'\n"
    )
    res = readvise(route.id, str(crashing))
    assert res.exit_code == 2 and "update failed on collection game C1" in res.output, res.output
    assert "no room for it" in res.output, res.output
    # a log whose game no longer replays as recorded is a clear error, not advice from other games
    episodes = scripted_run / route.logs_dir / "episodes.jsonl"
    saved = episodes.read_text()
    rows = [json.loads(x) for x in saved.splitlines()]
    rows[0]["score"] = 0.5 if rows[0]["score"] != 0.5 else 0.25
    try:
        episodes.write_text("".join(json.dumps(r) + "\n" for r in rows))
        res = readvise(route.id, "no_memory")
        assert res.exit_code == 2 and "the replay differs from the run" in res.output, res.output
    finally:
        episodes.write_text(saved)
