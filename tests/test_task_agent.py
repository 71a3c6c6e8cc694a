"""TaskAgent on GraphWorld with a ScriptedLLM: native tool calls, JSON actions, recovery from
invalid replies, bounded turns, concurrency, the rolling prompt window."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from atlas.agent import TaskAgent
from atlas.envs.graphworld import GraphWorldEnv
from atlas.envs.graphworld.explorer import shortest_path
from atlas.errors import ConfigError
from atlas.infra.llm import ScriptedLLM


def ToolsAgent(llm, **kwargs):
    """The tool-call action format (these tests script tool calls, not numbered choices)."""
    return TaskAgent(llm, action_format="tools", **kwargs)


def oracle_plan(env: GraphWorldEnv, task) -> list[tuple[str, dict]]:
    """The optimal plan read from the hidden world (the test plays the model)."""
    probe = env.clone()
    probe.reset(task)
    w = probe._world
    adj = {r: set(ns) for r, ns in w.adjacency.items()}
    src = w.object_rooms[w.target_object]
    plan = [("move_to", {"room": r}) for r in shortest_path(adj, w.start, src)[1:]]
    plan.append(("pick_up", {"object": w.target_object}))
    plan += [("move_to", {"room": r}) for r in shortest_path(adj, src, w.destination)[1:]]
    plan.append(("put_down", {"object": w.target_object}))
    return plan


@pytest.fixture
def env() -> GraphWorldEnv:
    return GraphWorldEnv()


@pytest.fixture
def task(env):
    return env.generate_tasks(1, seed=31)[0]


async def test_solves_a_task_with_native_tool_calls(env, task):
    plan = oracle_plan(env, task)
    llm = ScriptedLLM([{"tool_calls": [{"name": t, "arguments": a}]} for t, a in plan])
    assert llm.supports_tools
    traj = await ToolsAgent(llm).run(env.clone(), task, advice="Route: room_A -> room_B")
    assert traj.success and traj.score == pytest.approx(max(0.5, 1 - len(plan) / 40))
    assert [s.tool for s in traj.steps] == [t for t, _ in plan]
    assert traj.steps[0].action.startswith(f"{plan[0][0]}(") and traj.steps[0].data["location"]
    meta = traj.metadata
    assert meta["steps_taken"] == len(plan) and meta["turns"] == len(plan) and meta["invalid_actions"] == 0
    assert meta["tool_mode"] == "native" and meta["usage"]["calls"] == len(plan)
    assert meta["usage"]["total_tokens"] > 0
    first = llm.history[0]
    assert "Route: room_A -> room_B" not in first.messages[0]["content"]  # never in the system role
    assert (
        "<notes>\nRoute: room_A -> room_B\n</notes>" in first.messages[1]["content"]
    )  # data in the user turn
    assert task.description in first.messages[-1]["content"]
    assert [t.name for t in first.kwargs["tools"]] == ["look", "move_to", "pick_up", "put_down"]
    assert first.kwargs["tool_choice"] == "required"  # one tool call per turn, forced where possible
    assert llm.remaining == 0


async def test_json_mode_recovers_from_invalid_actions(env, task):
    plan = oracle_plan(env, task)
    far = "room_Z"
    replies = [
        "I think I should go north.",  # not JSON
        json.dumps({"thought": "fly", "tool": "teleport", "args": {"room": far}}),  # unknown tool
        json.dumps({"thought": "x", "tool": "move_to", "args": {"destination": "room_A"}}),  # bad args
        json.dumps({"thought": "look first", "tool": "look", "args": {}}),
        json.dumps({"thought": "wrong room", "tool": "move_to", "args": {"room": far}}),  # env rejects
    ]
    replies += ["```json\n" + json.dumps({"thought": "go", "tool": t, "args": a}) + "\n```" for t, a in plan]
    llm = ScriptedLLM(replies)
    free = GraphWorldEnv(constrain_args=False)  # arguments not narrowed: the env explains bad moves
    traj = await ToolsAgent(llm, tool_mode="json").run(free, task)
    assert traj.success
    meta = traj.metadata
    assert meta["invalid_actions"] == 3 and meta["rejected_actions"] == 1 and meta["tool_mode"] == "json"
    assert meta["turns"] == len(replies)
    assert meta["steps_taken"] == len(plan) + 1  # the rejected move counts, look is free
    bad = traj.steps[:3]
    assert all(s.tool is None and s.error.startswith("Invalid action") for s in bad)
    assert "not JSON" in bad[0].error and "unknown tool 'teleport'" in bad[1].error
    assert "missing required argument" in bad[2].error
    assert traj.steps[3].thought == "look first"
    # The error comes back to the model as the next observation.
    assert "Invalid action" in llm.history[1].messages[-1]["content"]
    assert "no room called 'room_Z'" in llm.history[5].messages[-1]["content"]
    schema = llm.history[0].kwargs["json_schema"]
    assert {v["properties"]["tool"]["enum"][0] for v in schema["anyOf"]} == {
        "look",
        "move_to",
        "pick_up",
        "put_down",
    }
    assert llm.history[0].kwargs["tools"] is None
    assert '"tool"' in llm.history[0].messages[0]["content"]  # the JSON format is explained


async def test_constrained_arguments_reject_bad_moves_before_the_env(env, task):
    plan = oracle_plan(env, task)
    replies = [json.dumps({"thought": "x", "tool": "move_to", "args": {"room": "room_Z"}})]
    replies += [json.dumps({"thought": "go", "tool": t, "args": a}) for t, a in plan]
    llm = ScriptedLLM(replies)
    traj = await ToolsAgent(llm, tool_mode="json").run(env.clone(), task)
    assert traj.success and traj.metadata["invalid_actions"] == 1 and traj.metadata["rejected_actions"] == 0
    assert "must be one of" in traj.steps[0].error
    assert traj.metadata["steps_taken"] == len(plan)
    first = llm.history[0]
    start = traj.metadata["initial_observation"]
    move = next(
        v for v in first.kwargs["json_schema"]["anyOf"] if v["properties"]["tool"]["enum"] == ["move_to"]
    )
    assert move["properties"]["args"]["properties"]["room"]["enum"] == start["adjacent_rooms"]
    assert "room: one of " + ", ".join(start["adjacent_rooms"]) in first.messages[0]["content"]


async def test_turns_are_bounded_and_nothing_raises(env, task):
    llm = ScriptedLLM(default="no idea")
    traj = await ToolsAgent(llm, tool_mode="json").run(env.clone(), task)
    assert not traj.success and traj.score == 0.0
    assert traj.metadata["turns"] == env.max_steps + 8 and traj.metadata["out_of_turns"]
    assert traj.metadata["invalid_actions"] == traj.metadata["turns"]
    traj = await ToolsAgent(ScriptedLLM(default="no idea"), max_turns=3).run(env.clone(), task)
    assert traj.metadata["turns"] == 3


async def test_rolling_window_keeps_prompts_small(env, task):
    llm = ScriptedLLM(default={"tool_calls": [{"name": "look", "arguments": {}}]})
    await ToolsAgent(llm, max_turns=20, history_window=4, loop_guard=False).run(env.clone(), task)
    last = llm.history[-1].messages[-1]["content"]
    assert "15 earlier omitted" in last and last.count("look()") == 4
    assert len(llm.history[-1].messages) == 2
    assert len(last) < 2 * len(llm.history[5].messages[-1]["content"])


async def test_many_runs_at_once_do_not_interfere(env):
    tasks = env.generate_tasks(6, seed=70)
    plans = {t.id: oracle_plan(env, t) for t in tasks}
    by_goal = {t.description: plans[t.id] for t in tasks}
    assert len(by_goal) == len(tasks)

    def respond(messages, **kwargs):  # replays the plan of whichever task this prompt is about
        prompt = messages[-1]["content"]
        goal = next(g for g in by_goal if g in prompt)
        done = len(re.findall(r"^\d+\. ", prompt, re.M))
        tool, args = by_goal[goal][done]
        return {"tool_calls": [{"name": tool, "arguments": args}]}

    agent = ToolsAgent(ScriptedLLM(respond), history_window=50)
    trajs = await asyncio.gather(*(agent.run(env.clone(), t) for t in tasks))
    for t, traj in zip(tasks, trajs, strict=True):
        assert traj.task.id == t.id and traj.success
        assert [s.tool for s in traj.steps] == [a for a, _ in plans[t.id]]


def test_sync_twin_matches_async(env, task):
    plan = oracle_plan(env, task)
    replies = [{"tool_calls": [{"name": t, "arguments": a}]} for t, a in plan]
    a = ToolsAgent(ScriptedLLM(list(replies))).run_sync(env.clone(), task)
    b = asyncio.run(ToolsAgent(ScriptedLLM(list(replies))).run(env.clone(), task))
    assert [s.action for s in a.steps] == [s.action for s in b.steps] and a.score == b.score


def test_bad_tool_mode():
    with pytest.raises(ConfigError):
        ToolsAgent(ScriptedLLM(), tool_mode="telepathy")


def test_public_api_is_pinned():
    import atlas.agent

    assert sorted(atlas.agent.__all__) == [
        "InvalidAction",
        "ParsedAction",
        "TaskAgent",
        "ToolMode",
        "action_schema",
        "parse_text_action",
    ]


@pytest.mark.parametrize(
    ("reply", "tool", "args"),
    [
        ('{"thought": "t", "tool": "move_to", "args": {"room": "room_B"}}', "move_to", {"room": "room_B"}),
        ('{"name": "move_to", "arguments": "{\\"room\\": \\"room_B\\"}"}', "move_to", {"room": "room_B"}),
        (
            '{"action": {"tool": "pick_up", "args": {"object": "key"}}, "thought": "x"}',
            "pick_up",
            {"object": "key"},
        ),
        ('{"tool": "move_to", "room": "room_C", "thought": "flat"}', "move_to", {"room": "room_C"}),
        ('Sure! ```json\n{"tool": "look", "args": {}}\n```', "look", {}),
    ],
)
def test_reply_shapes_small_models_produce(reply, tool, args):
    from atlas.agent import parse_text_action

    parsed = parse_text_action(reply)
    assert (parsed.tool, parsed.args) == (tool, args)


async def test_auto_mode_uses_json_actions_for_local_models(env, task):
    llm = ScriptedLLM(default=json.dumps({"thought": "look", "tool": "look", "args": {}}))
    llm.model = "local:qwen2.5-coder-0.5b"  # in-process llama.cpp: JSON under a grammar is cheaper
    traj = await ToolsAgent(llm, max_turns=2).run(env.clone(), task)
    assert traj.metadata["tool_mode"] == "json" and traj.metadata["invalid_actions"] == 0
    assert llm.history[0].kwargs["json_schema"] and not llm.history[0].kwargs["tools"]
