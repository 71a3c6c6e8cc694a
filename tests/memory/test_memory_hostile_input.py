"""Hostile and broken input to the memory library: every case ends in a clear AtlasError (or a CLI
message with exit code 2 and no traceback), nothing is written, and no failure hides as "nothing found"."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from typer.testing import CliRunner

from atlas.cli import app
from atlas.core.types import Step, Task, Trajectory
from atlas.errors import ConfigError, InvalidInputError
from atlas.memory import build_memory_system
from atlas.memory.common import validate_trajectory

runner = CliRunner()
GOOD = {
    "task": {"description": "find the key in the kitchen"},
    "steps": [{"action": "look()", "observation": "a key"}],
    "success": True,
    "score": 0.5,
}


def _store(tmp_path, content: str | bytes, *extra: str):
    file = tmp_path / "in.json"
    if isinstance(content, bytes):
        file.write_bytes(content)
    else:
        file.write_text(content, encoding="utf-8")
    return runner.invoke(
        app, ["memory", "store", str(file), "--path", str(tmp_path / "mem"), "--no-embed", *extra]
    )


def _clean_exit(res, code: int = 2) -> str:
    assert res.exit_code == code, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception  # no traceback
    return res.output


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"\xff\xfe{", "cannot read"),
        ('"just a string"', "expected a trajectory object"),
        ("[1, 2]", "item 0 is int"),
        ("[]", "holds no trajectories"),
        ('{"trajectories": []}', "holds no trajectories"),
        (json.dumps({**GOOD, "score": float("nan")}), "score"),
        (json.dumps({**GOOD, "score": float("inf")}), "score"),
        (json.dumps({**GOOD, "score": 7}), "score: must be a number from 0 to 1"),
        (json.dumps({**GOOD, "score": -0.5}), "score: must be a number from 0 to 1"),
        (json.dumps({**GOOD, "success": "yes"}), "success: must be true or false"),
        (json.dumps({**GOOD, "success": 1}), "success: must be true or false"),
        (
            json.dumps(GOOD).replace("the key", "the \\ud800 key"),
            "task.description: contains a lone surrogate",
        ),
        (json.dumps({**GOOD, "metadata": {"r": float("nan")}}), "metadata.r: nan is not a finite number"),
        (
            json.dumps({**GOOD, "steps": [{"action": "go", "observation": "ok", "reward": 1}]}),
            "steps.0.reward: not a field here; the fields are action, observation,",
        ),
        (json.dumps({**GOOD, "task": {**GOOD["task"], "colour": 1}}), "task.colour: not a field here"),
    ],
)
def test_store_rejects_bad_files_and_writes_nothing(tmp_path, content, expected):
    out = _clean_exit(_store(tmp_path, content))
    assert expected in out
    assert not (tmp_path / "mem").exists()


def test_store_names_the_bad_trajectory_in_a_list(tmp_path):
    out = _clean_exit(_store(tmp_path, json.dumps([GOOD, {**GOOD, "success": "no"}])))
    assert "trajectory 1" in out and "success" in out
    assert not (tmp_path / "mem").exists()


def test_utf8_bom_file_is_read(tmp_path):
    res = _store(tmp_path, "\ufeff" + json.dumps(GOOD))
    assert res.exit_code == 0, res.output


def test_unicode_nul_and_huge_strings_round_trip(tmp_path, embedder):
    big = "x" * 1_000_000
    traj = Trajectory(
        task=Task(description="найти ключ 🔑 in the\x00kitchen"),
        steps=[Step(action=big, observation="nul\x00inside")],
        success=True,
        score=1.0,
    )
    with build_memory_system(tmp_path / "mem", embedder=embedder) as memory:
        assert memory.store(traj)["errors"] == {}
    with build_memory_system(tmp_path / "mem", embedder=embedder) as memory:
        (found,) = memory.query_sync("найти ключ", k=1).experiences
    assert found.task.description == traj.task.description
    assert found.steps[0].action == big and found.steps[0].observation == "nul\x00inside"


def test_a_trajectory_object_with_bad_values_is_refused(embedder):
    traj = Trajectory(task=Task(description="t"), score=0.5)
    object.__setattr__(traj, "score", float("nan"))  # bypasses validate_assignment, like model_construct
    with pytest.raises(InvalidInputError, match="score"):
        validate_trajectory(traj)
    with pytest.raises(InvalidInputError, match="not valid JSON"):
        validate_trajectory("{not json")
    with pytest.raises(InvalidInputError, match="expected a JSON object"):
        validate_trajectory("[1]")


@pytest.mark.parametrize("k", [0, -1, "3", 2.5, True])
def test_bad_k_is_an_error_not_an_empty_result(embedder, traj, k):
    with build_memory_system(None, embedder=embedder) as memory:
        memory.store(traj("bring the apple to room_C"))
        with pytest.raises(InvalidInputError, match="k: must be an integer >= 1"):
            memory.query_sync("bring the apple", k=k)
        with pytest.raises(InvalidInputError, match="k:"):
            memory.experience_memory.search("bring the apple", k=k)
        with pytest.raises(InvalidInputError, match="k:"):
            memory.concept_library.search("bring the apple", k=k)


def test_empty_store_answers_empty_without_errors(embedder):
    with build_memory_system(None, embedder=embedder) as memory:
        result = memory.query_sync("anything at all", k=3)
    assert result.is_empty() and result.errors == {}


def test_path_that_is_a_file(tmp_path, embedder):
    afile = tmp_path / "afile"
    afile.write_text("hi")
    with pytest.raises(ConfigError, match="not a directory"):
        build_memory_system(afile, embedder=embedder)
    good = tmp_path / "t.json"
    good.write_text(json.dumps(GOOD))
    for args in (["store", str(good)], ["query", "x"], ["stats"]):
        out = _clean_exit(runner.invoke(app, ["memory", *args, "--path", str(afile), "--no-embed"]))
        assert "is a file" in out
    assert afile.read_text() == "hi"


def test_missing_path_for_reading_is_an_error(tmp_path):
    for args in (["query", "x"], ["stats"]):
        out = _clean_exit(runner.invoke(app, ["memory", *args, "--path", str(tmp_path / "none")]))
        assert "no memory at" in out
    assert not (tmp_path / "none").exists()


@pytest.mark.parametrize("content", ["{oops", "[1]"])
def test_corrupt_memory_json_is_a_clear_error(tmp_path, content):
    assert _store(tmp_path, json.dumps(GOOD)).exit_code == 0
    (tmp_path / "mem" / "memory.json").write_text(content)
    for args in (["stats"], ["query", "find the key"]):
        out = _clean_exit(runner.invoke(app, ["memory", *args, "--path", str(tmp_path / "mem")]))
        assert "memory.json" in out


def test_corrupt_sqlite_is_a_clear_error(tmp_path):
    assert _store(tmp_path, json.dumps(GOOD)).exit_code == 0
    db = tmp_path / "mem" / "records.sqlite"
    for side in ("records.sqlite-wal", "records.sqlite-shm"):
        (tmp_path / "mem" / side).unlink(missing_ok=True)
    db.write_bytes(b"this is not a database" * 200)
    out = _clean_exit(runner.invoke(app, ["memory", "stats", "--path", str(tmp_path / "mem")]))
    assert "records.sqlite" in out and "not a database" in out


CRASH_CHILD = textwrap.dedent(
    """
    import os, sys
    from atlas.core.types import Task, Trajectory
    from atlas.infra.embeddings import default_embedder
    from atlas.infra.vector_index import ChromaVectorStore
    from atlas.memory import build_memory_system

    memory = build_memory_system(sys.argv[1], embedder=default_embedder(), components=["experience"])
    memory.store(Trajectory(task=Task(description="bring the apple to room_C"), success=True))
    vector_add = ChromaVectorStore.add_sync

    def add_then_die(self, *args, **kwargs):
        vector_add(self, *args, **kwargs)
        os._exit(9)  # killed after the Chroma write, before the SQLite commit

    ChromaVectorStore.add_sync = add_then_die
    memory.store(Trajectory(task=Task(description="bring the apple to room_D"), success=True))
    """
)


def test_reopen_after_a_crash_between_vector_and_record_write(tmp_path, embedder):
    proc = subprocess.run([sys.executable, "-c", CRASH_CHILD, str(tmp_path / "mem")], capture_output=True)
    assert proc.returncode == 9, proc.stderr.decode()[-2000:]
    with build_memory_system(tmp_path / "mem", embedder=embedder, components=["experience"]) as memory:
        assert memory.stats() == {"experience": 1}  # the interrupted write left no record
        found = memory.query_sync("bring the apple to room_D", k=1).experiences
    # the orphan vector is the nearest one; it must not take the only slot and hide the real record
    assert [e.task.description for e in found] == ["bring the apple to room_C"]
