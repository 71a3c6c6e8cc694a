"""Baseline designs: registry, every sandboxed baseline passes a real smoke run (GraphWorld,
ExplorerPolicy, real sandbox, real MiniLM), robustness on foreign episode shapes, host adapters."""

from __future__ import annotations

import pytest

from atlas.alma.author.smoke import smoke_run
from atlas.alma.baselines import (
    SOURCE_BASELINES,
    baseline_source,
    describe_baseline,
    get_baseline,
    list_baselines,
)
from atlas.alma.baselines.host import task_from_view, trajectory_from_episode
from atlas.alma.evaluate.runner import DesignRunner
from atlas.alma.sandbox.pool import WorkerPool
from atlas.errors import ConfigError
from atlas.infra.llm import ScriptedLLM


@pytest.fixture(scope="module")
def pool():
    p = WorkerPool(max_workers=2)
    yield p
    p.close()


def test_registry():
    names = list_baselines()
    assert names[:5] == ["no_memory", "trajectory_retrieval", "spatial_graph", "reasoning_bank", "cheatsheet"]
    assert {"memory_system", "guideline_bank"} <= set(names)
    d = get_baseline("spatial_graph")
    assert d.origin == "baseline" and d.id == "baseline-spatial_graph" and "def recall" in d.source
    h = get_baseline("memory_system")
    assert h.origin == "host" and h.metadata["adapter"] == "memory_system"
    assert describe_baseline("cheatsheet")
    with pytest.raises(ConfigError, match="unknown baseline"):
        get_baseline("nope")


def test_environment_specific_baselines_are_listed_only_for_their_environment():
    assert "spatial_graph" in list_baselines(env="graphworld")
    for env in ("alfworld", "textworld", "some_plugin_env"):
        names = list_baselines(env=env)
        assert "spatial_graph" not in names
        assert {"no_memory", "trajectory_retrieval", "memory_system", "guideline_bank"} <= set(names)


@pytest.mark.parametrize("env_name", ["alfworld", "textworld"])
def test_search_does_not_seed_graphworld_baselines_into_other_environments(tmp_path, env_name):
    """Regression: the loop called list_baselines(env=...) before it took an argument; a TypeError
    fallback then seeded the GraphWorld-only spatial_graph into every environment's archive."""
    from atlas.alma.search.loop import Search
    from atlas.alma.search.seeds import seed_designs
    from atlas.alma.state.config import AlmaConfig
    from atlas.alma.state.run_dir import RunDir
    from atlas.envs.registry import get_env

    env = get_env(env_name)
    search = Search(
        AlmaConfig(env=env_name, quiet=True),
        llm=ScriptedLLM(lambda m, **k: ""),
        env=env,
        run_dir=RunDir.create(tmp_path / "run", env=env_name),
        trace=False,
        baseline_cache=False,
    )
    names = [d.name for d in seed_designs(search.env, search.config)]
    assert "spatial_graph" not in names and "trajectory_retrieval" in names


@pytest.mark.parametrize("name", sorted(SOURCE_BASELINES))
def test_every_baseline_passes_a_smoke_run(name, pool, embedder):
    report = smoke_run(get_baseline(name), "graphworld", 3, recall_tasks=2, pool=pool, embedder=embedder)
    assert report.valid and report.ran_clean, report.to_feedback()
    assert report.protections["sandbox"] is True
    if name == "no_memory":
        assert not report.ok and "NO ADVICE" in report.verdict()
    else:
        assert report.ok, report.to_feedback()
        assert all(a.strip() for a in report.advice)
    feedback = report.to_feedback()
    assert feedback.startswith(f"Smoke run of design {name!r} on graphworld:") and len(feedback) <= 4000


FOREIGN_EPISODE = {
    "task": {
        "goal": "put a clean mug in the coffeemachine",
        "observation": {"text": "You are in the kitchen."},
        "domain": "alfworld",
    },
    "steps": [
        {
            "action": {"tool": "act", "args": {"command": "go to sinkbasin 1"}},
            "observation": {"text": "You arrive at sinkbasin 1."},
            "error": None,
        },
        {"action": {"tool": "", "args": {}}, "observation": {}, "error": "not a valid action"},
    ],
    "success": False,
    "score": 0.0,
    "steps_taken": 2,
}


@pytest.mark.parametrize("name", sorted(SOURCE_BASELINES))
def test_baselines_do_not_crash_on_other_environments(name, pool, embedder):
    llm = ScriptedLLM(
        default='{"insights": [{"title": "clean first", "content": "clean the mug at the sink"}]}'
    )
    r = DesignRunner(get_baseline(name), embedder=embedder, llm=llm, pool=pool)
    try:
        assert r.update_sync(FOREIGN_EPISODE).ok
        advice, log = r.recall_sync(FOREIGN_EPISODE["task"])
        assert log.ok, log.error
        assert isinstance(advice, str)
    finally:
        r.close()


def test_reasoning_bank_survives_a_bad_model_reply(pool, embedder):
    r = DesignRunner(
        get_baseline("reasoning_bank"), embedder=embedder, llm=ScriptedLLM(default="no json here"), pool=pool
    )
    try:
        log = r.update_sync(FOREIGN_EPISODE)
        assert log.ok and any(p.startswith("analyze failed:") for p in log.prints)
        assert log.tool_calls[0].error and "not valid JSON" in log.tool_calls[0].error
    finally:
        r.close()


def test_episode_to_trajectory():
    traj = trajectory_from_episode(FOREIGN_EPISODE)
    assert traj.task.description == "put a clean mug in the coffeemachine" and traj.task.domain == "alfworld"
    assert traj.steps[0].action == 'act(command="go to sinkbasin 1")' and traj.steps[0].tool == "act"
    assert traj.steps[1].error == "not a valid action" and not traj.success
    assert task_from_view({"goal": " ", "observation": {}}).description == "(no goal given)"


def test_baseline_sources_are_package_files():
    for name in SOURCE_BASELINES:
        assert baseline_source(name).startswith('"""' + name)


@pytest.mark.parametrize("env_seed", [True, False])
def test_no_env_seed_leaves_the_hand_written_seed_out_and_keeps_the_baselines(tmp_path, env_seed):
    from atlas.alma.search.loop import Search
    from atlas.alma.search.seeds import seed_designs
    from atlas.alma.state.config import AlmaConfig
    from atlas.alma.state.run_dir import RunDir
    from atlas.envs.registry import get_env

    search = Search(
        AlmaConfig(env="graphworld", quiet=True, env_seed=env_seed),
        llm=ScriptedLLM(lambda m, **k: ""),
        env=get_env("graphworld"),
        run_dir=RunDir.create(tmp_path / "run", env="graphworld"),
        trace=False,
        baseline_cache=False,
    )
    designs = seed_designs(search.env, search.config)
    assert ("graphworld_seed" in [d.name for d in designs]) is env_seed
    assert [d.origin for d in designs if d.origin == "seed"] == (["seed"] if env_seed else [])
    assert "spatial_graph" in [d.name for d in designs]
