"""OpenAI messages and trajectory JSON → Trajectory; bad input names the field."""

from __future__ import annotations

import json

import pytest
from gl_helpers import make_traj, openai_messages

from atlas.errors import InvalidInputError
from atlas.memory.guidelines.messages import messages_to_trajectory, parse_trajectory


def test_messages_become_steps_with_thoughts_and_observations():
    t = messages_to_trajectory(openai_messages(fail_first=True))
    assert t.task.description == "bring the apple to room_C"
    assert [s.tool for s in t.steps] == ["look", "move_to", "move_to"]
    assert t.steps[0].thought == "I will look around first."
    assert t.steps[1].args == {"room": "room_C"} and t.steps[1].error.startswith("Error")
    assert t.steps[2].observation == "in room_B" and t.steps[2].error is None
    assert t.success is True  # ends with an answer, last tool result fine
    assert t.metadata["final_answer"].startswith("Done")


def test_success_override_and_wrapper_form():
    t = parse_trajectory({"messages": openai_messages(), "success": False, "task": "custom task", "id": "x1"})
    assert (t.id, t.success, t.task.description) == ("x1", False, "custom task")


def test_trajectory_json_round_trip():
    traj = make_traj("recovery")
    assert parse_trajectory(traj.model_dump_json()).model_dump() == traj.model_dump()
    assert parse_trajectory({"task": "do it", "steps": []}).task.description == "do it"


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ("{not json", "trajectory: not valid JSON"),
        ([], "messages"),
        ([{"role": "robot", "content": "x"}], "messages[0].role"),
        (
            [
                {"role": "user", "content": "t"},
                {
                    "role": "assistant",
                    "tool_calls": [{"id": "a", "function": {"name": "f", "arguments": "{bad"}}],
                },
            ],
            "messages[1].tool_calls[0].function.arguments",
        ),
        (
            [{"role": "user", "content": "t"}, {"role": "tool", "tool_call_id": "zz", "content": "r"}],
            "messages[1].tool_call_id",
        ),
        ([{"role": "assistant", "content": "hi"}], "no user message"),
        ({"steps": []}, "task: missing"),
        ({"task": {"description": "x"}, "steps": [{"observation": "no action"}]}, "steps[0].action"),
        ({"task": {"description": "x"}, "steps": "nope"}, "steps"),
        ({"task": {"description": "x"}, "bogus": 1}, "bogus"),
        (42, "trajectory: expected"),
    ],
)
def test_bad_input_names_the_field(data, field):
    with pytest.raises(InvalidInputError) as exc:
        parse_trajectory(data)
    assert field in str(exc.value)


def test_invalid_json_text_is_rejected_before_parsing_messages():
    with pytest.raises(InvalidInputError):
        parse_trajectory(json.dumps({"messages": "not a list"}))


EPISODE = {
    "task": {"goal": "bring the apple to room_C", "observation": {"room": "room_A"}, "domain": "graphworld"},
    "steps": [
        {"action": {"tool": "look", "args": {}}, "observation": {"exits": ["room_B"]}, "error": None},
        {
            "action": {"tool": "move_to", "args": {"room": "room_C"}},
            "observation": {},
            "error": "not adjacent",
        },
    ],
    "success": False,
    "score": 0.0,
    "steps_taken": 2,
}


def test_episode_view_becomes_a_trajectory():
    from atlas.memory.guidelines.messages import episode_to_trajectory

    t = parse_trajectory(EPISODE)
    assert t.task.domain == "graphworld" and t.steps[1].action == 'move_to(room="room_C")'
    assert t.steps[1].error == "not adjacent" and t.steps[0].data == {"exits": ["room_B"]}
    with pytest.raises(InvalidInputError, match=r"episode\.steps\[0\]\.action"):
        episode_to_trajectory({**EPISODE, "steps": [{"action": {"args": {}}}]})
