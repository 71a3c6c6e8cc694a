"""Limits and repair in the memory library: sizes and depth refused with
clear errors, orphan vectors removed on reopen, a retried store is not a duplicate, processes
creating one directory at once all succeed, strict namespaces and scores."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from typer.testing import CliRunner

from atlas.cli import app
from atlas.core.types import Step, Task, Trajectory
from atlas.errors import InvalidInputError
from atlas.infra.embeddings import NGramEmbedder
from atlas.infra.vector_index import ChromaVectorStore
from atlas.memory import build_memory_system
from atlas.memory.common import MAX_TRAJECTORY_CHARS, validate_trajectory
from atlas.memory.guidelines.config import check_namespace
from atlas.memory.guidelines.messages import parse_trajectory

runner = CliRunner()
GOOD = {
    "task": {"description": "find the key"},
    "steps": [{"action": "look()", "observation": "a key"}],
    "success": True,
    "score": 0.5,
}


def _clean(res, code: int = 2) -> str:
    assert res.exit_code == code, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    return res.output


# ---- 9. sizes and depth ---------------------------------------------------------------------------


def test_a_huge_trajectory_is_refused_not_stored_whole(tmp_path, embedder):
    big = {**GOOD, "steps": [{"action": "look()", "observation": "x" * 100_000}] * 30}
    with pytest.raises(InvalidInputError, match=f"over the limit of {MAX_TRAJECTORY_CHARS}"):
        validate_trajectory(big)
    with pytest.raises(InvalidInputError, match="over the limit"):
        validate_trajectory(json.dumps(big))
    with pytest.raises(InvalidInputError, match="over the limit"):
        parse_trajectory(big)
    with build_memory_system(tmp_path / "m", embedder=embedder, components=["experience"]) as memory:
        with pytest.raises(InvalidInputError, match="over the limit"):
            memory.store(
                Trajectory(task=Task(description="t"), steps=[Step(action="a", observation="x" * 3_000_000)])
            )
        assert memory.stats() == {"experience": 0}


@pytest.mark.parametrize("cmd", ["memory", "guidelines"])
def test_deeply_nested_json_files_are_clear_errors(tmp_path, cmd):
    f = tmp_path / "deep.json"
    f.write_text('{"task": {"description": "t"}, "metadata": ' + "[" * 100_000 + "]" * 100_000 + "}")
    args = (
        ["memory", "store", str(f), "--path", str(tmp_path / "m"), "--no-embed"]
        if cmd == "memory"
        else ["guidelines", "save", str(f), "--path", str(tmp_path / "g"), "--model", "scripted:x"]
    )
    out = _clean(runner.invoke(app, args))
    assert "nests deeper" in out


def test_moderately_deep_metadata_is_refused_by_the_library():
    deep: dict = {}
    cur = deep
    for _ in range(100):
        cur["a"] = {}
        cur = cur["a"]
    with pytest.raises(InvalidInputError, match="nests deeper than 64"):
        validate_trajectory({**GOOD, "metadata": deep})


# ---- 10. smaller holes ---------------------------------------------------------------------------


@pytest.mark.parametrize("score", ["0.9", True])
def test_a_score_must_be_a_number(score):
    with pytest.raises(InvalidInputError, match="score: must be a number"):
        validate_trajectory({**GOOD, "score": score})
    with pytest.raises(InvalidInputError, match="score: must be a number"):
        parse_trajectory({**GOOD, "score": score})


@pytest.mark.parametrize("ns", ["alice\n", "alice\r\n", " alice", "al ice"])
def test_namespaces_with_whitespace_are_refused(ns):
    with pytest.raises(InvalidInputError, match="namespace"):
        check_namespace(ns)
    assert check_namespace("alice") == "alice"


def test_retrying_a_store_does_not_duplicate(tmp_path, embedder):
    traj = Trajectory(task=Task(description="bring the apple to room_C"), success=True)
    with build_memory_system(tmp_path / "m", embedder=embedder, components=["experience"]) as memory:
        first = memory.store(traj)
        again = memory.store(traj.model_dump(mode="json"))
        assert first["experience"] == again["experience"]
        assert memory.stats() == {"experience": 1}
        other = memory.store(Trajectory(task=Task(description="bring the apple to room_C"), success=True))
        assert other["experience"] != first["experience"] and memory.stats() == {"experience": 2}


CRASH_CHILD = textwrap.dedent(
    """
    import os, sys
    from atlas.core.types import Task, Trajectory
    from atlas.infra.embeddings import NGramEmbedder
    from atlas.infra.vector_index import ChromaVectorStore
    from atlas.memory import build_memory_system

    memory = build_memory_system(sys.argv[1], embedder=NGramEmbedder(), components=["experience"])
    memory.store(Trajectory(task=Task(description="bring the apple to room_C"), success=True))
    vector_add = ChromaVectorStore.add_sync

    def add_then_die(self, *args, **kwargs):
        vector_add(self, *args, **kwargs)
        os._exit(9)  # killed after the Chroma write, before the SQLite commit

    ChromaVectorStore.add_sync = add_then_die
    memory.store(Trajectory(task=Task(description="bring the apple to room_D"), success=True))
    """
)


def test_orphan_vectors_are_repaired_when_the_store_is_reopened(tmp_path):
    proc = subprocess.run([sys.executable, "-c", CRASH_CHILD, str(tmp_path / "mem")], capture_output=True)
    assert proc.returncode == 9, proc.stderr.decode()[-2000:]
    chroma = ChromaVectorStore.persistent(tmp_path / "mem" / "chroma", "atlas_experiences")
    assert chroma.count_sync() == 2  # the orphan is there
    chroma.close()
    with build_memory_system(tmp_path / "mem", embedder=NGramEmbedder(), components=["experience"]) as memory:
        assert memory.stats() == {"experience": 1}
    chroma = ChromaVectorStore.persistent(tmp_path / "mem" / "chroma", "atlas_experiences")
    assert chroma.count_sync() == 1
    chroma.close()


CREATE_CHILD = textwrap.dedent(
    """
    import sys, time
    from atlas.core.types import Task, Trajectory
    from atlas.infra.embeddings import NGramEmbedder
    from atlas.memory import build_memory_system

    while time.time() < float(sys.argv[3]):  # start together
        time.sleep(0.001)
    with build_memory_system(sys.argv[1], embedder=NGramEmbedder(), components=["experience"]) as memory:
        memory.store(Trajectory(task=Task(description="task " + sys.argv[2]), success=True))
    """
)


def test_processes_creating_one_memory_directory_at_once_all_succeed(tmp_path):
    import time

    start = str(time.time() + 3.0)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CREATE_CHILD, str(tmp_path / "mem"), str(i), start], stderr=subprocess.PIPE
        )
        for i in range(4)
    ]
    errors = [p.communicate(timeout=300)[1].decode()[-1500:] for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0, 0], errors
    with build_memory_system(tmp_path / "mem", embedder=NGramEmbedder(), components=["experience"]) as memory:
        assert memory.stats() == {"experience": 4}
