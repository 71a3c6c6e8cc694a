"""`atlas archive export RUN --best|--design ID --out DIR`: a self-contained folder, read back and checked."""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest
from typer.testing import CliRunner

from atlas.alma.deploy.export import export_design, load_export, mean_interval
from atlas.alma.state.archive import Archive
from atlas.cli import app
from atlas.errors import ArchiveError

cli = CliRunner()


def _route_id(run_dir) -> str:
    return Archive.load(run_dir).find(name="route_map")[0].id


def test_every_evaluated_design_keeps_what_it_learned(scripted_run):
    arch = Archive.load(scripted_run).hydrate()
    route = arch.get(_route_id(scripted_run))
    assert route.memory_path == f"memory/{route.id}.json"
    learned = route.learned
    assert learned["memory"] == {"episodes": 2} and learned["embedder"] == "minilm"
    goals = learned["tools"]["vectors"]["goals"]
    assert len(goals["ids"]) == 2 and goals["dim"] == 384 and goals["embeddings_b64"]
    assert learned["tools"]["graph"]["edges"]
    seed = arch.find(origin="seed")[0]
    assert seed.learned["memory"]["episodes"] == 2  # the seed design's own memory dict


def test_export_folder_is_self_contained(scripted_run, tmp_path):
    run = tmp_path / "run-copy"
    shutil.copytree(scripted_run, run)
    out = tmp_path / "exported"
    res = cli.invoke(app, ["archive", "export", str(run), "--design", _route_id(run), "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in out.iterdir()) == [
        "README.md",
        "advice.jsonl",
        "design.json",
        "design.py",
        "memory.json",
    ]
    shutil.rmtree(run)
    moved = tmp_path / "elsewhere"
    shutil.move(out, moved)
    exp = load_export(moved)  # the run folder is gone: nothing from it is needed
    m = exp.manifest
    assert m["design"]["name"] == "route_map" and m["embedder"] == {"name": "minilm", "dims": [384]}
    assert m["environment"]["env"] == "graphworld" and m["environment"]["rooms"] == 5
    assert m["models"]["task_model"] == "scripted"
    dep = m["scores"]["deployment"]
    assert dep["n"] == 2 and dep["low"] <= dep["mean"] <= dep["high"]
    gc = m["scores"]["goal_completion"]
    assert gc["tgc"]["n"] == 2 and f"{gc['tgc']['successes']}/2" == m["scores"]["solved"]["deployment"]
    assert "def recall" in exp.source and "find_similar" in exp.source
    assert [set(a) for a in exp.advice] == [{"task", "advice"}] * 2
    assert all(
        set(a["task"]) == {"goal", "observation", "observation_text", "actions", "domain"} for a in exp.advice
    )
    assert all(a["advice"].startswith(("Route:", "explore")) for a in exp.advice)
    assert "route_map" in (moved / "README.md").read_text()


def test_best_is_the_default_pick(scripted_run, tmp_path):
    res = cli.invoke(app, ["archive", "export", str(scripted_run), "--best", "--out", str(tmp_path / "b")])
    assert res.exit_code == 0, res.output
    best = Archive.load(scripted_run).best()
    assert load_export(tmp_path / "b").manifest["design"]["id"] == best.id


@pytest.mark.parametrize(
    "name, edit, expected",
    [
        ("memory.json", lambda t: t.replace('"episodes":2', '"episodes":3'), "does not match its checksum"),
        ("design.py", lambda t: t + "\n# edited\n", "design.py does not match its checksum"),
        ("advice.jsonl", lambda t: "", "advice.jsonl does not match"),
        ("design.json", lambda t: t[:40], "design.json is corrupt"),
    ],
)
def test_corrupted_export_is_a_clear_error(scripted_run, tmp_path, name, edit, expected):
    out = export_design(scripted_run, tmp_path / "e", design_id=_route_id(scripted_run))
    f = out / name
    f.write_text(edit(f.read_text()))
    with pytest.raises(ArchiveError, match=expected):
        load_export(out)


def test_missing_files_and_wrong_folders_are_clear_errors(scripted_run, tmp_path):
    with pytest.raises(ArchiveError, match="not a design export"):
        load_export(tmp_path)
    out = export_design(scripted_run, tmp_path / "e", design_id=_route_id(scripted_run))
    (out / "memory.json").unlink()
    with pytest.raises(ArchiveError, match=r"cannot read the export's memory\.json"):
        load_export(out)
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "notes.txt").write_text("mine")
    with pytest.raises(ArchiveError, match=r"not an export: choose an empty or new folder"):
        export_design(scripted_run, tmp_path / "full")


def test_cli_export_errors(scripted_run, tmp_path):
    res = cli.invoke(
        app, ["archive", "export", str(scripted_run), "--best", "--design", "d-0001", "--out", "x"]
    )
    assert res.exit_code == 2 and "not both" in res.output
    res = cli.invoke(app, ["archive", "export", str(scripted_run), "--best"])
    assert res.exit_code == 2 and "--out DIR is required" in res.output
    res = cli.invoke(
        app, ["archive", "export", str(scripted_run), "--design", "d-0999", "--out", str(tmp_path)]
    )
    assert res.exit_code == 2 and "no design 'd-0999'" in res.output


def test_a_run_without_learned_memory_says_so(scripted_run, tmp_path):
    """Runs made before learned memory was kept cannot be exported until `atlas archive relearn`."""
    old = tmp_path / "old-run"
    shutil.copytree(scripted_run, old)
    data = json.loads((old / "archive.json").read_text())
    for e in data["entries"]:
        e.pop("memory_path", None)
    (old / "archive.json").write_text(json.dumps(data))
    res = cli.invoke(
        app, ["archive", "export", str(old), "--best", "--out", str(tmp_path / "x")], env={"COLUMNS": "300"}
    )
    assert res.exit_code == 2
    assert "has no learned memory" in res.output and "atlas archive relearn RUN_DIR" in res.output


def test_mean_interval_is_reproducible():
    a = mean_interval([0.0, 0.5, 1.0, 0.75])
    assert a == mean_interval([0.0, 0.5, 1.0, 0.75]) and a["low"] <= a["mean"] <= a["high"]
    assert mean_interval([]) is None and mean_interval([0.6])["low"] == 0.6


def test_a_host_adapter_cannot_be_exported(tmp_path):
    from atlas.alma.state.archive import ArchiveEntry

    arch = Archive()
    entry = arch.add(
        ArchiveEntry(
            id="d-0001", name="memory_system", origin="host", deployment_score=0.5, normalized_score=0.1
        ),
        "# host adapter\n",
    )
    entry.learned = {
        "memory": {},
        "tools": {},
        "host": {"supported": False, "reason": "keeps its own stores"},
    }
    arch.save(tmp_path / "run" / "archive.json")
    with pytest.raises(ArchiveError, match="host-side adapter whose memory lives in its own stores"):
        export_design(tmp_path / "run", tmp_path / "out", design_id="d-0001")


@pytest.mark.parametrize("link", ["logs folder", "episodes file", "calls file"])
def test_export_never_copies_records_from_outside_the_run(scripted_run, tmp_path, link):
    """Someone else's run folder whose logs lead elsewhere: the export refuses, nothing is copied."""
    run = tmp_path / "run"
    shutil.copytree(scripted_run, run)
    design_id = _route_id(run)
    outside = tmp_path / "outside"
    shutil.copytree(run / "logs" / design_id, outside)
    for name in ("episodes.jsonl", "calls.jsonl"):
        rows = [json.loads(x) for x in (outside / name).read_text().splitlines()]
        for r in rows:
            r["return_value"] = "OUTSIDE-RECORD"
            if isinstance(r.get("task"), dict):
                r["task"]["goal"] = "OUTSIDE-RECORD"
        (outside / name).write_text("".join(json.dumps(r) + "\n" for r in rows))
    logs = run / "logs" / design_id
    if link == "logs folder":
        shutil.rmtree(logs)
        logs.symlink_to(outside)
    else:
        name = "episodes.jsonl" if link == "episodes file" else "calls.jsonl"
        (logs / name).unlink()
        (logs / name).symlink_to(outside / name)
    out = tmp_path / "exported"
    with pytest.raises(ArchiveError, match="outside"):
        export_design(run, out, design_id=design_id)
    res = cli.invoke(app, ["archive", "export", str(run), "--design", design_id, "--out", str(out)])
    assert res.exit_code == 2 and "outside" in res.output, res.output
    assert not (out / "advice.jsonl").exists()


SWAPPED = "def update(memory, episode, tools):\n    pass\n\n\ndef recall(memory, task, tools):\n    return 'swapped'\n"


def test_a_design_file_swapped_after_the_run_is_not_exported_under_its_scores(scripted_run, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(scripted_run, run)
    design_id = _route_id(run)
    (run / "designs" / f"{design_id}.py").write_text(SWAPPED)
    with pytest.raises(ArchiveError, match=r"not the design .* the run evaluated"):
        export_design(run, tmp_path / "out", design_id=design_id)
    # an archive from before source_sha256: the learned memory's design_hash still tells
    arch = json.loads((run / "archive.json").read_text())
    for e in arch["entries"]:
        e.pop("source_sha256", None)
    (run / "archive.json").write_text(json.dumps(arch))
    with pytest.raises(ArchiveError, match="not the design whose learned memory"):
        export_design(run, tmp_path / "out", design_id=design_id)


def test_a_served_design_swapped_after_the_export_is_refused(scripted_run, tmp_path, embedder):
    from atlas.alma.deploy.served import ServedDesign
    from atlas.errors import DesignError

    out = export_design(scripted_run, tmp_path / "e", design_id=_route_id(scripted_run))
    (out / "design.py").write_text(SWAPPED)
    manifest = json.loads((out / "design.json").read_text())  # checksums rewritten to match
    manifest["files"]["design.py"]["sha256"] = hashlib.sha256(SWAPPED.encode()).hexdigest()
    (out / "design.json").write_text(json.dumps(manifest))
    with pytest.raises(DesignError, match=r"not the design that learned memory\.json"):
        ServedDesign.open(out, embedder=embedder)
