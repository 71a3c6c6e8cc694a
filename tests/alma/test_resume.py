"""Kill + resume: a run stopped between iterations and resumed from its folder ends with the same
archive as an uninterrupted run, with no entry lost or duplicated."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from alma_doubles import GIVE_UP_DESIGN, ROUTE_DESIGN, debug_policy, fenced, meta_policy, task_policy

import atlas.alma
from atlas.alma import Archive
from atlas.errors import ArchiveError, ConfigError
from atlas.infra.llm import ScriptedLLM
from atlas.trace import read_trace

SETTINGS = dict(
    env="graphworld",
    iterations=3,
    episodes=2,
    rooms=5,
    deploy_seeds=1,
    seed=7,
    meta_turns=2,
    baselines=["trajectory_retrieval"],
    quiet=True,
)
VOLATILE = {"created_at", "duration_s", "eval_duration_s", "run_time_s"}


def llms():
    meta = ScriptedLLM(
        meta_policy(
            {
                1: [fenced("route_map", ROUTE_DESIGN)],
                2: [fenced("give_up", GIVE_UP_DESIGN)],
                3: [fenced("route_map_2", ROUTE_DESIGN.replace("explore", "look around"))],
            }
        )
    )
    return dict(llm=ScriptedLLM(task_policy), meta_llm=meta, debug_llm=ScriptedLLM(debug_policy))


def stable(obj):
    """The archive without wall-clock facts (timestamps, durations). Token counts are reduced to
    the number of calls: the DebugAgent's prompt quotes call timings from the runtime logs, so its
    length (and the scripted model's rough token count) varies with the machine's load."""
    if isinstance(obj, dict):
        return {
            k: ({"calls": v["calls"]} if k == "usage" and isinstance(v, dict) else stable(v))
            for k, v in obj.items()
            if k not in VOLATILE
        }
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
        return [
            d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in differences(x, y, f"{path}[{i}]")
        ]
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
        atlas.alma.run(
            run_dir=tmp_path / "killed", embedder=embedder, callbacks=[kill_after(1)], **llms(), **SETTINGS
        )
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
        assert (tmp_path / "full" / e.source_path).read_text() == (
            tmp_path / "killed" / e.source_path
        ).read_text()
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


class HardKill(BaseException):
    """Like a SIGKILL/Ctrl-C: not an error the search handles."""


FAST = {**SETTINGS, "iterations": 2, "baselines": []}


def test_kill_during_an_evaluation_then_resume_loses_and_duplicates_nothing(tmp_path: Path, embedder):
    """Killed after the MetaAgent wrote generation 2's design, in the middle of its evaluation."""
    armed = {"on": False, "calls": 0}

    def dies_mid_evaluation(messages, **kwargs):
        if armed["on"]:
            armed["calls"] += 1
            if armed["calls"] == 5:
                raise HardKill("killed")
        return task_policy(messages, **kwargs)

    def arm(event: str, fields: dict) -> None:
        if event == "iteration.start" and fields["generation"] == 2:
            armed["on"] = True

    killed = {**llms(), "llm": ScriptedLLM(dies_mid_evaluation)}
    with pytest.raises(HardKill):
        atlas.alma.run(run_dir=tmp_path / "k", embedder=embedder, callbacks=[arm], **killed, **FAST)
    assert killed["meta_llm"].history  # the MetaAgent had answered for generation 2
    partial = Archive.load(tmp_path / "k")
    assert [e.id for e in partial] == ["d-0001", "d-0002", "d-0003"] and len(partial.iterations) == 1

    resumed, _ = atlas.alma.run(resume=tmp_path / "k", embedder=embedder, **llms())
    full, _ = atlas.alma.run(run_dir=tmp_path / "full", embedder=embedder, **llms(), **FAST)
    assert [(e.id, e.name, e.generation) for e in resumed] == [(e.id, e.name, e.generation) for e in full]
    assert [e.id for e in resumed] == [f"d-{i:04d}" for i in range(1, len(resumed) + 1)]
    assert [it["generation"] for it in resumed.iterations] == [1, 2]
    assert [e.times_sampled for e in resumed] == [e.times_sampled for e in full]


def test_resume_never_redoes_a_generation_already_in_the_archive(tmp_path: Path, embedder):
    atlas.alma.run(run_dir=tmp_path / "r", embedder=embedder, **llms(), **{**FAST, "iterations": 1})
    data = json.loads((tmp_path / "r" / "archive.json").read_text())
    data["iterations"] = []  # a hand-edited archive lost the record of generation 1
    (tmp_path / "r" / "archive.json").write_text(json.dumps(data))
    again, _ = atlas.alma.run(resume=tmp_path / "r", embedder=embedder, **llms())
    assert [e.generation for e in again if e.origin == "meta"] == [1]


def test_resume_refuses_to_start_over_when_archive_json_is_gone(tmp_path: Path, embedder):
    atlas.alma.run(run_dir=tmp_path / "r", embedder=embedder, **llms(), **{**FAST, "iterations": 0})
    (tmp_path / "r" / "archive.json").unlink()
    with pytest.raises(
        ArchiveError, match=r"archive.json is missing.*copy .*archive.json.bak to archive.json"
    ):
        atlas.alma.run(resume=tmp_path / "r", embedder=embedder, **llms())
    assert len(list((tmp_path / "r" / "designs").glob("*.py"))) == 2  # nothing overwritten


def test_resume_of_a_badly_shaped_archive_or_config_is_a_clear_error(tmp_path: Path, embedder):
    atlas.alma.run(run_dir=tmp_path / "r", embedder=embedder, **llms(), **{**FAST, "iterations": 0})
    good = (tmp_path / "r" / "archive.json").read_text()
    (tmp_path / "r" / "archive.json").write_text(json.dumps({**json.loads(good), "iterations": 3}))
    with pytest.raises(ArchiveError, match="'iterations' must be a list"):
        atlas.alma.run(resume=tmp_path / "r", embedder=embedder, **llms())
    (tmp_path / "r" / "archive.json").write_text(good)
    with pytest.raises(ConfigError, match=r"invalid settings: iterations"):
        atlas.alma.run(resume=tmp_path / "r", embedder=embedder, iterations=-1, **llms())
    (tmp_path / "r" / "config.json").unlink()
    with pytest.raises(ArchiveError, match=r"lost its config\.json"):
        atlas.alma.run(resume=tmp_path / "r", embedder=embedder, **llms())


def test_resume_when_no_design_has_a_score_says_why(tmp_path: Path, embedder):
    atlas.alma.run(run_dir=tmp_path / "r", embedder=embedder, **llms(), **{**FAST, "iterations": 0})
    data = json.loads((tmp_path / "r" / "archive.json").read_text())
    for e in data["entries"]:
        e.update(status="error", normalized_score=None, errors=["sandbox failure"])
    (tmp_path / "r" / "archive.json").write_text(json.dumps(data))
    with pytest.raises(ArchiveError, match=r"no design .* has a score to sample parents from"):
        atlas.alma.run(resume=tmp_path / "r", embedder=embedder, iterations=1, **llms())


def test_resume_with_another_task_model_is_refused(tmp_path: Path, embedder):
    atlas.alma.run(run_dir=tmp_path / "r", embedder=embedder, **llms(), **{**SETTINGS, "iterations": 0})
    before = (tmp_path / "r" / "archive.json").read_text()
    other = llms()
    other["llm"].model = "openai/another-model"
    with pytest.raises(
        ConfigError, match=r"started with the task model 'scripted'.*the same client from Python"
    ):
        atlas.alma.run(resume=tmp_path / "r", embedder=embedder, iterations=1, **other)
    assert (tmp_path / "r" / "archive.json").read_text() == before
