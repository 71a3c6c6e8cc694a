"""Archive: entries, atomic save/load, hydrate, best(), corrupt files."""

from __future__ import annotations

import json
import time

import pytest

from atlas.alma.state.archive import Archive, ArchiveEntry, TaskResult
from atlas.errors import ArchiveError

SRC_A = "def update(memory, episode, tools):\n    pass\n\ndef recall(memory, task, tools):\n    return ''\n"
SRC_B = SRC_A.replace("pass", "memory['n'] = memory.get('n', 0) + 1")


def _entry(arch: Archive, name: str, norm: float | None, status: str = "ok", **kw) -> ArchiveEntry:
    return ArchiveEntry(
        id=arch.next_id(),
        name=name,
        status=status,
        collection_score=None if norm is None else 0.5,
        deployment_score=None if norm is None else 0.4 + norm,
        normalized_score=norm,
        per_task=[
            TaskResult(task_id="t1", phase="deployment", success=True, score=0.6, steps=12, label="D1")
        ],
        **kw,
    )


def test_add_ids_and_best():
    arch = Archive()
    arch.add(_entry(arch, "no_memory", 0.0, origin="baseline"), SRC_A)
    arch.add(_entry(arch, "good", 0.2), SRC_B)
    arch.add(_entry(arch, "broken", None, status="invalid", errors=["line 1: syntax"]), "def (")
    assert [e.id for e in arch] == ["d-0001", "d-0002", "d-0003"]
    assert arch.best().name == "good"
    assert arch.best(origin="baseline").name == "no_memory"
    assert [e.name for e in arch.scored()] == ["no_memory", "good"]
    # novelty against the others; invalid designs are not compared
    assert arch.get("d-0001").novelty == arch.get("d-0002").novelty > 0
    assert arch.get("d-0003").novelty is None
    with pytest.raises(ArchiveError):
        arch.add(ArchiveEntry(id="d-0001", name="dup"))


def test_best_of_empty_archive_is_none():
    assert Archive().best() is None


def test_save_load_hydrate_round_trip(tmp_path):
    arch = Archive()
    arch.baseline = {
        "score": 0.41,
        "per_task": [{"task_id": "t", "success": True, "score": 0.6, "steps": 16}],
    }
    arch.add(_entry(arch, "no_memory", 0.0, origin="baseline"), SRC_A)
    arch.add(_entry(arch, "good", 0.2, parent_ids=["d-0001"], critique="store less"), SRC_B)
    arch.iterations.append({"generation": 1, "parent_ids": ["d-0001"], "child_id": "d-0002", "status": "ok"})
    path = arch.save(tmp_path / "archive.json")

    data = json.loads(path.read_text())
    assert data["version"] == 1
    assert data["entries"][1]["source_path"] == "designs/d-0002.py"
    assert "source" not in data["entries"][1]
    assert (tmp_path / "designs" / "d-0002.py").read_text() == SRC_B

    loaded = Archive.load(tmp_path)  # a run folder works too
    assert loaded.get("d-0002").source is None
    loaded.hydrate()
    assert loaded.get("d-0002").source == SRC_B
    assert loaded.to_dict() == arch.to_dict()
    assert loaded.best().critique == "store less"


def test_export_is_self_contained(tmp_path):
    arch = Archive()
    arch.add(_entry(arch, "good", 0.2), SRC_B)
    arch.save(tmp_path / "run" / "archive.json")
    out = Archive.load(tmp_path / "run").export(tmp_path / "export.json")
    again = Archive.load(out)
    assert again.get("d-0001").source == SRC_B  # inline, no designs/ folder next to it


def test_save_keeps_a_backup_and_corrupt_file_raises(tmp_path):
    arch = Archive()
    arch.add(_entry(arch, "a", 0.1), SRC_A)
    p = arch.save(tmp_path / "archive.json")
    arch.add(_entry(arch, "b", 0.2), SRC_B)
    arch.save()
    bak = tmp_path / "archive.json.bak"
    assert len(json.loads(bak.read_text())["entries"]) == 1

    p.write_text('{"version": 1, "entries": [ {"id": ')  # torn write
    with pytest.raises(ArchiveError) as info:
        Archive.load(p)
    assert "corrupt" in str(info.value) and "archive.json.bak" in str(info.value)
    assert bak.exists()
    assert len(Archive.load(bak).entries) == 1


def test_not_an_archive(tmp_path):
    (tmp_path / "archive.json").write_text('{"hello": 1}')
    with pytest.raises(ArchiveError, match="not an ALMA archive"):
        Archive.load(tmp_path)
    (tmp_path / "archive.json").write_text('{"version": 9, "entries": []}')
    with pytest.raises(ArchiveError, match="version"):
        Archive.load(tmp_path)
    with pytest.raises(ArchiveError, match="no archive"):
        Archive.load(tmp_path / "missing")


def test_design_needs_hydrate(tmp_path):
    arch = Archive()
    arch.add(_entry(arch, "a", 0.1), SRC_A)
    arch.save(tmp_path / "archive.json")
    loaded = Archive.load(tmp_path)
    with pytest.raises(ArchiveError, match="hydrate"):
        _ = loaded.get("d-0001").design


def test_hydrate_rebuilds_designs(tmp_path):
    arch = Archive()
    arch.add(_entry(arch, "good", 0.2, parent_ids=[], origin="meta", generation=3), SRC_B)
    arch.save(tmp_path / "archive.json")
    design = Archive.load(tmp_path).hydrate().best().design
    assert design.source == SRC_B and design.name == "good" and design.origin == "meta"
    assert design.check() == []


def _saved(tmp_path) -> dict:
    arch = Archive()
    arch.baseline = {"score": 0.4}
    arch.add(_entry(arch, "no_memory", 0.0, origin="baseline"), SRC_A)
    arch.add(_entry(arch, "good", 0.2, generation=1), SRC_B)
    arch.iterations.append({"generation": 1, "parent_ids": ["d-0001"], "child_id": "d-0002", "status": "ok"})
    arch.save(tmp_path / "archive.json")
    arch.save()  # a second save leaves archive.json.bak beside it
    return json.loads((tmp_path / "archive.json").read_text())


def _set(path: list, value):
    def edit(d: dict) -> None:
        target = d
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return edit


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (_set(["entries"], 5), "'entries' must be a list"),
        (_set(["baseline"], "high"), "'baseline' must be an object"),
        (_set(["iterations"], [1]), "'iterations' must be a list of objects"),
        (_set(["iterations"], [{"child_id": "d-0002"}]), "integer 'generation'"),
        (_set(["entries", 1], "d-0002"), "invalid entry #2"),
        (lambda d: d["entries"][1].pop("name"), "invalid entry d-0002: name: Field required"),
        (_set(["entries", 1, "normalized_score"], "high"), "invalid entry d-0002: normalized_score"),
        (
            _set(["entries", 1, "per_task", 0, "score"], float("nan")),
            "per_task.0.score: Input should be a finite number",
        ),
        (_set(["entries", 1, "id"], "d-0001"), "duplicate entry ids d-0001"),
        (_set(["run_time_s"], -5), "'run_time_s' must be a number of seconds"),
        (_set(["run_time_s"], "an hour"), "'run_time_s' must be a number of seconds"),
    ],
)
def test_corrupt_archive_content_is_a_clear_error_with_the_backup_hint(tmp_path, edit, expected):
    data = _saved(tmp_path)
    edit(data)
    (tmp_path / "archive.json").write_text(json.dumps(data))  # json writes NaN as NaN, which json reads back
    with pytest.raises(ArchiveError) as info:
        Archive.load(tmp_path)
    assert expected in str(info.value)
    assert "archive.json.bak (copy it over archive.json to recover)" in str(info.value)
    assert len(Archive.load(tmp_path / "archive.json.bak")) == 2  # the hint is true


def test_next_id_never_reuses_an_id_when_an_edited_archive_has_gaps(tmp_path):
    data = _saved(tmp_path)
    data["entries"][1]["id"] = "d-0005"
    (tmp_path / "archive.json").write_text(json.dumps(data))
    arch = Archive.load(tmp_path)
    assert arch.next_id() == "d-0006"
    assert Archive().next_id() == "d-0001"


def test_missing_design_file_names_the_entry_and_the_way_back(tmp_path):
    _saved(tmp_path)
    (tmp_path / "designs" / "d-0002.py").unlink()
    with pytest.raises(
        ArchiveError, match=r"source of d-0002 \(good\).*restore that file.*atlas archive export"
    ):
        Archive.load(tmp_path).hydrate()
    only = Archive.load(tmp_path).hydrate(["d-0001"])  # the other sources are still readable
    assert only.get("d-0001").source == SRC_A and only.get("d-0002").source is None


LEARNED = {
    "version": 1,
    "design_id": "d-0002",
    "frozen": False,
    "memory": {"rooms": ["room_A", "room_B"]},
    "tools": {"vectors": {}, "graph": {"nodes": ["room_A", "room_B"], "edges": [["room_A", "room_B"]]}},
    "embedder": "minilm",
}


def test_learned_memory_is_saved_beside_the_entry_and_hydrated_back(tmp_path):
    arch = Archive()
    arch.add(_entry(arch, "no_memory", 0.0, origin="baseline"), SRC_A)
    good = arch.add(_entry(arch, "good", 0.2), SRC_B)
    good.learned = LEARNED
    arch.save(tmp_path / "archive.json")
    assert good.memory_path == "memory/d-0002.json" and arch.get("d-0001").memory_path is None
    assert json.loads((tmp_path / "memory" / "d-0002.json").read_text()) == LEARNED
    assert not list((tmp_path / "memory").glob(".*.tmp"))  # atomic: no temporary file left behind

    loaded = Archive.load(tmp_path)
    assert loaded.get("d-0002").learned is None  # load reads scores only
    loaded.hydrate()
    assert loaded.get("d-0002").learned == LEARNED and loaded.get("d-0001").learned is None


def test_learned_memory_over_the_cap_is_not_saved_and_the_entry_says_why(tmp_path, monkeypatch):
    import atlas.alma.state.learned as learned_mod

    monkeypatch.setattr(learned_mod, "MAX_LEARNED_BYTES", 100)
    arch = Archive()
    big = arch.add(_entry(arch, "hoarder", 0.1), SRC_B)
    big.learned = {**LEARNED, "memory": {"blob": "x" * 500}}
    arch.save(tmp_path / "archive.json")
    assert big.memory_path is None and not (tmp_path / "memory").exists()
    assert "over the cap of 100" in Archive.load(tmp_path).get("d-0001").metadata["learned_memory"]


def test_corrupt_learned_memory_is_a_clear_error(tmp_path):
    arch = Archive()
    arch.add(_entry(arch, "good", 0.2), SRC_B).learned = LEARNED
    arch.save(tmp_path / "archive.json")
    (tmp_path / "memory" / "d-0001.json").write_text('{"memory": [torn')
    with pytest.raises(ArchiveError, match=r"cannot read the learned memory of d-0001 at .*d-0001.json"):
        Archive.load(tmp_path).hydrate()


def test_the_run_time_is_kept_across_resumes_and_old_archives_count_their_generations(tmp_path):
    data = _saved(tmp_path)
    assert data["run_time_s"] == 0  # its clock never started: no search ran
    data["run_time_s"] = 600.0
    (tmp_path / "archive.json").write_text(json.dumps(data))
    arch = Archive.load(tmp_path)
    arch.clock.start()
    assert 600.0 <= arch.clock.run_time_s() < 660.0
    arch.save()
    assert Archive.load(tmp_path).clock.earlier_s >= 600.0
    del data["run_time_s"]  # written before the run's time was kept: its generations' durations
    data["iterations"] = [
        {"generation": 1, "duration_s": 90.5},
        {"generation": 2},
        {"generation": 3, "duration_s": 30},
    ]
    (tmp_path / "archive.json").write_text(json.dumps(data))
    assert Archive.load(tmp_path).clock.earlier_s == 120.5


def test_atomic_writes_keep_the_files_mode_and_give_a_new_one_the_umasks(tmp_path):
    """A run folder's files are readable as any file the user writes (a temporary file is 0600)."""
    import os
    import stat

    from atlas.alma.state.run_dir import atomic_write_text

    umask = os.umask(0o022)
    os.umask(umask)
    try:
        fresh = tmp_path / "archive.json"
        atomic_write_text(fresh, "{}")
        assert stat.S_IMODE(fresh.stat().st_mode) == 0o666 & ~umask
        private = tmp_path / "secret.json"
        private.write_text("{}")
        private.chmod(0o600)
        atomic_write_text(private, '{"a": 1}')
        assert stat.S_IMODE(private.stat().st_mode) == 0o600 and private.read_text() == '{"a": 1}'
    finally:
        os.umask(umask)


def _wait_for(path, timeout_s=20.0):
    deadline = time.monotonic() + timeout_s
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    return path.exists()


def test_a_run_killed_between_saves_resumes_with_the_time_it_ticked(tmp_path):
    data = _saved(tmp_path)
    data["run_time_s"] = 600.0
    (tmp_path / "archive.json").write_text(json.dumps(data))
    arch = Archive.load(tmp_path)
    clock_file = tmp_path / "run_clock.json"
    arch.clock.start(keep=clock_file, every_s=0.05)
    assert _wait_for(clock_file)
    arch.clock.stop()  # killed here: the archive was not saved again
    ticked = json.loads(clock_file.read_text())["run_time_s"]
    assert ticked >= 600.0
    assert Archive.load(tmp_path).clock.earlier_s == ticked
    clock_file.write_text(json.dumps({"run_time_s": 5.0}))  # behind the archive: the archive's time
    assert Archive.load(tmp_path).clock.earlier_s == 600.0


@pytest.mark.parametrize(
    "text", ['{"run_time_s": ', '{"run_time_s": "slow"}', '{"run_time_s": -3}', "[1, 2]", "\xff\xfe"]
)
def test_an_unreadable_run_clock_is_ignored_and_the_archive_time_kept(tmp_path, text, caplog):
    data = _saved(tmp_path)
    data["run_time_s"] = 42.0
    (tmp_path / "archive.json").write_text(json.dumps(data))
    (tmp_path / "run_clock.json").write_text(text, encoding="latin-1")
    assert Archive.load(tmp_path).clock.earlier_s == 42.0
    assert "ignoring" in caplog.text and "run_clock.json" in caplog.text
