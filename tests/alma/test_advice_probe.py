"""The advice probe plays a task doing only what the advice names (the task agent's own matcher, no
LLM); the smoke run reports it and the MetaAgent sends a design whose advice steers nothing back once."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from alma_doubles import GIVE_UP_DESIGN, INVALID_DESIGN, fenced

from atlas.alma.author.advice_probe import (
    ProbeResult,
    follow_advice,
    goal_progress,
    progress_of,
    unscored_progress,
    walks_rise,
)
from atlas.alma.author.meta_agent import MetaAgent
from atlas.alma.author.smoke import smoke_run
from atlas.alma.baselines import get_baseline
from atlas.alma.sandbox.pool import WorkerPool
from atlas.alma.state.archive import TaskResult
from atlas.alma.state.highest import gives_partial_score, highest_score
from atlas.envs.graphworld.oracle import oracle_advice
from atlas.envs.policies import RandomPolicy
from atlas.envs.registry import get_env
from atlas.infra.llm import ScriptedLLM


@pytest.fixture(scope="module")
def pool():
    p = WorkerPool(max_workers=2)
    yield p
    p.close()


@pytest.fixture(scope="module")
def env():
    return get_env("graphworld", rooms=8)


def test_the_full_answer_is_followed_to_success_in_the_fewest_steps(env):
    for task in env.generate_tasks(4, 7):
        result = follow_advice(env.clone(), task, oracle_advice(task, "full"), unadvised="goal_words")
        assert result.success and result.stopped == "" and result.unadvised == 0  # every step advised
        assert result.score == pytest.approx(max(0.5, 1.0 - result.steps / 40))
        assert result.actions[-1].startswith("put_down")


def test_prose_stops_at_the_first_step_and_names_what_was_listed(env):
    task = env.generate_tasks(1, 3)[0]
    result = follow_advice(env.clone(), task, "Explore carefully and remember the rooms you saw.")
    assert not result.success and result.steps == 0 and result.score == 0.0
    first = env.clone().reset(task)
    assert "at step 1 no advice line names a listed action" in result.stopped
    for room in first["adjacent_rooms"]:
        assert f"move_to {room}" in result.stopped
    assert "not solved" in result.line("D1")
    assert follow_advice(env.clone(), task, "").stopped.startswith("at step 1")


def test_unadvised_the_probe_takes_what_the_goal_names_when_it_is_listed(env):
    from atlas.agent import choice as ch
    from atlas.envs.base import words
    from atlas.envs.policies import goal_words

    def goal_named(task) -> list[str]:
        play = env.clone()
        wanted = goal_words(play.format_goal(task))
        return [lb for lb in ch.labels(play.candidate_actions(play.reset(task))) if wanted & set(words(lb))]

    task = next(t for t in env.generate_tasks(40, 11) if goal_named(t))
    stopped = follow_advice(env.clone(), task, "", unadvised="stop")
    assert stopped.steps == 0 and stopped.stopped.startswith("at step 1")
    acted = follow_advice(env.clone(), task, "", unadvised="goal_words")
    assert acted.steps >= 1 and acted.actions[0] in goal_named(task) and acted.unadvised == acted.steps
    assert "no advice line names a listed action" in acted.stopped or acted.success
    # where nothing listed names the goal, it stops as before
    quiet = next(t for t in env.generate_tasks(40, 11) if not goal_named(t))
    assert follow_advice(env.clone(), quiet, "", unadvised="goal_words").steps == 0
    with pytest.raises(ValueError, match="unadvised"):
        follow_advice(env.clone(), task, "", unadvised="guess")


def test_progress_grows_with_how_much_of_the_answer_the_advice_gives(env):
    # The oracle's answer cut short: without its last step, then without taking the item either.
    for task in env.generate_tasks(3, 7):
        lines = oracle_advice(task, "full").splitlines()
        full = follow_advice(env.clone(), task, "\n".join(lines))
        no_drop = follow_advice(env.clone(), task, "\n".join(lines[:-1]))
        walk_only = follow_advice(
            env.clone(), task, "\n".join(ln for ln in lines[:-1] if "pick_up" not in ln)
        )
        prose = follow_advice(env.clone(), task, "Explore carefully.")
        assert full.success and full.progress == 1.0
        assert not no_drop.success and not walk_only.success
        assert no_drop.progress > walk_only.progress > prose.progress == 0.0


def test_progress_counts_goal_words_in_new_sentences_only():
    goal = "Deliver the crate to the loading_dock."
    first = "Position: workshop. Paths lead to: office. On the floor: crate. Holding: nothing."
    held = "Position: office. Paths lead to: loading_dock, workshop. On the floor: nothing. Holding: crate."
    there = "Position: loading_dock. Paths lead to: office. Holding: crate."
    assert goal_progress(goal, [first]) == 0.0
    assert goal_progress(goal, [first, first, first]) == 0.0  # standing still is not progress
    assert goal_progress(goal, [first, held]) == 0.5  # crate held, the dock listed beside
    assert goal_progress(goal, [first, held, there]) == 0.75
    assert goal_progress("Deliver the vase to the attic.", [first, held, there]) == 0.0  # nothing named
    assert goal_progress(goal, []) == 0.0


def test_the_screening_says_when_no_unsolved_episode_showed_a_partial_score(env):
    sys.path.insert(0, str(Path(__file__).parents[1] / "envs"))
    import crafting_env  # noqa: F401  registers "crafting", whose score rises with each part made

    def walks(e):
        return [
            (t.success, t.score)
            for t in (RandomPolicy(1).run(e, task) for task in e.generate_tasks(8, seed=3))
        ]

    graphworld = walks(env)  # GraphWorld scores only a delivered item
    assert sum(not ok for ok, _ in graphworld) >= 6 and all(s == 0 for ok, s in graphworld if not ok)
    assert "if this environment gives no partial score" in unscored_progress(graphworld)
    assert unscored_progress(walks(get_env("crafting"))) == ""
    assert unscored_progress(graphworld[:3]) == ""  # too few episodes to say


def test_where_the_environment_gives_a_partial_score_the_probe_reads_progress_from_it_alone(env):
    """Decided once per environment from no memory's episodes: on the crafting plug-in (its score rises
    with each part made) an unsolved episode's progress is the score it reached, so one that rose nowhere
    counts 0 whatever goal words it showed; on GraphWorld (scored only when delivered) the goal words."""
    sys.path.insert(0, str(Path(__file__).parents[1] / "envs"))
    import crafting_env

    def no_memory(e) -> list[TaskResult]:
        walks = [RandomPolicy(2).run(e, task) for task in e.generate_tasks(8, seed=5)]
        return [
            TaskResult(task_id=t.task.id, success=t.success, score=t.score, highest=highest_score(t))
            for t in walks
        ]

    crafting = get_env("crafting")
    assert gives_partial_score(no_memory(crafting))
    assert not gives_partial_score(no_memory(env))
    # where the agent's episodes never rose, walks with no model ask the environment itself
    assert walks_rise(crafting, crafting.generate_tasks(4, seed=5))
    assert not walks_rise(env, env.generate_tasks(4, seed=5))
    task = crafting.generate_family_tasks(1, 0, 100)[0]
    first_step = crafting_env.oracle(crafting, task, "full").split(", ")[0] + "."
    rose = follow_advice(crafting.clone(), task, first_step).to_dict()
    nowhere = follow_advice(crafting.clone(), task, "Think first.").to_dict()
    assert not rose["success"] and rose["reached"] > 0 and nowhere["reached"] == 0
    assert progress_of(rose, True) == rose["reached"] > progress_of(nowhere, True) == 0.0
    # what the goal's words showed no longer counts where the score measures progress
    named = {**nowhere, "progress": 0.75}
    assert progress_of(named, True) == 0.0 and progress_of(named, False) == 0.75
    assert progress_of({**rose, "success": True}, True) == 1.0
    # a GraphWorld episode reads the goal's words, as before
    walk = follow_advice(env.clone(), env.generate_tasks(1, 7)[0], "Explore.", unadvised="goal_words")
    assert progress_of(walk.to_dict(), False) == walk.progress


def test_advice_that_loops_runs_out_of_steps_without_an_endless_loop(env):
    task = env.generate_tasks(1, 5)[0]
    first = env.clone().reset(task)
    here, there = first["location"], first["adjacent_rooms"][0]
    advice = f"In {here}: move_to {there}.\nIn {there}: move_to {here}."
    result = follow_advice(env.clone(), task, advice, max_steps=6)
    assert not result.success and result.steps <= 6


def test_an_environment_without_an_action_list_is_refused():
    class Bare:
        name = "bare"

    with pytest.raises(TypeError, match="does not list its actions"):
        follow_advice(Bare(), None, "x")  # type: ignore[arg-type]


def test_probe_result_round_trips_and_summarises():
    r = ProbeResult(success=True, score=0.8, steps=3, actions=["a", "b", "c"], advised_score=0.5, unadvised=1)
    assert ProbeResult.from_dict({"label": "D1", **r.to_dict()}) == r
    assert r.line("D1") == "D1: solved in 3 steps (a, b, c)"


def test_smoke_run_reports_the_probe_for_actionable_and_prose_advice(env, pool, embedder):
    seed = smoke_run(env.seed_design(), env, 2, pool=pool, embedder=embedder)
    prose = smoke_run(get_baseline("spatial_graph"), env, 2, pool=pool, embedder=embedder)
    assert seed.ok and prose.ok
    assert len(seed.probes) == len(prose.probes) == 2
    assert any(p["success"] for p in seed.probes)
    assert not any(p["success"] for p in prose.probes)
    assert "advice probe:" in seed.to_feedback() and "solved 0/2" in prose.to_feedback()
    assert seed.to_dict()["probes"][0]["label"] == "D1"


async def test_meta_agent_sends_prose_advice_back_once_and_takes_the_fix(pool, embedder):
    env = get_env("graphworld", rooms=5)
    actionable = env.seed_design()
    llm = ScriptedLLM([fenced("prose", GIVE_UP_DESIGN), fenced("rules", actionable)])
    agent = MetaAgent(llm, env=env, embedder=embedder, pool=pool, max_turns=3, probe_retry=True)
    result = await agent.generate([], None, generation=1)
    assert result.status == "ok" and result.name == "rules" and result.turns == 2
    assert "advice does not steer the agent" in llm.history[1].messages[-1]["content"]
    assert any("advice probe solved no task" in e for e in result.errors)


async def test_meta_agent_keeps_the_valid_design_when_the_retry_fails(pool, embedder):
    env = get_env("graphworld", rooms=5)
    llm = ScriptedLLM(
        [fenced("prose", GIVE_UP_DESIGN), fenced("bad", INVALID_DESIGN), fenced("bad", INVALID_DESIGN)]
    )
    agent = MetaAgent(llm, env=env, embedder=embedder, pool=pool, max_turns=3, probe_retry=True)
    result = await agent.generate([], None, generation=1)
    assert (
        result.status == "ok" and result.name == "prose" and result.source.strip() == GIVE_UP_DESIGN.strip()
    )
    off = MetaAgent(ScriptedLLM([fenced("prose", GIVE_UP_DESIGN)]), env=env, embedder=embedder, pool=pool)
    assert (await off.generate([], None, generation=1)).name == "prose"


async def test_each_parents_advice_probe_reaches_the_meta_prompt(pool, embedder):
    env = get_env("graphworld", rooms=5)
    parents = [
        {"id": "d-0002", "name": "seed", "source": env.seed_design(), "origin": "seed"},
        {
            "id": "d-0003",
            "name": "spatial",
            "source": get_baseline("spatial_graph").source,
            "origin": "baseline",
        },
    ]
    llm = ScriptedLLM([fenced("prose", GIVE_UP_DESIGN)])
    await MetaAgent(llm, env=env, embedder=embedder, pool=pool).generate(parents, None, generation=1)
    prompt = llm.history[0].messages[1]["content"]
    seed_part, spatial_part = prompt.split("### Parent 2")
    assert "Smoke run of this parent" in seed_part and "solved 2/2" in seed_part
    assert "solved 0/2" in spatial_part and "no advice line names a listed action" in spatial_part


def test_design_check_prints_the_advice_probe(tmp_path):
    from typer.testing import CliRunner

    from atlas.cli import app

    design = tmp_path / "spatial.py"
    design.write_text(get_baseline("spatial_graph").source)
    out = CliRunner().invoke(app, ["design", "check", str(design), "--episodes", "2", "--no-embed"])
    assert out.exit_code == 0, out.output
    assert "advice probe:" in out.output and "solved 0/2" in out.output


def test_an_advised_walk_follows_its_advice_as_often_as_it_is_told(monkeypatch):
    """``advised_walk`` plays a collection episode as a small agent does with a design's advice: at
    adherence 1 it takes the plan's steps in order; at 0 it is the walk it would be with no advice."""
    from atlas.alma.author import advice_probe
    from atlas.alma.author.advice_probe import advised_walk
    from atlas.envs.base import action_label
    from atlas.envs.policies import ExplorerPolicy

    env = get_env("graphworld")
    task = env.generate_tasks(1, 6)[0]
    route = [action_label(s.tool, s.args) for s in ExplorerPolicy(0).run(env.clone(), task).steps][:4]
    assert len(set(route)) == 4  # a walk through four rooms
    plan = "Plan: " + ", ".join(route) + "."

    def walked(advice: str) -> list[str]:
        return [action_label(s.tool, s.args) for s in advised_walk(env.clone(), task, advice, seed=1).steps]

    monkeypatch.setattr(advice_probe, "ADHERENCE", 1.0)
    assert walked(plan)[:4] == route
    monkeypatch.setattr(advice_probe, "ADHERENCE", 0.0)
    assert walked(plan) == walked("")
    assert walked("") == walked("")  # seeded
