"""The no-memory baseline is staged like any new design: it plays the collection tasks and the first
batch of deployment tasks, and the later tasks only once a design has played them all. Completed, it
is the same baseline as one played whole: the same scores on the same tasks."""

from __future__ import annotations

import json

import pytest
from alma_doubles import GIVE_UP_DESIGN, ROUTE_DESIGN, debug_policy, fenced, meta_policy, task_policy
from typer.testing import CliRunner

import atlas.alma
from atlas.alma.api import aevaluate
from atlas.alma.baselines import baseline_source
from atlas.alma.design import Design
from atlas.cli import app
from atlas.infra.llm import ScriptedLLM

TINY = dict(
    env="graphworld",
    episodes=2,
    rooms=5,
    deploy_seeds=2,
    seed=42,
    meta_turns=1,
    baselines=[],
    env_seed=False,
    quiet=True,
)


def _models(script):
    return dict(
        llm=ScriptedLLM(task_policy),
        meta_llm=ScriptedLLM(meta_policy(script)),
        debug_llm=ScriptedLLM(debug_policy),
    )


def _search(tmp_path, name, script, *, stage_tasks=2, events=None, **kw):
    archive, _ = atlas.alma.run(
        **_models(script),
        run_dir=tmp_path / name,
        iterations=len(script),
        stage_tasks=stage_tasks,
        stage_rule="bound",
        callbacks=kw.pop("callbacks", None)
        or ([lambda ev, f: events.append((ev, f))] if events is not None else []),
        **TINY,
        **kw,
    )
    return archive


def _no_memory(archive):
    return next(e for e in archive if e.name == "no_memory")


def _scores(entry):
    return {t.task_id: t.score for t in entry.per_task if t.phase == "deployment"}


GIVE_UP_ONLY = {1: [fenced("give_up", GIVE_UP_DESIGN)]}
THEN_ROUTE = {1: [fenced("give_up", GIVE_UP_DESIGN)], 2: [fenced("route", ROUTE_DESIGN)]}


@pytest.fixture(scope="module")
def whole(tmp_path_factory, embedder):
    """The same search with the baseline played whole (no staging at all)."""
    return _search(tmp_path_factory.mktemp("whole"), "run", THEN_ROUTE, stage_tasks=0, embedder=embedder)


def test_when_no_design_plays_every_task_no_memory_stops_after_its_first_batch(tmp_path, embedder, whole):
    archive = _search(tmp_path, "run", GIVE_UP_ONLY, embedder=embedder)
    base = _no_memory(archive)
    assert archive.baseline["partial"] == {"played": 2, "of": 4}
    assert len(_scores(base)) == 2 and base.stage == "full" and base.normalized_score == 0.0
    assert (
        base.metadata["staged"]["saved"] == 2
        and "once a design reaches them" in base.metadata["staged"]["reason"]
    )
    assert _scores(base).items() <= _scores(_no_memory(whole)).items()  # the first two of the same episodes
    give_up = archive.find(name="give_up")[0]
    assert give_up.stage == "minibatch"
    shown = CliRunner().invoke(app, ["archive", "show", str(tmp_path / "run")], env={"COLUMNS": "250"})
    assert "(first 2/4: the rest once a design reaches them)" in shown.output
    assert "(stopped " in shown.output  # give_up
    reread = atlas.alma.Archive.load(tmp_path / "run")
    assert reread.baseline["partial"] == {"played": 2, "of": 4} and len(_scores(_no_memory(reread))) == 2


def test_a_design_that_plays_every_task_completes_the_baseline_as_if_played_whole(tmp_path, embedder, whole):
    events: list = []
    archive = _search(
        tmp_path, "run", THEN_ROUTE, events=events, embedder=embedder, baseline_cache=tmp_path / "c"
    )
    base, whole_base = _no_memory(archive), _no_memory(whole)
    assert "partial" not in archive.baseline and "staged" not in base.metadata
    assert base.vs_no_memory["n"] == 4 == _no_memory(whole).vs_no_memory["n"]
    assert _scores(base) == _scores(whole_base) and len(_scores(base)) == 4
    assert archive.baseline["score"] == pytest.approx(whole.baseline["score"])
    assert [t.label for t in base.per_task if t.phase == "deployment"] == ["D1", "D2", "D3", "D4"]
    route, whole_route = archive.find(name="route")[0], whole.find(name="route")[0]
    assert route.stage == "full" and route.normalized_score == pytest.approx(whole_route.normalized_score)
    assert route.vs_no_memory["n"] == 4
    done = dict(events)["baseline.completed"]
    assert done["played"] == 2 and done["of"] == 4
    logged = (tmp_path / "run" / "logs" / base.id / "episodes.jsonl").read_text().splitlines()
    assert len(logged) == 2 + 4  # the collection and every deployment episode
    cached = json.loads(next((tmp_path / "c").glob("*.json")).read_text())
    assert len(cached["value"]["episodes"]) == 6  # the cache holds the whole baseline, not its first batch
    again = _search(tmp_path, "again", GIVE_UP_ONLY, embedder=embedder, baseline_cache=tmp_path / "c")
    assert (
        again.baseline["cached"] and "partial" not in again.baseline and len(_scores(_no_memory(again))) == 4
    )


class Stop(Exception):
    pass


def test_a_resumed_search_completes_a_baseline_saved_after_its_first_batch(tmp_path, embedder, whole):
    def stop_after_baseline(event, _fields):
        if event == "baseline.done":
            raise Stop("killed")

    with pytest.raises(Stop):
        _search(tmp_path, "run", THEN_ROUTE, embedder=embedder, callbacks=[stop_after_baseline])
    assert atlas.alma.Archive.load(tmp_path / "run").baseline["partial"] == {"played": 2, "of": 4}
    archive, _ = atlas.alma.run(resume=tmp_path / "run", **_models(THEN_ROUTE), embedder=embedder, quiet=True)
    assert "partial" not in archive.baseline and _scores(_no_memory(archive)) == _scores(_no_memory(whole))
    route = archive.find(name="route")[0]
    assert route.normalized_score == pytest.approx(whole.find(name="route")[0].normalized_score)


async def test_evaluating_no_memory_itself_plays_it_on_every_task(tmp_path, embedder):
    design = Design(name="no_memory", source=baseline_source("no_memory"), origin="baseline")
    entry, archive = await aevaluate(
        design,
        llm=ScriptedLLM(task_policy),
        env="graphworld",
        run_dir=tmp_path / "eval",
        embedder=embedder,
        episodes=2,
        rooms=5,
        deploy_seeds=2,
        seed=42,
        stage_tasks=2,
        trace=False,
    )
    assert len(_scores(entry)) == 4 and "partial" not in archive.baseline
