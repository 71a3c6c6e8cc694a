"""Harness: collection (sequential, memory grows) and deployment (concurrent, frozen), scores,
runtime logs per episode, seeds that never overlap."""

from __future__ import annotations

import pytest
from alma_doubles import GIVE_UP_DESIGN, ROUTE_DESIGN, task_policy

from atlas.agent import TaskAgent
from atlas.alma.baselines import baseline_source
from atlas.alma.design import Design
from atlas.alma.evaluate.harness import Evaluation, Harness, check_disjoint, make_tasks
from atlas.alma.sandbox.pool import WorkerPool
from atlas.envs.registry import get_env
from atlas.errors import ConfigError
from atlas.infra.llm import ScriptedLLM

CRASHING = """
def update(memory, episode, tools):
    memory["seen"] = memory.get("seen", 0) + 1


def recall(memory, task, tools):
    return task["no_such_key"]
"""


@pytest.fixture(scope="module")
def pool():
    p = WorkerPool(max_workers=3)
    yield p
    p.close()


@pytest.fixture
def env():
    return get_env("graphworld", rooms=5)


def _tasks(env):
    return make_tasks(env, episodes=2, seed=42, family=42, deployment_seeds=[10049, 20056])


def _harness(env, embedder, pool, concurrency=3, llm=None):
    llm = llm or ScriptedLLM(task_policy)
    return Harness(env, TaskAgent(llm), embedder=embedder, design_llm=llm, concurrency=concurrency, pool=pool)


def test_make_tasks_same_family_disjoint_seeds(env):
    col, dep = _tasks(env)
    assert len(col) == 2 and len(dep) == 4
    assert {t.metadata["family"] for t in col + dep} == {42}
    assert {t.metadata["seed"] for t in col} == {42, 43}
    assert not {t.metadata["seed"] for t in col} & {t.metadata["seed"] for t in dep}
    with pytest.raises(ConfigError, match="overlap"):
        check_disjoint(col, col[:1])
    with pytest.raises(ConfigError, match="overlap"):
        make_tasks(env, episodes=3, seed=42, family=42, deployment_seeds=[44])


async def test_evaluate_collects_then_deploys_with_logs(env, embedder, pool):
    col, dep = _tasks(env)
    design = Design(id="d-x", name="route", source=ROUTE_DESIGN, origin="meta")
    seen: list[str] = []
    h = _harness(env, embedder, pool)
    h.on_episode = lambda rec: seen.append(rec.label)
    ev = await h.evaluate(design, col, dep)
    assert ev.status == "ok" and not ev.errors
    assert [e.label for e in ev.collection] == ["C1", "C2"]
    assert [e.label for e in ev.deployment] == ["D1", "D2", "D3", "D4"]
    assert sorted(seen) == sorted(["C1", "C2", "D1", "D2", "D3", "D4"])
    # collection: recall + update per episode; deployment: recall only
    assert [c["phase"] for c in ev.collection[0].calls] == ["recall", "update"]
    assert [c["phase"] for c in ev.deployment[0].calls] == ["recall"]
    assert all(c["episode"] == e.label for e in ev.episodes for c in e.calls)
    # memory grew during collection: the graph holds the rooms seen; deployment recalls give routes
    assert ev.stores["graph_edges"] > 0
    assert any("Route: " in e.advice for e in ev.deployment)
    # scores: means of the episodes, each a GraphWorld score
    assert ev.deployment_score == pytest.approx(sum(e.score for e in ev.deployment) / 4)
    assert ev.collection_score == pytest.approx(sum(e.score for e in ev.collection) / 2)
    for e in ev.episodes:
        assert e.score == (pytest.approx(max(0.5, 1 - e.steps / 40)) if e.success else 0.0)
        assert e.usage["calls"] >= 1
    assert ev.usage()["calls"] == sum(e.usage["calls"] for e in ev.episodes)
    assert ev.protections.get("sandbox") is True
    again = Evaluation.from_dict(ev.to_dict())
    assert again.per_task() == ev.per_task() and again.calls() == ev.calls()


async def test_known_outcome_give_up_scores_zero(env, embedder, pool):
    col, dep = _tasks(env)
    ev = await _harness(env, embedder, pool).evaluate(
        Design(id="d-g", name="give_up", source=GIVE_UP_DESIGN, origin="meta"), col, dep
    )
    assert ev.deployment_score == 0.0 and ev.collection_score == 0.0
    assert all(not e.success and e.steps == 0 for e in ev.episodes)
    assert ev.collection[1].calls[1]["prints"] == ["episodes seen 2"]


async def test_concurrency_does_not_change_results(env, embedder, pool):
    col, dep = _tasks(env)
    design = Design(id="d-n", name="no_memory", source=baseline_source("no_memory"), origin="baseline")
    one = await _harness(env, embedder, pool, concurrency=1).evaluate(design, col, dep)
    many = await _harness(env, embedder, pool, concurrency=4).evaluate(design, col, dep)
    assert one.per_task() == many.per_task()


async def test_crashing_design_is_data_not_a_crash(env, embedder, pool):
    col, dep = _tasks(env)
    ev = await _harness(env, embedder, pool).evaluate(
        Design(id="d-c", name="crash", source=CRASHING, origin="meta"), col, dep
    )
    assert ev.status == "ok" and ev.deployment_score is not None
    recalls = [c for e in ev.episodes for c in e.calls if c["phase"] == "recall"]
    assert recalls and all("KeyError" in (c["error"] or "") for c in recalls)
    assert all(e.advice == "" for e in ev.episodes)


async def test_task_model_failure_marks_the_evaluation_as_error(env, embedder, pool):
    from atlas.errors import LLMError

    col, dep = _tasks(env)
    llm = ScriptedLLM(default=LLMError("prompt longer than n_ctx"))
    ev = await _harness(env, embedder, pool, llm=llm).evaluate(
        Design(id="d-e", name="route", source=ROUTE_DESIGN, origin="meta"), col, dep
    )
    assert ev.status == "error" and "n_ctx" in ev.errors[0]
