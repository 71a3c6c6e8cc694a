"""Headroom: oracle advice conditions on scripted agents, the JSON shape, the hidden-state boundary,
and the paired-interval math."""

from __future__ import annotations

import json

import pytest
from alma_doubles import task_policy

from atlas.agent import TaskAgent
from atlas.agent.advice_match import ADVICE_WEIGHT
from atlas.alma.evaluate.advice_headroom import CONDITIONS, aheadroom, headroom, headroom_tasks
from atlas.alma.state.stats import paired_difference
from atlas.core.types import Trajectory
from atlas.envs.graphworld import GraphWorldEnv
from atlas.envs.graphworld.oracle import oracle_advice, shortest_path
from atlas.envs.views import episode_view, task_view
from atlas.errors import ConfigError
from atlas.infra.llm import ScriptedLLM


@pytest.fixture
def env() -> GraphWorldEnv:
    return GraphWorldEnv(rooms=8)


@pytest.fixture
def tasks(env):
    return headroom_tasks(env, tasks=6, seed=42, family=42, deployment_seeds=[42 + 10_007, 42 + 20_014])


def optimal_steps(env, task) -> int:
    probe = env.clone()
    probe.reset(task)
    w = probe._world
    where = w.object_rooms[w.target_object]
    return len(shortest_path(w.adjacency, w.start, where)) + len(
        shortest_path(w.adjacency, where, w.destination)
    )


async def test_an_agent_that_follows_advice_reaches_the_full_optimum(env, tasks):
    agent = TaskAgent(ScriptedLLM(task_policy), contrast_weight=0)
    result = await aheadroom(env, agent, tasks)
    full = result.episodes["full"]
    assert all(e.success for e in full)
    for ep, task in zip(full, tasks, strict=True):
        assert ep.steps == optimal_steps(env, task)  # route there, pick up, route on, put down
    d = result.to_dict()
    assert d["conditions"]["full"]["success_rate"] == 1.0
    assert d["differences"]["full-none"]["mean"] >= 0


class Deaf:
    """An agent that ignores its advice: plays every condition the same way."""

    def __init__(self) -> None:
        self.llm = ScriptedLLM(task_policy)
        self.inner = TaskAgent(self.llm, contrast_weight=0)

    async def run(self, env, task, advice: str = "") -> Trajectory:
        return await self.inner.run(env, task, advice="")


async def test_an_agent_that_ignores_advice_equals_none(env, tasks):
    result = await aheadroom(env, Deaf(), tasks)
    d = result.to_dict()
    for c in ("learnable", "full"):
        assert d["conditions"][c]["mean_score"] == d["conditions"]["none"]["mean_score"]
        assert d["differences"][f"{c}-none"] == {"mean": 0.0, "ci95": [0.0, 0.0], "n": len(tasks)}


def test_json_shape_and_settings(env):
    result = headroom(env=env, tasks=3, llm=ScriptedLLM(task_policy), rooms=8, seed=7, deploy_seeds=2)
    d = json.loads(json.dumps(result.to_dict()))
    assert set(d) >= {"model", "env", "tasks", "conditions", "differences"}
    assert d["model"] == "scripted" and d["env"] == "graphworld" and d["tasks"] == 3
    assert set(d["conditions"]) == set(CONDITIONS)
    for c in d["conditions"].values():
        assert set(c) >= {"success_rate", "mean_score", "mean_steps"}
    assert set(d["differences"]) == {"learnable-none", "full-none"}
    for diff in d["differences"].values():
        lo, hi = diff["ci95"]
        assert lo <= diff["mean"] <= hi


def test_unknown_condition_and_missing_oracle_are_clear_errors(env, tasks):
    with pytest.raises(ConfigError, match="unknown headroom condition"):
        headroom(env=env, tasks=2, llm=ScriptedLLM(task_policy), conditions=("none", "psychic"))

    class NoOracle(GraphWorldEnv):
        oracle_advice = None  # type: ignore[assignment]

    with pytest.raises(ConfigError, match="no oracle_advice"):
        headroom(env=NoOracle(), tasks=2, llm=ScriptedLLM(task_policy))


def test_learnable_advice_never_names_the_object_room(env):
    """Placements are random per task: a memory could not know them, so neither may the oracle."""
    for task in env.generate_family_tasks(20, 42, 1000):
        probe = env.clone()
        probe.reset(task)
        w = probe._world
        learnable = oracle_advice(task, "learnable", env.params)
        assert f"{w.target_object} is in room_" not in learnable
        assert f"The {w.target_object} is in {w.object_rooms[w.target_object]}" in oracle_advice(
            task, "full", env.params
        )


def test_oracle_text_never_reaches_a_design(env, tasks):
    """The views a design receives are built without the oracle: no task or episode view holds it."""
    agent = TaskAgent(ScriptedLLM(task_policy), contrast_weight=0)
    for task in tasks:
        full = env.oracle_advice(task, "full")
        fact = full.splitlines()[0]  # "The X is in room_Y."
        first = env.clone().reset(task)
        traj = agent.llm and env.clone()
        traj = TaskAgent(ScriptedLLM(task_policy), contrast_weight=0).run_sync(traj, task, advice=full)
        blob = json.dumps([task_view(env, task, first), episode_view(env, traj)])
        assert fact not in blob and "Do these actions" not in blob
        # the text a design sees is what the agent read: the goal room marked (the goal names it), no oracle
        views = [task_view(env, task, first)["observation_text"]]
        views += [s["observation_text"] for s in episode_view(env, traj)["steps"]]
        assert views[0] == env.summarize_observation(first) and all(fact not in v for v in views)


@pytest.mark.parametrize(
    ("a", "b", "mean"), [([1, 1, 1, 1], [0, 0, 0, 0], 1.0), ([0.5, 0.7], [0.5, 0.7], 0.0)]
)
def test_constant_differences_have_a_point_interval(a, b, mean):
    d = paired_difference(a, b)
    assert d.mean == pytest.approx(mean) and d.ci95 == pytest.approx((mean, mean))


def test_interval_covers_the_mean_and_separates_only_when_clear():
    clear = paired_difference([0.8] * 20 + [0.6] * 20, [0.2] * 40)
    assert clear.separates and clear.ci95[0] > 0.3 and clear.verdict("memory", "none") == "memory beats none"
    noisy = paired_difference([1, 0, 1, 0, 0, 1], [0, 1, 0, 1, 1, 0])
    assert not noisy.separates and noisy.ci95[0] < 0 < noisy.ci95[1]
    assert "cannot tell" in noisy.verdict("memory", "none")
    with pytest.raises(ConfigError):
        paired_difference([1, 2], [1])
    with pytest.raises(ConfigError):
        paired_difference([float("nan")], [0])


@pytest.mark.slow
@pytest.mark.parametrize("env_name", ["alfworld", "textworld"])
def test_text_games_have_headroom_conditions(env_name):
    """The same command works for the text games: full is the game's walkthrough, played on a clone;
    an agent that types the walkthrough solves the game."""
    pytest.importorskip("textworld")

    def follow(messages, **kwargs):
        first = messages[1]["content"]
        plan = first.split("in order: ", 1)[1].split(".\n", 1)[0].split("; ") if "in order: " in first else []
        done = sum(1 for m in messages if m["role"] == "assistant")
        want = plan[done] if done < len(plan) else None
        return want if want in kwargs["choices"] else kwargs["choices"][0]

    result = headroom(
        env=env_name, tasks=1, agent=TaskAgent(ScriptedLLM(follow), max_turns=30, contrast_weight=0)
    )
    d = result.to_dict()
    assert set(d["conditions"]) == set(CONDITIONS)
    assert d["conditions"]["full"]["success_rate"] == 1.0
    full = result.episodes["full"][0].advice
    assert full.startswith("Do exactly these commands in order: ")
    if env_name == "alfworld":
        assert "usually in" in result.episodes["learnable"][0].advice


async def test_episodes_already_played_are_kept_and_only_the_rest_played(env, tasks):
    class Counting(Deaf):
        runs = 0

        async def run(self, env, task, advice: str = "") -> Trajectory:
            Counting.runs += 1
            return await super().run(env, task, advice)

    whole = await aheadroom(env, Counting(), tasks)
    assert Counting.runs == 3 * len(tasks)
    kept = whole.episodes["none"] + whole.episodes["full"][:2]
    Counting.runs = 0
    resumed = await aheadroom(env, Counting(), tasks, played=kept)
    assert Counting.runs == 3 * len(tasks) - len(kept)
    assert resumed.episodes["none"] == whole.episodes["none"]  # the same objects, not replays
    assert all(a is b for a, b in zip(resumed.episodes["none"], kept, strict=False))
    assert resumed.to_dict()["differences"] == whole.to_dict()["differences"]


async def test_episodes_another_model_played_are_not_kept(env, tasks):
    import dataclasses

    whole = await aheadroom(env, Deaf(), tasks, conditions=("none",))
    assert {e.model for e in whole.episodes["none"]} == {"scripted"}
    foreign = [dataclasses.replace(e, model="local:other") for e in whole.episodes["none"]]
    with pytest.raises(ConfigError, match="played by local:other, this measurement uses scripted"):
        await aheadroom(env, Deaf(), tasks, conditions=("none",), played=foreign)


def test_the_advice_weight_setting_reaches_the_agent():
    """``advice_weight`` (``--advice-weight``) is the most the agent adds to an advised action, times how
    well its line matches: more than the default's whole weight here."""
    llm = ScriptedLLM(task_policy)
    headroom(env="graphworld", tasks=1, llm=llm, conditions=("full",), advice_weight=20.0)
    biases = [v for call in llm.history for v in (call.kwargs.get("choice_bias") or {}).values()]
    assert biases and ADVICE_WEIGHT < max(biases) <= 20.0
    with pytest.raises(ConfigError, match="advice_weight"):
        headroom(env="graphworld", tasks=1, llm=llm, conditions=("full",), advice_weight=-1)
