"""The choice action format: the agent picks one of the environment's valid actions per turn in an
append-only conversation. ScriptedLLM plays the model; the environment is the real GraphWorld."""

from __future__ import annotations

import asyncio
import itertools
import re

import pytest

from atlas.agent import TaskAgent
from atlas.agent.advice_match import ADVICE_WEIGHT, next_planned
from atlas.agent.choice import fold, render_action
from atlas.envs.base import words
from atlas.envs.graphworld import GraphWorldEnv
from atlas.envs.policies import goal_words
from atlas.infra.llm import ScriptedLLM
from atlas.protocols.env import Action
from test_task_agent import oracle_plan


@pytest.fixture
def env() -> GraphWorldEnv:
    return GraphWorldEnv()


@pytest.fixture
def task(env):
    return env.generate_tasks(1, seed=31)[0]


def _label(tool: str, args: dict) -> str:
    return render_action(Action(tool, args))


async def test_solves_a_task_choosing_listed_actions(env, task):
    plan = [_label(t, a) for t, a in oracle_plan(env, task)]
    llm = ScriptedLLM(list(plan))
    traj = await TaskAgent(llm).run(env.clone(), task)
    assert traj.success and traj.metadata["tool_mode"] == "choice"
    assert traj.metadata["turns"] == len(plan) and traj.metadata["invalid_actions"] == 0
    for call, want in zip(llm.history, plan, strict=True):
        assert want in call.kwargs["choices"]  # every optimal action was on the menu
        assert "contrast" not in call.kwargs  # no advice: nothing to contrast with


async def test_conversation_only_grows(env, task):
    """Each call's messages extend the previous call's (the KV cache of a local model is reused)."""
    plan = [_label(t, a) for t, a in oracle_plan(env, task)]
    llm = ScriptedLLM(list(plan))
    await TaskAgent(llm).run(env.clone(), task, advice="The key is behind the door.")
    calls = [c.messages for c in llm.history]
    for before, after in itertools.pairwise(calls):
        assert after[: len(before)] == before
        assert [m["role"] for m in after[len(before) :]] == ["assistant", "user"]


async def test_advice_is_data_in_the_user_turn_and_contrast_drops_it(env, task):
    plan = [_label(t, a) for t, a in oracle_plan(env, task)]
    llm = ScriptedLLM(list(plan))
    await TaskAgent(llm, contrast_weight=1.0).run(env.clone(), task, advice="ADVICE-XYZ: go north")
    first = llm.history[0]
    assert "ADVICE-XYZ" not in first.messages[0]["content"]  # never in the system role
    assert "ADVICE-XYZ" in first.messages[1]["content"] and "<notes>" in first.messages[1]["content"]
    contrast = first.kwargs["contrast"]
    assert contrast is not None and all("ADVICE-XYZ" not in m["content"] for m in contrast)
    assert [m["role"] for m in contrast] == [m["role"] for m in first.messages]


async def test_advice_matching_the_observation_biases_its_action(env, task):
    """A rule whose situation matches what the agent sees lends its action a bonus (backends that
    score choices add it); a rule for another situation lends nothing."""
    obs = env.reset(task)
    here, menu = obs["location"], [_label(a.tool, a.args) for a in env.candidate_actions(obs)]
    move = next(label for label in menu if label.startswith("move_to"))
    other = "room_Z"  # a room the agent does not see
    advice = f"In {here} when you carry nothing: {move}.\nIn {other} when you carry nothing: {menu[-1]}."
    llm = ScriptedLLM([move])
    await TaskAgent(llm, max_turns=1).run(env.clone(), task, advice=advice)
    bias = llm.history[0].kwargs["choice_bias"]
    assert list(bias) == [move] and 0 < bias[move] <= ADVICE_WEIGHT
    await TaskAgent(llm := ScriptedLLM([move]), max_turns=1, advice_weight=0).run(
        env.clone(), task, advice=advice
    )
    assert not llm.history[0].kwargs.get("choice_bias")


async def test_where_a_plan_yields_to_the_goal_the_agent_decides_without_the_advice(env):
    """A search plan whose next move leads away from a listed action naming the goal gives no bonus,
    and the model is asked without the advice (no notes, no contrast): advice about moving made the
    0.5B take the object it was sent for 0.14 of the time it could, not 0.40 (TextWorld fetch)."""

    def names_goal(t, menu):
        return [m for m in menu if goal_words(env.format_goal(t)) & set(words(m))]

    def menu_of(t):
        return [_label(a.tool, a.args) for a in env.candidate_actions(env.reset(t))]

    task = next(t for t in env.generate_tasks(40, seed=6) if names_goal(t, menu_of(t)))
    menu = menu_of(task)
    named = names_goal(task, menu)
    moves = [m for m in menu if m not in named]
    plan = "Search plan: " + ", ".join([*moves, *moves]) + "."
    llm = ScriptedLLM([moves[0]])
    await TaskAgent(llm, max_turns=1, contrast_weight=1.0).run(env.clone(), task, advice=plan)
    call = llm.history[0]
    assert "Search plan" not in str(call.messages) and "contrast" not in call.kwargs
    assert not call.kwargs.get("choice_bias")
    # a plan that goes through the goal-naming action leads, with the advice in view
    plan = "Search plan: " + ", ".join([*moves, *named, *moves]) + "."
    step = next(iter(next_planned(plan, [], menu)))
    llm = ScriptedLLM([step])
    await TaskAgent(llm, max_turns=1, contrast_weight=1.0).run(env.clone(), task, advice=plan)
    call = llm.history[0]
    assert call.kwargs["choice_bias"] == {step: ADVICE_WEIGHT} and "Search plan" in str(call.messages)


async def test_each_turn_repeats_only_the_advice_lines_that_apply_now(env, task):
    """The whole advice is read once, in the first message; each later turn repeats the rules whose
    situation matches what the agent sees then (turn_advice="all" repeats everything)."""
    plan = oracle_plan(env, task)
    env.reset(task)
    there = env.step(Action(*plan[0])).observation
    menu = [_label(a.tool, a.args) for a in env.candidate_actions(there)]
    rule = f"In {there['location']} when you carry nothing: {menu[0]}."
    elsewhere = "In room_Z when you carry nothing: move_to room_Y."
    advice = "\n".join([elsewhere, rule, "A note naming no action."])
    llm = ScriptedLLM([_label(t, a) for t, a in plan])
    await TaskAgent(llm, max_turns=2).run(env.clone(), task, advice=advice)
    assert all(line in llm.history[0].messages[1]["content"] for line in (elsewhere, rule))
    second = llm.history[1].messages[-1]["content"]
    assert rule in second and elsewhere not in second and "naming no action" not in second
    llm = ScriptedLLM([_label(t, a) for t, a in plan])
    await TaskAgent(llm, max_turns=2, turn_advice="all").run(env.clone(), task, advice=advice)
    second = llm.history[1].messages[-1]["content"]
    assert rule in second and elsewhere in second


async def test_a_reply_off_the_menu_is_recorded_and_shown(env, task):
    plan = [_label(t, a) for t, a in oracle_plan(env, task)]
    llm = ScriptedLLM(["fly to the moon", *plan])
    traj = await TaskAgent(llm).run(env.clone(), task)
    assert traj.success and traj.metadata["invalid_actions"] == 1
    assert traj.steps[0].error and "listed actions" in traj.steps[0].error
    assert "Invalid reply 'fly to the moon'" in llm.history[1].messages[-1]["content"]


async def test_turns_are_bounded(env, task):
    traj = await TaskAgent(ScriptedLLM(default="nonsense"), max_turns=3).run(env.clone(), task)
    assert not traj.success and traj.metadata["turns"] == 3 and traj.metadata["out_of_turns"]


async def test_concurrent_episodes_never_see_each_other(env):
    """Two episodes at once on one client: every call carries only its own episode's goal."""
    tasks = [t for t in env.generate_tasks(6, seed=50)]
    goals = {t.id: env.format_goal(t) for t in tasks}
    a, b = next((x, y) for x in tasks for y in tasks if goals[x.id] != goals[y.id])

    def respond(messages, **kwargs):
        text = " ".join(m["content"] for m in messages)
        mentioned = {g for g in (goals[a.id], goals[b.id]) if g in text}
        assert len(mentioned) == 1, "an episode saw another episode's context"
        return kwargs["choices"][0]

    llm = ScriptedLLM(respond)
    agent = TaskAgent(llm, max_turns=6)
    await asyncio.gather(agent.run(env.clone(), a), agent.run(env.clone(), b))
    assert len(llm.history) == 12


def test_fold_keeps_the_head_and_alternating_roles():
    msgs = [{"role": "system", "content": "s"}, {"role": "user", "content": "first"}]
    for i in range(30):
        msgs += [{"role": "assistant", "content": f"a{i}"}, {"role": "user", "content": "x" * 100}]
    folded = fold(msgs, max_chars=1000, keep_turns=4)
    assert folded[:2] == msgs[:2] and len(folded) == 2 + 8
    roles = [m["role"] for m in folded[1:]]
    assert all(r1 != r2 for r1, r2 in itertools.pairwise(roles))
    assert re.match(r"\(26 earlier turns omitted\.\)", folded[3]["content"])
    assert fold(msgs[:6], max_chars=10_000) == msgs[:6]


def test_a_folded_conversation_grows_again_before_it_folds_again():
    """Long observations: folded to half the limit, the next turns only append (the model's cache of
    the folded conversation is reused) until the limit is reached again."""
    msgs = [{"role": "system", "content": "s"}, {"role": "user", "content": "first"}]
    folds, previous = 0, None
    for i in range(40):
        msgs = [*msgs, {"role": "assistant", "content": f"a{i}"}, {"role": "user", "content": "x" * 1500}]
        folded = fold(msgs, max_chars=6000, keep_turns=6)
        if previous is not None and folded[: len(previous)] != previous:
            folds += 1
        msgs = previous = folded
        assert sum(len(m["content"]) for m in folded) <= 6000 + 1600
    assert 8 <= folds <= 14, folds  # every third turn: six turns no longer fit, so it once folded on each


def test_actions_render_as_replies():
    assert render_action(Action("move_to", {"room": "room_B"})) == "move_to room_B"
    assert render_action(Action("act", {"command": "go north"})) == "go north"
    assert render_action(Action("look", {})) == "look"


async def test_loop_guard_takes_looping_actions_off_the_choices(env):
    """A model that always takes the first choice would bounce between two rooms; the guard removes
    the action that continues the bounce from the choices (the menu it reads is unchanged)."""
    task = env.generate_tasks(1, seed=7)[0]
    llm = ScriptedLLM(lambda messages, **kw: kw["choices"][0])
    traj = await TaskAgent(llm, max_turns=12).run(env.clone(), task)
    acts = [s.action for s in traj.steps]
    assert not any(acts[i] == acts[i + 2] and acts[i + 1] == acts[i + 3] for i in range(len(acts) - 3))
    assert traj.metadata["loop_nudges"] > 0
    assert any(len(c.kwargs["choices"]) < c.messages[-1]["content"].count("\n- ") + 1 for c in llm.history)
    unguarded = await TaskAgent(
        ScriptedLLM(lambda m, **kw: kw["choices"][0]), max_turns=12, loop_guard=False
    ).run(env.clone(), task)
    u = [s.action for s in unguarded.steps]
    assert any(u[i] == u[i + 2] and u[i + 1] == u[i + 3] for i in range(len(u) - 3))


async def test_the_loop_guard_leaves_a_repeat_rather_than_only_what_the_advice_rules_out(env):
    """Bounced back into a room, the guard takes the move back off the choices; where the advice rules out
    every other action there (lowered by SPENT), the move back stays the choice instead."""
    task = env.generate_tasks(1, seed=7)[0]
    probe = env.clone()
    start = probe.reset(task)["location"]
    there = next(a for a in probe.candidate_actions(probe.observe()) if a.tool == "move_to")
    back = f"move_to {start}"
    probe.step(there)
    others = [render_action(a) for a in probe.candidate_actions(probe.observe())]
    others = [label for label in others if label != back]
    assert others, "the room beside the start lists nothing but the way back"
    advice = "\n".join(f'Avoid: {label} unless "nowhere shown".' for label in others)
    script = [render_action(there), back, render_action(there)]

    def reply(messages, **kw):
        return script.pop(0) if script else kw["choices"][0]

    llm = ScriptedLLM(reply)
    traj = await TaskAgent(llm, max_turns=4).run(env.clone(), task, advice=advice)
    assert llm.history[3].kwargs["choices"] == [back], llm.history[3].kwargs["choices"]
    assert render_action(Action(traj.steps[3].tool, traj.steps[3].args or {})) == back
