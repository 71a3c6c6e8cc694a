"""Kill + resume: a run stopped between iterations and resumed from its folder ends with the same
archive as an uninterrupted run, with no entry lost or duplicated."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from alma_doubles import GIVE_UP_DESIGN, ROUTE_DESIGN, debug_policy, fenced, meta_policy, task_policy

import atlas.alma
from atlas.alma import Archive
from atlas.errors import ArchiveError
from atlas.infra.llm import ScriptedLLM
from atlas.trace import read_trace

SETTINGS = dict(env="graphworld", iterations=3, episodes=2, rooms=5, deploy_seeds=1, seed=7, meta_turns=2,
                baselines=["trajectory_retrieval"], quiet=True)
VOLATILE = {"created_at", "duration_s", "eval_duration_s"}


def llms():
    meta = ScriptedLLM(meta_policy({1: [fenced("route_map", ROUTE_DESIGN)], 2: [fenced("give_up", GIVE_UP_DESIGN)],
                                    3: [fenced("route_map_2", ROUTE_DESIGN.replace("explore", "look around"))]}))
    return dict(llm=ScriptedLLM(task_policy), meta_llm=meta, debug_llm=ScriptedLLM(debug_policy))


def stable(obj):
    """The archive without wall-clock facts (timestamps, durations). Token counts are reduced to
    the number of calls: the DebugAgent's prompt quotes call timings from the runtime logs, so its
    length (and the scripted model's rough token count) varies with the machine's load."""
    if isinstance(obj, dict):
        return {k: ({"calls": v["calls"]} if k == "usage" and isinstance(v, dict) else stable(v))
                for k, v in obj.items() if k not in VOLATILE}
    if isinstance(obj, list):
        return [stable(v) for v in obj]
    return obj


def differences(a, b, path="") -> list[str]:
    """Paths where two JSON values differ (a readable failure message)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            out += differences(a.get(k), b.get(k), f"{path}.{k}")
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in differences(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path}: {str(a)[:200]!r} != {str(b)[:200]!r}"]


class Killed(RuntimeError):
    pass


def kill_after(generation: int):
    def cb(event: str, fields: dict) -> None:
        if event == "iteration.stop" and fields["generation"] == generation:
            raise Killed(f"simulated kill after iteration {generation}")

    return cb


@pytest.mark.slow
def test_kill_then_resume_equals_uninterrupted(tmp_path: Path, embedder):
    full, _ = atlas.alma.run(run_dir=tmp_path / "full", embedder=embedder, **llms(), **SETTINGS)

    with pytest.raises(Killed):
        atlas.alma.run(run_dir=tmp_path / "killed", embedder=embedder, callbacks=[kill_after(1)], **llms(),
                       **SETTINGS)
    partial = Archive.load(tmp_path / "killed")
    assert [it["generation"] for it in partial.iterations] == [1]
    assert len(partial) == 4

    resumed, trace_path = atlas.alma.run(resume=tmp_path / "killed", embedder=embedder, **llms())
    assert [e.id for e in resumed] == [e.id for e in full]  # nothing lost, nothing duplicated
    assert len({e.id for e in resumed}) == len(resumed)
    a = stable(json.loads((tmp_path / "full" / "archive.json").read_text()))
    b = stable(json.loads((tmp_path / "killed" / "archive.json").read_text()))
    assert differences(a, b) == []
    for e in full:  # same sources on disk
        assert (tmp_path / "full" / e.source_path).read_text() == (tmp_path / "killed" / e.source_path).read_text()
    events = [ev["event"] for ev in read_trace(trace_path)]
    assert "run.resume" in events
    assert [ev["generation"] for ev in read_trace(trace_path) if ev["event"] == "iteration.stop"] == [1, 2, 3]


def test_resume_of_a_finished_run_adds_nothing_and_can_extend(tmp_path: Path, embedder):
    settings = {**SETTINGS, "iterations": 1}
    atlas.alma.run(run_dir=tmp_path / "r", embedder=embedder, **llms(), **settings)
    before = json.loads((tmp_path / "r" / "archive.json").read_text())
    again, _ = atlas.alma.run(resume=tmp_path / "r", embedder=embedder, **llms())
    assert stable(json.loads((tmp_path / "r" / "archive.json").read_text())) == stable(before)
    more, _ = atlas.alma.run(resume=tmp_path / "r", embedder=embedder, iterations=2, **llms())
    assert [it["generation"] for it in more.iterations] == [1, 2] and len(more) == len(again) + 1


def test_resume_of_a_corrupt_archive_is_a_clear_error(tmp_path: Path, embedder):
    atlas.alma.run(run_dir=tmp_path / "r", embedder=embedder, **llms(), **{**SETTINGS, "iterations": 0})
    (tmp_path / "r" / "archive.json").write_text("{ torn")
    with pytest.raises(ArchiveError, match=r"corrupt.*archive.json.bak"):
        atlas.alma.run(resume=tmp_path / "r", embedder=embedder, **llms())
    assert (tmp_path / "r" / "archive.json.bak").exists()
    with pytest.raises(ArchiveError, match="not a run folder"):
        atlas.alma.run(resume=tmp_path / "nothing-here", embedder=embedder, **llms())
