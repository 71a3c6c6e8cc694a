"""Where an action finished its task (``parts/effects.py``, ``common.placed``) and the matcher's quoted
phrases (``atlas.agent.advice_match``): a GraphWorld memory whose games dropped the object in wrong rooms
before one brought it in advises the drop only in the goal's room."""

from __future__ import annotations

import pytest

from atlas.agent.advice_match import SPENT, match_advice
from atlas.alma.genome import compile_genome, parse_genome
from atlas.alma.genome.parts.common import placed
from atlas.envs.policies import GoalWordPolicy, RandomPolicy
from atlas.envs.registry import get_env
from atlas.envs.views import episode_view, task_view

ADVANCES = parse_genome(
    {
        "name": "effects-advances",
        "encode": [{"part": "effects"}],
        "retrieve": [{"part": "advances"}],
    }
)


def _design() -> dict:
    namespace: dict = {}
    exec(compile(compile_genome(ADVANCES), "design", "exec"), namespace)
    return namespace


def _memory_from_wrong_room_drops(solved: int) -> tuple[dict, dict, object]:
    """Memory from GraphWorld games of a goal-greedy walk: ``solved`` (0 or 1) solved after dropping its
    object in other rooms, three that dropped it and failed; and a fresh task with its environment."""
    env = get_env("graphworld")
    tasks = env.generate_tasks(60, seed=7)
    design, memory = _design(), {}
    wins = fails = 0
    for i, task in enumerate(tasks[:-1]):
        walk = GoalWordPolicy(i, greed=0.8).run(env, task)
        drops = sum(s.tool == "put_down" for s in walk.steps)
        if walk.success and drops > 1 and wins < solved:
            wins += 1
        elif not walk.success and drops and fails < 3:
            fails += 1
        else:
            continue
        design["update"](memory, episode_view(env, walk), None)
    assert wins == solved and fails == 3
    return design, memory, (env, tasks[-1])


def test_drops_of_other_things_teach_where_the_goals_thing_goes():
    """Games that never touched their goal's object but dropped others (GraphWorld seed 2024's collection):
    the thing dropped stands in for the goal's, the room it was dropped in for the goal's room."""
    env = get_env("graphworld")
    tasks = env.generate_tasks(80, seed=2024)
    design, memory, played = _design(), {}, 0
    for i, task in enumerate(tasks[:-1]):
        walk = RandomPolicy(i).run(env, task)
        thing = env.format_goal(task).split()[2]
        dropped = {s.args.get("object") for s in walk.steps if s.tool == "put_down"}
        if walk.success or not dropped or thing in dropped or played == 4:
            continue
        design["update"](memory, episode_view(env, walk), None)
        played += 1
    assert played == 4
    view = task_view(env, tasks[-1], env.reset(tasks[-1]))
    thing, room = view["goal"].split()[2], view["goal"].rstrip(".").split()[-1]
    advice = design["recall"](memory, view, None).lower()
    assert f'carry {thing} "you are in {room}": put_down {thing}.'.lower() in advice, advice
    assert f"carry {thing}: put_down" not in advice, advice


def _text(env, task, location: str, adjacent: list[str]) -> tuple[str, list[str]]:
    """The observation text and listed actions where the agent carries the task's object."""
    obs = dict(env.reset(task))
    thing = env.format_goal(task).split()[2]  # 'Bring the <object> to <room>.'
    obs.update(location=location, adjacent_rooms=adjacent, objects_here=[], inventory=[thing])
    labels = [f"move_to {r}" for r in adjacent] + [f"put_down {thing}"]
    return env.summarize_observation(obs), labels


@pytest.mark.parametrize("solved", [1, 0], ids=["where-one-finished", "where-the-drops-would-have"])
def test_a_drop_is_advised_where_it_finishes_a_task_and_nowhere_else(solved):
    """With one solved game the drop is advised where it finished; with none, where the failed games'
    drops would have: they put the object in another room, one of the kind the goal names."""
    design, memory, (env, task) = _memory_from_wrong_room_drops(solved)
    view = task_view(env, task, env.reset(task))
    goal = view["goal"]
    thing, room = goal.split()[2], goal.rstrip(".").split()[-1]
    advice = design["recall"](memory, view, None)
    drops = [line.lower() for line in advice.splitlines() if line.endswith(f": put_down {thing}.")]
    assert drops == [f'carry {thing} "you are in {room}": put_down {thing}.'.lower()], advice

    assert f'avoid: put_down {thing} unless "you are in {room}".'.lower() in advice.lower(), advice

    others = sorted({f"room_{c}" for c in "ABCDEFGH"} - {room})
    beside, labels = _text(env, task, others[0], [others[1], room])  # the goal room in sight, not here
    matched = match_advice(advice, beside, labels, goal=goal)
    assert matched.actions.get(f"put_down {thing}", 0) < 0, (beside, matched)
    assert matched.actions.get(f"move_to {room}", 0) > 0, (beside, matched)

    inside, labels = _text(env, task, room, others[:2])
    matched = match_advice(advice, inside, labels, goal=goal)
    assert max(matched.actions, key=matched.actions.get) == f"put_down {thing}", (inside, matched)


def test_placed_frames_a_word_or_quotes_the_words_that_lead_to_it():
    names = {"lamp", "hall", "box"}
    assert placed("You are in hall. Next to: box.", "hall", names, "{3}") == '"you are in {3}"'
    assert placed("You are in hall. Next to: box.", "box", names, "{2}") == "next {2}"
    assert placed("You are in hall.", "lamp", names, "{1}") == ""


@pytest.mark.parametrize(
    ("condition", "applies"),
    [
        ('carry coin "you are in room_F"', True),
        ('carry coin "you are in room_C"', False),
        ("carry coin \u201cyou are in room_F\u201d", True),
        ('"you are in room_F"', True),
        ('"room_F room_B"', False),
    ],
)
def test_a_quoted_phrase_must_be_shown_word_for_word(condition, applies):
    text = "You are in room_F. Adjacent rooms: room_B, room_C. You carry: coin."
    matched = match_advice(f"{condition}: put_down coin.", text, ["put_down coin", "move_to room_B"])
    assert ("put_down coin" in matched.actions) is applies, matched


def test_an_avoid_line_whose_quoted_situation_is_not_shown_lowers_nothing():
    text = "You are in room_F. You carry: coin."
    labels = ["put_down coin", "move_to room_B"]
    assert match_advice('Do not put_down coin when "you are in room_C".', text, labels).actions == {}
    lowered = match_advice('Do not put_down coin when "you are in room_F".', text, labels).actions
    assert lowered["put_down coin"] < 0


def test_an_avoid_line_unless_a_quoted_phrase_holds_where_it_is_not_shown():
    labels = ["put_down coin", "move_to room_B"]
    line = 'Avoid: put_down coin unless "you are in room_F".'
    assert match_advice(line, "You are in room_F. You carry: coin.", labels).actions == {}
    assert match_advice(line, "You are in room_C. Adjacent rooms: room_F.", labels).actions == {
        "put_down coin": -SPENT
    }


def test_a_wander_through_the_goal_place_is_no_advance():
    """Failed games that walked into the goal's room and out again by another move: reaching it was given
    back, so no rule leads there. A solved game's last walk in, which held, still does."""
    env = get_env("graphworld")
    tasks = env.generate_tasks(80, seed=2024)
    design, memory, played = _design(), {}, 0
    for i, task in enumerate(tasks[:-1]):
        walk = RandomPolicy(i).run(env, task)
        room = env.format_goal(task).rstrip(".").split()[-1]
        moves = [s.args.get("room") for s in walk.steps if s.tool == "move_to"]
        if walk.success or room not in moves[:-1] or played == 4:
            continue
        design["update"](memory, episode_view(env, walk), None)
        played += 1
    assert played == 4
    view = task_view(env, tasks[-1], env.reset(tasks[-1]))
    room = view["goal"].rstrip(".").split()[-1]
    advice = design["recall"](memory, view, None)
    assert not [line for line in advice.splitlines() if line.endswith(f": move_to {room}.")], advice

    design, memory, (env, task) = _memory_from_wrong_room_drops(1)
    view = task_view(env, task, env.reset(task))
    room = view["goal"].rstrip(".").split()[-1]
    advice = design["recall"](memory, view, None)
    assert [line for line in advice.splitlines() if line.endswith(f": move_to {room}.")], advice
