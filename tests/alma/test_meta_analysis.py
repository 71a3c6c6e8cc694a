"""The MetaAgent sees each parent's Analysis (episode summaries: actions, where it went wrong, the
advice and whether the agent followed it), and the DebugAgent's evidence compares what a design
advised with what the agent then did."""

from __future__ import annotations

from alma_doubles import ROUTE_DESIGN, debug_policy, fenced, meta_policy, task_policy

import atlas.alma
from atlas.alma.author.advice_use import advice_use, departure_lines, follows
from atlas.alma.author.analysis import compress_actions, parent_analysis
from atlas.infra.llm import ScriptedLLM

EPISODE = {
    "label": "D2",
    "phase": "deployment",
    "goal": "Bring the key to room_E.",
    "success": False,
    "score": 0.0,
    "steps": 20,
    "advice": "Exits: room_A, room_C\nIn room_C (to get key): move_to room_D",
    "actions": [
        {"action": 'move_to(room="room_C")', "error": None},
        {"action": 'move_to(room="room_B")', "error": None},
        {"action": 'pick_up(object="key")', "error": "There is no key in room_B."},
        {"action": "look()", "error": None},
        {"action": 'move_to(room="room_B")', "error": None},
    ],
}


def test_an_action_follows_the_advice_when_the_advice_names_its_arguments():
    assert follows('move_to(room="room_D")', "In room_C: move_to room_D") is True
    assert follows('move_to(room="room_B")', "In room_C: move_to room_D") is False
    assert follows("look()", "anything") is None


def test_the_first_departure_quotes_the_advice_about_that_moment():
    use = advice_use(EPISODE)
    assert (use.actions_with_args, use.followed) == (4, 2)  # room_C and "key" are in the advice
    assert use.departure.line() == (
        'D2 step 2: advised "In room_C (to get key): move_to room_D" after '
        "move_to room_C; agent did move_to room_B"
    )
    assert departure_lines([{**EPISODE, "label": "D1", "success": True, "score": 0.9}, EPISODE])[
        0
    ].startswith("D2")
    assert advice_use({**EPISODE, "advice": ""}) is None


def test_analysis_summarizes_actions_errors_and_advice_use():
    assert (
        compress_actions([{"action": "a()"}, {"action": "a()"}, {"action": "b()", "error": "x"}])
        == "a ×2, b!"
    )
    text = parent_analysis([EPISODE])
    assert text.startswith("0/1 episodes solved; advice given in 1; actions that followed the advice: 2 of 4")
    assert "went wrong: step 3 pick_up key error: There is no key in room_B.; not solved in 20 steps" in text
    assert "first departure: D2 step 2" in text


def test_analysis_writes_actions_as_the_agent_lists_them_when_the_record_has_the_text():
    listed = [
        {"action": 'move_to(room="room_C")', "text": "move_to room_C"},
        {"action": 'move_to(room="room_C")', "text": "move_to room_C"},
        {"action": 'pick_up(object="key")', "text": "pick_up key", "error": "There is no key here."},
    ]
    assert compress_actions(listed) == "move_to room_C ×2, pick_up key!"
    # records without the text (older runs) are converted from the call form
    assert compress_actions([{"action": 'act(command="go north")'}, {"action": "I fly"}]) == "go north, I fly"
    text = parent_analysis([{**EPISODE, "actions": listed}])
    assert "actions: move_to room_C ×2, pick_up key!" in text
    assert "went wrong: step 3 pick_up key error: There is no key here." in text


def test_analysis_reaches_the_meta_prompt_and_debug_evidence_compares_advice_with_actions(tmp_path, embedder):
    meta = ScriptedLLM(meta_policy({1: [fenced("route", ROUTE_DESIGN)], 2: [fenced("route2", ROUTE_DESIGN)]}))
    debug = ScriptedLLM(debug_policy)
    archive, _ = atlas.alma.run(
        llm=ScriptedLLM(task_policy),
        meta_llm=meta,
        debug_llm=debug,
        embedder=embedder,
        run_dir=tmp_path / "run",
        env="graphworld",
        iterations=2,
        episodes=2,
        rooms=5,
        deploy_seeds=1,
        seed=42,
        meta_turns=1,
        baselines=[],
        quiet=True,
        trace=False,
    )
    prompts = [c.messages[1]["content"] for c in meta.history]
    assert all("Analysis (episode summaries" in p for p in prompts)
    assert any("advice use: followed the advice on" in p for p in prompts)  # a parent that gave advice
    assert any("episodes solved; advice given in" in p for p in prompts)
    # the harness records each action's listed text, so the prompt shows the form advice must use
    assert any("actions: move_to room_" in p for p in prompts)
    assert not any('actions: move_to(room="' in p for p in prompts)
    second = archive.find(name="route2")[0]
    assert 'advised "' in second.critique and "; agent did " in second.critique
    overview = next(c.messages[1]["content"] for c in debug.history if len(c.messages) == 2)
    assert "What the designs advised against what the agent then did" in overview
