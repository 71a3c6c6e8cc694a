"""The advice matcher: which listed actions the advice recommends in the current situation."""

from atlas.agent.advice_match import SPENT, advice_lines, advice_now, advised_actions, match_advice

OBS_EMPTY_HANDED = (
    "You are in room_B. Adjacent rooms: room_D, room_E (goal room), room_G, room_H. "
    "Objects here: nothing. You carry: nothing. Steps left: 18."
)
OBS_CARRYING = (
    "You are in room_B. Adjacent rooms: room_D, room_E (goal room), room_G, room_H. "
    "Objects here: nothing. You carry: compass. Steps left: 14."
)
MOVES = ["move_to room_D", "move_to room_E", "move_to room_G", "move_to room_H"]
ROUTE = """The compass is in room_A.
In room_E when you carry nothing: move_to room_B.
In room_B when you carry nothing: move_to room_G.
In room_G when you carry nothing: move_to room_A.
In room_A when the compass is here: pick_up compass.
In room_A when you carry the compass: move_to room_G.
In room_G when you carry the compass: move_to room_B.
In room_B when you carry the compass: move_to room_E.
In room_E when you carry the compass: put_down compass."""


def test_the_rule_whose_condition_matches_the_situation_wins():
    assert advised_actions(ROUTE, OBS_EMPTY_HANDED, MOVES) == {
        "move_to room_G": advised_actions(ROUTE, OBS_EMPTY_HANDED, MOVES)["move_to room_G"]
    }
    assert list(advised_actions(ROUTE, OBS_CARRYING, [*MOVES, "put_down compass"])) == ["move_to room_E"]


def test_an_object_seen_here_selects_its_pick_up():
    obs = (
        "You are in room_A. Adjacent rooms: room_G. Objects here: compass, rope. You carry: nothing. "
        "Steps left: 16."
    )
    labels = ["move_to room_G", "pick_up compass", "pick_up rope"]
    assert list(advised_actions(ROUTE, obs, labels)) == ["pick_up compass"]


def test_advice_that_names_no_listed_action_or_matches_nothing_changes_nothing():
    assert advised_actions("Be careful and explore systematically.", OBS_EMPTY_HANDED, MOVES) == {}
    assert advised_actions("", OBS_EMPTY_HANDED, MOVES) == {}
    assert (
        advised_actions("In the kitchen when you hold a mug: move_to room_D.", OBS_EMPTY_HANDED, MOVES) == {}
    )


def test_a_label_inside_a_longer_name_is_not_named():
    # "move_to room_B" must not be read out of "move_to room_BC".
    assert (
        advised_actions(
            "In room_B when you carry nothing: move_to room_BC.",
            OBS_EMPTY_HANDED,
            ["move_to room_B", "move_to room_D"],
        )
        == {}
    )


def test_ties_keep_every_best_action_and_text_game_commands_work():
    obs = "You are in the kitchen. You see a fridge and a table. You are carrying nothing."
    advice = "In the kitchen: open fridge.\nIn the kitchen: go north.\nIn the garden: go south."
    got = advised_actions(advice, obs, ["open fridge", "go north", "go south"])
    assert set(got) == {"open fridge", "go north"}


def test_one_line_advice_is_cut_into_sentences():
    assert advice_lines("Go north first. Then open the door! Done?") == [
        "Go north first.",
        "Then open the door!",
        "Done?",
    ]
    assert advice_lines("- one\n* two\n\n") == ["one", "two"]


def test_a_walkthrough_is_followed_step_after_step():
    plan = "Do exactly these commands in order: go north; take key; go south; unlock door with key."
    obs = "You are in a hallway. Exits: north, south."
    assert advised_actions(plan, obs, ["go north", "go south"]) == {"go north": 1.0}
    assert advised_actions(plan, obs, ["go south", "take key"], done=["go north"]) == {"take key": 1.0}
    assert advised_actions(plan, obs, ["go north", "go south"], done=["go north", "take key"]) == {
        "go south": 1.0
    }
    # A step the agent cannot take now is skipped to the next one it can.
    assert advised_actions(plan, obs, ["unlock door with key"], done=["go north", "take key"]) == {
        "unlock door with key": 1.0
    }


def test_a_rule_for_another_situation_in_this_room_does_not_apply():
    """Carrying nothing in room_B, "In room_B when you carry the compass" holds only in part: no bias
    (it would pull a searching agent toward the goal room); carrying the compass, it applies."""
    rule = "In room_B when you carry the compass: move_to room_E."
    assert advised_actions(rule, OBS_EMPTY_HANDED, MOVES) == {}
    assert list(advised_actions(rule, OBS_CARRYING, MOVES)) == ["move_to room_E"]


def test_a_plan_line_among_rules_guides_where_no_rule_applies():
    advice = (
        "When the compass is here: pick_up compass.\n"
        "Search plan: move_to room_B, move_to room_G, move_to room_A, move_to room_G, move_to room_H.\n"
        "In room_B when you carry the compass: move_to room_E."
    )
    assert advised_actions(advice, OBS_EMPTY_HANDED, MOVES, done=["move_to room_B"]) == {
        "move_to room_G": 1.0
    }
    # past the first visit of room_G the plan goes on from where the agent is in it
    done = ["move_to room_B", "move_to room_G", "move_to room_A", "move_to room_G"]
    assert advised_actions(advice, OBS_EMPTY_HANDED, MOVES, done=done) == {"move_to room_H": 1.0}
    assert list(advised_actions(advice, OBS_CARRYING, MOVES, done=done)) == [
        "move_to room_E"
    ]  # a rule applies
    # a list of room names alone ("Map: ...") names no action: it is no plan
    assert (
        advised_actions("Map: room_B: room_D, room_G; room_G: room_A, room_H.", OBS_EMPTY_HANDED, MOVES) == {}
    )


def test_a_failed_attempts_moves_are_not_followed_as_a_plan():
    moves = "move_to room_B; move_to room_G; move_to room_A; move_to room_H"
    failed = (
        "Similar past episodes (most similar first):\n"
        "- (failed, similarity 0.4) Bring the compass to room_E.\n"
        "Outcome: FAILURE\n"
        f"Actions: {moves}\n"
        "Those attempts failed: avoid repeating their actions."
    )
    assert advised_actions(failed, OBS_EMPTY_HANDED, MOVES, done=["move_to room_B"]) == {}
    worked = failed.replace("failed,", "succeeded,").replace("FAILURE", "SUCCESS")
    assert advised_actions(worked, OBS_EMPTY_HANDED, MOVES, done=["move_to room_B"]) == {
        "move_to room_G": 1.0
    }


def test_a_search_plan_does_not_lead_away_from_what_the_goal_names():
    """TextWorld fetch, second search: an exploration plan pulled the agent past the key it was sent
    for (no memory took it in 4 steps; with the plan it walked on for 30). Where a listed action names
    a goal word and no step of the plan does (a search), the plan gives no advice and the agent chooses."""
    plan = "Plan: go east, go north, go west, go south"
    obs = "You are in the study. There is a key on the floor. Exits: east, north."
    goal = "Find the key and take it."
    labels = ["go east", "go north", "take key"]
    assert advised_actions(plan, obs, labels, done=["go east"]) == {"go north": 1.0}  # no goal given
    assert advice_now(plan, obs, labels, done=["go east"], goal=goal) == ({}, [])
    # nothing the goal names in reach: the plan leads
    assert advised_actions(plan, obs, ["go east", "go north"], done=["go east"], goal=goal) == {
        "go north": 1.0
    }
    # a plan that acts on the goal itself (a walkthrough) is no search: it leads, even past another
    # listed action naming a goal word (ALFWorld: another instance of the object)
    walk = "Plan: go east, go north, take key 2, go west"
    both = ["go east", "go north", "take key 1", "take key 2"]
    assert advised_actions(walk, obs, both, done=["go east"], goal=goal) == {"go north": 1.0}
    assert advised_actions(walk, obs, both, done=["go east", "go north"], goal=goal) == {"take key 2": 1.0}
    # rules are not plans: a matching rule still advises as before
    rule = "In the study: go north."
    assert list(advised_actions(rule, obs, labels, goal=goal)) == ["go north"]


def test_a_search_does_not_yield_to_an_action_whose_kind_the_goal_names():
    """ScienceWorld (a lifespan task, seed 9173): the goal says 'Focus on the animal ...' and every room
    lists 'focus on <thing>'. The goal's verb is no thing in reach: the untried plan leads ('look around'
    first); where a listed action names what the goal names ('open door to outside'), the search yields."""
    goal = (
        "Your task is to find the animal with the longest life span. The animals are in the 'outside' "
        "location. Focus on the animal with the longest life span."
    )
    obs = "This room is called the bedroom. In it, you see: a bed, a closet, a painting."
    labels = ["look around", "open closet", "open door to hallway", "pick up bed", "focus on bed"]
    search = "Not tried yet: look around, open door to hallway, pick up bed, pick up closet."
    assert advice_now(search, obs, labels, goal=goal)[0] == {"look around": 1.0}
    kitchen = [*labels, "open door to outside"]
    assert advice_now(search, obs, kitchen, goal=goal) == ({}, [])


def test_a_search_does_not_yield_to_a_goal_named_action_memory_lowers():
    """A goal that ends in its own last step ('... and leave the office with it'): leaving first ended
    every collection game unsolved, so memory lowers it; the search it offers must lead, not yield to the
    one action it says to avoid (the agent then stood at the door with nothing advised)."""
    obs = "You enter the bureau. You are at the entrance hall. Number: none. You carry: identity card."
    goal = "Obtain a fishing licence and leave the office with it."
    labels = ["take a number", "go to window 1", "leave the office"]
    search = "Not tried yet: take a number, go to window 1."
    assert advice_now(search, obs, labels, goal=goal) == ({}, [])  # leaving names the goal: it yields
    assert advice_now(search + "\nAvoid: leave the office.", obs, labels, goal=goal) == (
        {"take a number": 1.0, "leave the office": -1.0},
        ["take a number", "Avoid: leave the office."],
    )


def test_where_no_try_is_listed_the_agent_takes_the_way_to_one():
    """A try listed before only after its way ('go to the cashier then pay the fee'): where no untaken try
    is listed, the way to the first whose way is; a listed try comes first; the way is taken at most
    twice, never where memory lowers it, and taking it does not count as taking the try."""
    tries = "Not tried yet: go to the cashier then pay the fee, go to window 2 then hand in the form, wait."
    window = ["go to the cashier", "go to window 2", "go to window 3"]
    assert advised_actions(tries, "At window 3.", window) == {"go to the cashier": 1.0}
    assert advised_actions(tries, "At window 3.", [*window, "wait"]) == {"wait": 1.0}  # a listed try first
    cashier = ["pay the fee", "go to window 2"]
    assert advised_actions(tries, "At the cashier.", cashier, done=["go to the cashier"]) == {
        "pay the fee": 1.0
    }
    done = ["go to the cashier", "pay the fee"]
    assert advised_actions(tries, "At the cashier.", cashier, done=done) == {"go to window 2": 1.0}
    walked = ["go to the cashier", "go to window 3", "go to the cashier", "go to window 3"]
    assert advised_actions(tries, "At window 3.", window, done=walked) == {"go to window 2": 1.0}
    lowered = advice_now(tries + "\nAvoid: go to the cashier.", "At window 3.", window)[0]
    assert lowered == {"go to window 2": 1.0, "go to the cashier": -1.0}


def test_the_match_is_the_same_in_every_process():
    """Replay: the match goes into the model call's cache key, so it must not
    depend on the per-process order of a set of strings (PYTHONHASHSEED)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    code = (
        "from atlas.agent.advice_match import advice_now\n"
        "obs = 'You are in room_C, a dusty kitchen with a table, a lamp, a red door, a blue chest and an "
        "old map. You carry the brass key and a torch.'\n"
        "advice = 'When you are in room_C with the brass key near the blue chest, old map and red door "
        "under the lamp: open blue chest'\n"
        "print(repr(advice_now(advice, obs, ['open blue chest', 'look'])[0]))\n"
    )
    src = str(Path(__file__).resolve().parents[1] / "src")
    seen = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": str(seed), "PYTHONPATH": src},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in range(8)
    }
    assert len(seen) == 1, seen


def test_a_plan_step_is_the_longest_listed_action_it_names():
    labels = ["take key", "take key 2", "go north"]
    plan = "Search plan: take key 2, go north, go south."
    assert advised_actions(plan, "A room.", labels) == {"take key 2": 1.0}
    assert advised_actions("Search plan: take key, go north, go south.", "A room.", labels) == {
        "take key": 1.0
    }


def test_short_rules_above_a_search_plan_do_not_make_the_advice_one_plan():
    """Two short rules and a search-plan line are two-thirds short lines, which read as a walkthrough whose
    last step named every move at once: the agent took one move and then had no plan."""
    advice = (
        "candle: take candle.\ncandle: examine candle.\nSearch plan: go south, go west, go north, go east."
    )
    labels = ["go east", "go north", "go south", "go west"]
    room = "-= Laundry =- You are in a laundry."
    assert advised_actions(advice, room, labels) == {"go south": 1.0}
    assert advised_actions(advice, room, labels, done=["go south"]) == {"go west": 1.0}
    assert advised_actions(advice, room, labels, done=["go south", "go west"]) == {"go north": 1.0}
    assert advised_actions(advice, "A candle lies here.", [*labels, "take candle"]) == {"take candle": 1.0}


# ---- what to avoid, titled plans, instance numbers, the shared stop words --------------------------------

from pathlib import Path  # noqa: E402

from atlas.agent.advice_match import shared_stop_words  # noqa: E402

CRAFT_OBS = "You have: flax, salt. Sources: flax, salt, sand. Steps left: 9."
CRAFT = ["gather flax", "gather salt", "gather sand", "combine flax salt"]


def test_an_avoid_line_lowers_its_action_anywhere_and_a_situated_one_only_where_it_holds():
    assert advised_actions("Avoid: combine flax salt.", CRAFT_OBS, CRAFT) == {"combine flax salt": -1.0}
    here = "Do not gather sand when you have flax and salt."
    lowered = advised_actions(here, CRAFT_OBS, CRAFT)
    assert list(lowered) == ["gather sand"] and -1.0 <= lowered["gather sand"] <= -0.5
    elsewhere = "Do not gather sand when you carry a compass in room_Q."
    assert advised_actions(elsewhere, CRAFT_OBS, CRAFT) == {}
    # an advised action that is also avoided is not advised; the lines say why
    both = "Have flax salt: combine flax salt.\nAvoid: combine flax salt."
    match = match_advice(both, CRAFT_OBS, CRAFT)
    assert match.actions["combine flax salt"] <= 0 and "Avoid: combine flax salt." in match.lines


def test_avoid_lines_are_never_plan_steps_and_do_not_hide_the_plan_below_them():
    advice = "Avoid: gather sand.\nAvoid: gather salt.\nAvoid: gather flax."
    assert all(v < 0 for v in advised_actions(advice, CRAFT_OBS, CRAFT).values())  # no walkthrough of avoids
    advice = "Avoid: gather sand.\nSearch plan: gather flax, gather salt, combine flax salt."
    assert advised_actions(advice, CRAFT_OBS, CRAFT, done=["gather flax"]) == {
        "gather salt": 1.0,
        "gather sand": -1.0,
    }


def test_a_plan_step_names_the_one_listed_action_that_begins_with_its_words():
    """'ride the belt' is the listed 'ride the belt with the red crate' (the list says what is held); done,
    it counts as that step. Two listed actions beginning so, or a one-word step, name none."""
    plan = "Steps in order: press switch 3, ride the belt, put down."
    obs = "You are at the dock, holding the red crate. Switches on: 3."
    listed = ["press switch 1", "press switch 3", "ride the belt with the red crate", "put down"]
    assert advised_actions(plan, obs, listed, done=["press switch 3"]) == {
        "ride the belt with the red crate": 1.0
    }
    done = ["press switch 3", "ride the belt with the red crate"]
    assert advised_actions(plan, obs, listed, done=done) == {"put down": 1.0}
    two = [*listed, "ride the belt empty"]
    assert advised_actions(plan, obs, two, done=["press switch 3"]) == {"put down": 1.0}
    assert advised_actions("Steps in order: ride, press switch 1, put down.", obs, ["ride fast"]) == {}


def test_a_titled_plan_line_is_never_read_as_a_rule():
    """Its steps not listed now are no situation: words of an untaken step that the observation said once
    made the whole line a rule, advising every listed step at once."""
    plan = (
        "Steps in order: press switch 3, stand at the dock by the belt, press switch 2, ride the belt empty."
    )
    obs = "You stand at the dock by the belt. Switches on: 3. Steps left: 9."
    listed = ["press switch 2", "press switch 3", "ride the belt empty"]
    assert advised_actions(plan, obs, listed, done=["press switch 3"]) == {"press switch 2": 1.0}


def test_a_titled_plan_is_a_plan_from_one_step_and_an_untitled_two_step_line_is_not():
    assert advised_actions("Steps in order: gather sand, combine flax salt.", CRAFT_OBS, CRAFT) == {
        "gather sand": 1.0
    }
    done = ["gather sand"]
    assert advised_actions("Steps in order: gather sand, combine flax salt.", CRAFT_OBS, CRAFT, done) == {
        "combine flax salt": 1.0
    }
    assert advised_actions("Steps in order: combine flax salt.", CRAFT_OBS, CRAFT) == {
        "combine flax salt": 1.0
    }
    # unchanged: two comma-separated steps under another title are no plan
    assert advised_actions("What worked before: gather sand, combine flax salt.", CRAFT_OBS, CRAFT) == {}


HOUSE_OBS = "On the cabinet 3, you see a soapbar 1, and a cloth 2. You are at cabinet 3. You carry: nothing."
HOUSE = [
    "take soapbar 1 from cabinet 3",
    "take cloth 2 from cabinet 3",
    "go to cabinet 1",
    "go to sinkbasin 1",
]


def test_a_step_with_other_instance_numbers_is_rebound_only_where_one_listed_action_fits():
    plan = "Steps in order: go to cabinet 1, take soapbar 2 from cabinet 1, go to sinkbasin 1."
    assert advised_actions(plan, HOUSE_OBS, HOUSE, done=["go to cabinet 3"]) == {
        "take soapbar 1 from cabinet 3": 1.0
    }
    rule = "See soapbar: take soapbar 2 from cabinet 1."
    assert list(advised_actions(rule, HOUSE_OBS, HOUSE)) == ["take soapbar 1 from cabinet 3"]
    two = [*HOUSE, "take soapbar 4 from cabinet 3"]  # which soapbar? not re-bound
    assert advised_actions(rule, HOUSE_OBS, two) == {}
    # a listed action with the very numbers is named as before (no re-binding to the others)
    assert advised_actions("Steps in order: go to cabinet 1.", HOUSE_OBS, HOUSE) == {"go to cabinet 1": 1.0}


def test_the_matcher_and_the_memory_parts_share_one_stop_word_list():
    common = Path(__file__).parents[1] / "src" / "atlas" / "alma" / "genome" / "parts" / "common.py"
    namespace: dict = {}
    exec(
        compile(common.read_text(encoding="utf-8"), str(common), "exec"), namespace
    )  # design code: only `re`
    assert shared_stop_words() == namespace["STOP"] == frozenset(namespace["STOP_WORDS"])
    assert {"the", "you", "when", "some"} <= shared_stop_words()
    from atlas.agent import advice_match

    assert namespace["STOP"] == advice_match._COMMON
    # and what a compiled design carries
    from atlas.alma.genome import compile_genome, parse_genome

    design: dict = {}
    exec(compile_genome(parse_genome({"name": "s", "encode": [{"part": "effects"}]})), design)
    assert design["STOP"] == shared_stop_words()


PANEL = (
    "Panel: valve 1 (coolant) closed; valve 3 (steam) closed; valve 2 (water) open; pump 2 (feed) running."
)
PANEL_LABELS = ["open valve 1", "open valve 3", "close valve 2", "stop pump 2"]


def test_an_action_with_what_its_thing_is_called_is_rebound_to_the_thing_called_so():
    """'open valve 3 (coolant)' names the listed action on the valve this panel calls coolant (valve 1),
    not the listed action that has its old number (valve 3 is steam here)."""
    assert advised_actions(
        "Steps in order: open valve 3 (coolant), stop pump 4 (feed)", PANEL, PANEL_LABELS
    ) == {"open valve 1": 1.0}
    rule = advised_actions("When the coolant is closed: open valve 3 (coolant).", PANEL, PANEL_LABELS)
    assert list(rule) == ["open valve 1"] and rule["open valve 1"] > 0


def test_a_plan_walked_by_what_was_done_to_which_thing():
    """Done 'open valve 1' (the coolant valve here) is the plan's coolant step, so the next is the feed pump's."""
    plan = "Steps in order: open valve 9 (steam), open valve 3 (coolant), stop pump 4 (feed)"
    assert advised_actions(plan, PANEL, PANEL_LABELS, done=["open valve 1"]) == {"stop pump 2": 1.0}


def test_avoid_by_what_a_thing_is_called_and_words_that_call_nothing_leave_the_number_to_decide():
    assert advised_actions("Avoid: close valve 5 (water).", PANEL, PANEL_LABELS) == {"close valve 2": -1.0}
    # the coolant valve is here, closed: no listed action closes it, so that step names nothing
    assert advised_actions("Steps in order: close valve 3 (coolant), stop pump 2", PANEL, PANEL_LABELS) == {
        "stop pump 2": 1.0
    }
    # nothing here is called 'brine', or 'the one by the door': the number decides, as without them
    assert advised_actions("Steps in order: open valve 3 (brine), stop pump 2", PANEL, PANEL_LABELS) == {
        "open valve 3": 1.0
    }
    plan = "Steps in order: open valve 3 (the one by the door), stop pump 2"
    assert advised_actions(plan, PANEL, PANEL_LABELS) == {"open valve 3": 1.0}
    # where the observation calls the valves nothing of their own (only states), the number decides
    bare = "Panel: valve 1 closed; valve 3 closed; valve 2 open."
    assert advised_actions("Steps in order: open valve 3 (coolant), stop pump 2", bare, PANEL_LABELS) == {
        "open valve 3": 1.0
    }


def test_an_avoid_line_with_an_ellipsis_lowers_every_action_so_begun_unless_advised():
    labels = ["focus on drain", "focus on tortoise", "focus", "focus onward", "go to outside"]
    lowered = match_advice("Avoid: focus on … unless advised.", "You are in the hallway.", labels).actions
    assert lowered == {"focus on drain": -1.0, "focus on tortoise": -1.0}
    advice = "Avoid: focus on ... unless advised.\nWhen you see a tortoise: focus on tortoise."
    both = match_advice(advice, "You see a tortoise.", labels).actions
    assert both["focus on tortoise"] > 0 and both["focus on drain"] == -1.0  # the advised one keeps its match


def test_a_try_that_raised_the_score_is_not_advised_again():
    """'Not tried yet' lists tries: once one raised the score, taking it again is no longer a try (a second
    dose of a reagent that reacted ruins the sample) and it is lowered; one that did not may be tried
    again; other plans are walked as before."""
    labels = ["add acid", "add salt", "add dye", "stir"]
    seen = "The solution turns blue. Tube: blue."
    tries = "Not tried yet: add acid, add salt, stir."
    done = ["add acid", "add salt", "stir"]
    assert advised_actions(tries, seen, labels, done) == {}  # walked to its end: nothing said
    assert advised_actions(tries, seen, labels, done, advanced=["add acid"]) == {"add acid": -SPENT}
    recipe = "Steps in order: add acid, add salt, add dye."
    assert advised_actions(recipe, seen, labels, ["add acid"], advanced=["add acid"]) == {"add salt": 1.0}


def test_a_once_only_kind_is_passed_over_once_its_step_raised_the_score_and_is_never_a_step():
    """'Once only: flip ….' (a memory saw a switch flipped back undo its rise): a listed action of that kind
    that raised the score in this episode is lowered as a spent try, one that did not is left alone, and the
    line is neither a rule nor a plan (three kinds in one line are no walkthrough)."""
    labels = ["flip red", "flip blue", "flip", "flipper on", "turn dial 2"]
    seen = "The panel hums. Switches: red on, blue off."
    once = "Once only: flip …."
    assert advised_actions(once, seen, labels, ["flip red"], advanced=["flip red"]) == {"flip red": -SPENT}
    assert advised_actions(once, seen, labels, ["flip red"]) == {}
    three = "Once only: flip …, turn dial …, press …."
    assert advised_actions(three, seen, labels, [], advanced=["turn dial 2"]) == {"turn dial 2": -SPENT}
    assert advised_actions(three, seen, labels, []) == {}
    dots = "Once only: flip ...."
    assert advised_actions(dots, seen, labels, [], advanced=["flip blue"]) == {"flip blue": -SPENT}


def test_a_try_the_advice_also_avoids_here_is_passed_over_for_the_next():
    """A 'Not tried yet' list is tries in any order: a try that an avoid line lowers where the agent is
    gives way to the next try (the matcher advises the salt, and still lowers the dye). Where the avoid
    line's situation does not hold, the dye is the next try. An ordered plan keeps its order: its next
    step stays the step, lowered."""
    labels = ["add dye", "add salt", "stir"]
    tries = "Not tried yet: add dye, add salt, stir.\nAvoid: add dye when cloudy."
    cloudy = advised_actions(tries, "The sample is cloudy.", labels, [])
    assert cloudy["add salt"] == 1.0 and cloudy["add dye"] < 0 and "stir" not in cloudy
    assert advised_actions(tries, "The sample is clear.", labels, []) == {"add dye": 1.0}
    ordered = "Steps in order: add dye, add salt, stir.\nAvoid: add dye when cloudy."
    assert set(advised_actions(ordered, "The sample is cloudy.", labels, [])) == {"add dye"}


def test_a_try_list_of_long_actions_is_still_tries():
    """Its title says what the list is, so steps of seven words and more are tries too (a list whose steps
    were mostly long was read as rules once, and the agent took whichever step it named best)."""
    labels = ["feed the ember lily with fish emulsion", "move the ember lily to the warm bench", "wait a day"]
    tries = "Not tried yet: " + ", ".join(labels[:2]) + ", mist the ember lily."
    assert advised_actions(tries, "The lily is a seedling.", labels, []) == {labels[0]: 1.0}
    assert advised_actions(tries, "The lily is a seedling.", labels, labels[:1]) == {labels[1]: 1.0}


def test_a_try_list_each_then_an_action_takes_that_action_after_every_try():
    """'Not tried yet, each then wait a day: …': after a try of the list, the day's end; after that (or
    after anything else), the next try not yet taken. The action the title names is no try: its rise
    does not spend it."""
    labels = ["water the fern", "mist the fern", "prune the fern", "wait a day"]
    tries = "Not tried yet, each then wait a day: water the fern, mist the fern, prune the fern."
    seen = "The fern is a seedling."
    assert advised_actions(tries, seen, labels, []) == {"water the fern": 1.0}
    assert advised_actions(tries, seen, labels, ["water the fern"]) == {"wait a day": 1.0}
    assert advised_actions(tries, seen, labels, ["water the fern", "wait a day"]) == {"mist the fern": 1.0}
    assert advised_actions(tries, seen, labels, ["wait a day"]) == {"water the fern": 1.0}
    done = ["water the fern", "wait a day", "mist the fern"]
    assert advised_actions(tries, seen, labels, done, advanced=["wait a day"]) == {"wait a day": 1.0}


def test_a_try_passed_over_until_its_first_step_is_taken_once_that_step_is_done():
    """'Avoid: add dye before add salt.' lowers the dye until the salt is among the actions done; the try
    list then comes back to the dye, passed over before, instead of going on after the salt."""
    labels = ["add dye", "add salt", "stir"]
    tries = "Not tried yet: add dye, add salt, stir.\nAvoid: add dye before add salt."
    first = advised_actions(tries, "The sample is clear.", labels, [])
    assert first["add salt"] == 1.0 and first["add dye"] < 0
    assert advised_actions(tries, "The sample is clear.", labels, ["add salt"]) == {"add dye": 1.0}
    assert advised_actions(tries, "The sample is clear.", labels, ["add salt", "add dye"]) == {"stir": 1.0}


def test_a_rule_offering_a_choice_among_one_kind_of_action_is_spent_once_one_raised_the_score():
    """'band: turn dial 2, turn dial 3, turn dial 5' offers notches to try; once one raised the score (and
    the rise holds), the choice is made: the next rule applies, and every listed action of its kind is
    lowered like a spent try (it would set the band again). A rule of one action is no choice."""
    advice = "band: turn dial 2, turn dial 3, turn dial 5.\nchannel: turn knob 4."
    seen = "Band: marine. Channel: 1."
    labels = ["turn dial 1", "turn dial 2", "turn dial 5", "turn knob 2", "turn knob 4"]
    assert set(match_advice(advice, seen, labels).actions) == {"turn dial 2", "turn dial 5"}
    one_left = match_advice(
        advice, seen, ["turn dial 5", "turn knob 4"]
    )  # the others' words are no condition
    assert one_left.actions == {"turn dial 5": 1.0}
    chosen = match_advice(advice, seen, labels, advanced=["turn dial 3"])
    assert chosen.lines == ["channel: turn knob 4."] and chosen.actions["turn knob 4"] > 0
    assert {a: v for a, v in chosen.actions.items() if v < 0} == dict.fromkeys(labels[:3], -SPENT)
    said = match_advice(
        advice.replace(", turn dial", " or turn dial"), seen, labels, advanced=["turn dial 3"]
    )
    assert said == chosen
    alone = match_advice("band: turn dial 2.", seen, labels, advanced=["turn dial 2"])
    assert set(alone.actions) == {"turn dial 2"}


def test_a_try_list_is_no_rule_whose_untaken_steps_are_its_situation():
    """At a closed cabinet, 'Not tried yet: go to bin 1, go to cabinet 2, go to sofa 1.' does not lend the
    listed moves a match because the observation names the cabinet its own unlisted step goes to: the
    rule for the closed cabinet applies, and the list is walked only where no rule does."""
    labels = ["go to bin 1", "go to sofa 1", "open cabinet 2", "examine cabinet 2"]
    seen = "You arrive at cabinet 2. The cabinet 2 is closed. You carry: nothing."
    tries = "Not tried yet: go to bin 1, go to cabinet 2, go to sofa 1."
    advice = f"Cabinet closed: open cabinet 1.\n{tries}"
    assert set(advised_actions(advice, seen, labels, ["go to cabinet 2"])) == {"open cabinet 2"}
    assert advised_actions(tries, seen, labels, ["go to cabinet 2"]) == {"go to bin 1": 1.0}


def test_a_step_done_at_another_setting_is_not_the_plans_step():
    """Jack numbers are sockets of one panel, named by no text: plugging jack 2 is not the plan's 'plug jack
    4', so the plan still asks for jack 4; a cabinet the text shows is another instance, as before."""
    readings = "Readings: hum low, glow violet. Power on."
    labels = [*(f"plug jack {n}" for n in range(1, 6)), *(f"set dial {n}" for n in range(1, 4)), "seal"]
    plan = "Steps in order: switch on, plug jack 4, set dial 2, seal."
    assert advised_actions(plan, readings, labels, done=["switch on", "plug jack 2"]) == {"plug jack 4": 1.0}
    assert advised_actions(plan, readings, labels, done=["switch on", "plug jack 4"]) == {"set dial 2": 1.0}
    house = "You arrive at cabinet 3. The cabinet 3 is closed."
    steps = "Steps in order: go to cabinet 1, open cabinet 1, go to sinkbasin 1."
    listed = ["go to cabinet 1", "go to cabinet 3", "open cabinet 3", "go to sinkbasin 1"]
    assert advised_actions(steps, house, listed, done=["go to cabinet 3"]) == {"open cabinet 3": 1.0}


def test_a_condition_of_quoted_phrases_all_shown_holds_whole_wherever_they_stand():
    """'"glow blue". "hum deep": seal.' holds whole once both phrases are shown, even late in a long
    observation, so it wins over a rule whose one word is shown there too (before, the late words weighed
    less and that rule won); with one phrase missing it does not apply at all."""
    labels = ["seal", "plug jack 2", "plug jack 3"]
    advice = 'Pressure: plug jack 3.\n"glow blue". "hum deep": seal.'
    right = "Jack 4 plugged. Settings: valve 1, dial 5, jack 4. Readings: glow blue, pressure 1, hum deep."
    assert match_advice(advice, right, labels).actions == {"seal": 1.0}
    off = right.replace("hum deep", "hum low")
    assert "seal" not in match_advice(advice, off, labels).actions
