"""The task agent's loop guard: detection (pure) and the one re-ask with a note (ScriptedLLM)."""

from __future__ import annotations

import pytest

from atlas.agent import TaskAgent
from atlas.agent.loops import loop_nudge
from atlas.envs.graphworld import GraphWorldEnv
from atlas.infra.llm import ScriptedLLM


def ToolsAgent(llm, **kwargs):
    """The tool-call action format (these tests script tool calls, not numbered choices)."""
    return TaskAgent(llm, action_format="tools", **kwargs)


A, B, C, D = (
    'move_to(room="room_A")',
    'move_to(room="room_B")',
    'move_to(room="room_C")',
    'move_to(room="room_D")',
)


@pytest.mark.parametrize(
    ("proposed", "past", "kind"),
    [
        (A, [(A, True)], "failed"),  # repeating a failure
        (B, [(A, False), (B, False), (A, False)], "back and forth"),  # A B A -> B
        ("look()", [("look()", False), ("look()", False)], "in a row"),
        (D, [(D, False), (B, False), (D, False), (C, False)], "circles"),  # a 4-cycle D B D C -> D
    ],
)
def test_loops_are_named(proposed, past, kind):
    note = loop_nudge(proposed, past)
    assert note is not None and kind in note and proposed in note


@pytest.mark.parametrize(
    ("proposed", "past"),
    [
        (A, []),
        (A, [(A, False)]),  # once more after a success is not a loop
        (C, [(A, False), (B, False), (A, False)]),  # leaving the cycle
        (A, [(B, True)]),  # a different action after a failure
        ("look()", [("look()", False)]),
        (D, [(D, False), (B, False), (C, False)]),  # a second visit is not yet a cycle
        (
            D,
            [(D, False), (A, False), (B, False), (C, False), (A, False), (B, False), (D, False)],
        ),  # 6 turns apart
    ],
)
def test_progress_is_not_a_loop(proposed, past):
    assert loop_nudge(proposed, past) is None


def _call(tool: str, **args):
    return {"tool_calls": [{"name": tool, "arguments": args}]}


@pytest.fixture
def env_and_task():
    env = GraphWorldEnv(rooms=5)
    return env, env.generate_tasks(1, seed=3)[0]


async def test_a_repeated_failure_is_asked_again_with_a_note(env_and_task):
    env, task = env_and_task
    absent = "torch"  # put_down of something not carried: a valid call that the world refuses
    llm = ScriptedLLM(
        [_call("put_down", object=absent), _call("put_down", object=absent), _call("look"), _call("look")]
    )
    traj = await ToolsAgent(llm, max_turns=2).run(env.clone(), task)
    assert [s.action for s in traj.steps][:2] == [f'put_down(object="{absent}")', "look()"]
    assert traj.steps[0].error
    retry = llm.history[2]
    assert "Note: Your last action" in retry.messages[-1]["content"]
    assert retry.kwargs.get("temperature") == pytest.approx(0.7)
    assert traj.metadata["loop_nudges"] == 1 and traj.metadata["turns"] == 2


async def test_an_unusable_retry_keeps_the_first_proposal(env_and_task):
    env, task = env_and_task
    absent = "torch"
    llm = ScriptedLLM([_call("put_down", object=absent), _call("put_down", object=absent), "not an action"])
    traj = await ToolsAgent(llm, max_turns=2).run(env.clone(), task)
    assert [s.action for s in traj.steps] == [f'put_down(object="{absent}")'] * 2
    assert traj.metadata["invalid_actions"] == 0


async def test_the_guard_can_be_turned_off(env_and_task):
    env, task = env_and_task
    llm = ScriptedLLM(default=_call("look"))
    traj = await ToolsAgent(llm, max_turns=4, loop_guard=False).run(env.clone(), task)
    assert len(llm.history) == 4 and traj.metadata["loop_nudges"] == 0
