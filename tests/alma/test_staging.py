"""Staged evaluation: a new design that cannot beat the best so far stops after a minibatch (and
says how many episodes it saved); one that can goes on to the full deployment set."""

from __future__ import annotations

import pytest
from alma_doubles import GIVE_UP_DESIGN, ROUTE_DESIGN, debug_policy, fenced, meta_policy, task_policy

import atlas.alma
from atlas.agent import TaskAgent
from atlas.alma.baselines import baseline_source
from atlas.alma.design import Design
from atlas.alma.evaluate.harness import Harness, make_tasks
from atlas.alma.sandbox.pool import WorkerPool
from atlas.alma.search.progress import SilentProgress
from atlas.alma.state.staging import batches, can_still_beat, optimistic_mean
from atlas.envs.registry import get_env
from atlas.infra.llm import ScriptedLLM

BEST = {f"t{i}": 0.6 for i in range(8)}  # a best design scoring 0.6 on each of 8 tasks


def test_bound_keeps_a_design_that_could_still_win():
    played = {"t0": 0.0, "t1": 0.0}
    assert optimistic_mean(played, 8) == pytest.approx(0.75)
    verdict = can_still_beat(played, BEST, 8, rule="bound")
    assert verdict.go_on and "can still beat" in verdict.reason


def test_bound_stops_a_design_that_cannot_reach_the_best():
    played = {f"t{i}": 0.0 for i in range(4)}  # reachable: 4/8 = 0.5 < 0.6
    verdict = can_still_beat(played, BEST, 8, rule="bound")
    assert not verdict.go_on and "0.500" in verdict.reason


def test_ci_rule_stops_a_design_that_is_clearly_worse_on_the_tasks_played():
    played = {f"t{i}": 0.0 for i in range(3)}  # reachable 5/8 > 0.6, but worse on every task played
    assert can_still_beat(played, BEST, 8, rule="bound").go_on
    verdict = can_still_beat(played, BEST, 8, rule="ci")
    assert not verdict.go_on and "95% CI" in verdict.reason
    assert can_still_beat({f"t{i}": 0.6 for i in range(3)}, BEST, 8, rule="ci").go_on  # too few to tell


def test_ci_rule_stops_a_design_that_bettered_the_best_nowhere_it_could():
    zeros = {f"t{i}": 0.0 for i in range(8)}
    tied = can_still_beat({f"t{i}": 0.0 for i in range(4)}, zeros, 8, rule="ci")
    assert not tied.go_on and "none of the 4" in tied.reason
    assert can_still_beat({f"t{i}": 0.0 for i in range(4)}, zeros, 8, rule="bound").go_on
    one_gain = {"t0": 0.25, "t1": 0.0, "t2": 0.0, "t3": 0.0}
    assert can_still_beat(one_gain, zeros, 8, rule="ci").go_on
    solved = {f"t{i}": 1.0 if i < 4 else 0.0 for i in range(8)}  # a tie where the best scored 1 says nothing
    assert can_still_beat({f"t{i}": 1.0 for i in range(4)}, solved, 8, rule="ci").go_on


def test_batches_cover_every_task_once():
    assert batches(24, 8) == [range(0, 8), range(8, 16), range(16, 24)]
    assert batches(5, 2) == [range(0, 2), range(2, 4), range(4, 5)]
    assert batches(5, 0) == [range(5)] == batches(5, 9)


@pytest.fixture(scope="module")
def pool():
    p = WorkerPool(max_workers=3)
    yield p
    p.close()


async def test_harness_stops_a_losing_design_and_plays_a_winning_one_in_full(embedder, pool):
    env = get_env("graphworld", rooms=5)
    col, dep = make_tasks(env, episodes=2, seed=42, family=42, deployment_seeds=[10049, 20056])
    llm = ScriptedLLM(task_policy)
    harness = Harness(env, TaskAgent(llm), embedder=embedder, design_llm=llm, concurrency=2, pool=pool)
    base = await harness.evaluate(
        Design(id="d-1", name="no_memory", source=baseline_source("no_memory")), col, dep
    )
    assert base.deployment_score > 0.5  # the scripted agent solves these by exploring
    best = {e.task_id: e.score for e in base.deployment}

    def go_on(recs):
        return can_still_beat({r.task_id: r.score for r in recs}, best, len(dep), rule="bound")

    loser = await harness.evaluate(
        Design(id="d-2", name="give_up", source=GIVE_UP_DESIGN), col, dep, stage_tasks=2, go_on=go_on
    )
    assert loser.stage == "minibatch" and [e.label for e in loser.deployment] == ["D1", "D2"]
    assert loser.episodes_saved == 2 and "not above" in loser.stop_reason

    winner = await harness.evaluate(
        Design(id="d-3", name="route", source=ROUTE_DESIGN), col, dep, stage_tasks=2, go_on=go_on
    )
    assert winner.stage == "full" and [e.label for e in winner.deployment] == ["D1", "D2", "D3", "D4"]
    assert winner.episodes_saved == 0


class _Shown(SilentProgress):
    """A display that keeps what it was told: ('design', name) and ('done', name)."""

    def __init__(self) -> None:
        self.said: list[tuple[str, str]] = []
        self.name = ""

    def design(self, name: str, episodes: int) -> None:
        self.name = name
        self.said.append(("design", name))

    def design_done(self) -> None:
        self.said.append(("done", self.name))


def test_search_records_minibatch_entries_and_the_episodes_saved(tmp_path, embedder):
    events: list[tuple[str, dict]] = []
    shown = _Shown()
    meta = ScriptedLLM(
        meta_policy({1: [fenced("give_up", GIVE_UP_DESIGN)], 2: [fenced("route", ROUTE_DESIGN)]})
    )
    archive, _ = atlas.alma.run(
        llm=ScriptedLLM(task_policy),
        meta_llm=meta,
        debug_llm=ScriptedLLM(debug_policy),
        embedder=embedder,
        run_dir=tmp_path / "run",
        env="graphworld",
        iterations=2,
        episodes=2,
        rooms=5,
        deploy_seeds=2,
        seed=42,
        meta_turns=1,
        baselines=[],
        quiet=False,
        progress=shown,
        trace=False,
        stage_tasks=2,
        stage_rule="bound",
        callbacks=[lambda ev, f: events.append((ev, f))],
    )
    give_up, route = archive.find(name="give_up")[0], archive.find(name="route")[0]
    assert give_up.stage == "minibatch" and give_up.vs_no_memory is None
    assert (
        give_up.metadata["staged"]["saved"] == 2
        and len([t for t in give_up.per_task if t.phase == "deployment"]) == 2
    )
    assert route.stage == "full" and route.vs_no_memory is not None
    assert archive.best().stage == "full" and archive.best().id != give_up.id
    assert archive.episodes_saved() == 2
    assert ("done", "give_up") in shown.said, shown.said  # stopped early: no longer shown as playing
    assert all(b == ("done", a[1]) for a, b in zip(shown.said[::2], shown.said[1::2], strict=True)), (
        shown.said
    )
    stop = dict(events)["run.stop"]
    assert stop["episodes_saved"] == 2 and "replayed_calls" in stop
    reread = atlas.alma.Archive.load(tmp_path / "run" / "archive.json")
    assert reread.get(give_up.id).stage == "minibatch"
