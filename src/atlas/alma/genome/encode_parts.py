"""The encode parts: what each keeps of an episode (``parts/encode.py`` and its siblings hold the code)."""

from __future__ import annotations

from atlas.alma.genome.part_spec import STATE, SUCCESSES_ONLY, Param, Part

ENCODE_PARTS: tuple[Part, ...] = (
    Part(
        "transitions",
        "encode",
        "the map of observed states: which action led from one state to the next, states seen nearby, and the moves each state listed",
        (STATE, Param("neighbors_key", "list_key", "", doc="observation field listing states nearby")),
    ),
    Part(
        "goal_actions",
        "encode",
        "actions that name words of the goal, as templates per goal shape, with the goal state they were taken in "
        "and how the observation text framed the word named (as the agent reads it)",
        (
            SUCCESSES_ONLY,
            STATE,
            Param(
                "any_item",
                "bool",
                True,
                doc="also learn the form of any action that made a thing carried ('take {item}')",
            ),
        ),
    ),
    Part(
        "sightings",
        "encode",
        "which action first showed each word in the observations (and in which state)",
        (Param("goal_only", "bool", False, doc="only words of the episode's goal"), STATE),
    ),
    Part(
        "sequences",
        "encode",
        "the action sequences of episodes, goal words as slots, per goal shape and exact goal (or only the actions that changed something)",
        (
            SUCCESSES_ONLY,
            Param("max_actions", "int", 30, (10, 20, 30, 50)),
            Param(
                "idle",
                "choice",
                "keep",
                ("keep", "drop", "straight"),
                doc="drop: leave out actions that changed nothing lasting in the observation; straight: leave out "
                "the walks that came back to an observation they had left, with no score raised on the way",
            ),
        ),
    ),
    Part(
        "episode_log",
        "encode",
        "a compact text of each episode (goal, outcome, actions) in a vector collection",
        (
            Param("action_form", "choice", "call", ("call", "listed")),
            Param("max_actions", "int", 25, (10, 25, 40)),
        ),
    ),
    Part(
        "insights",
        "encode",
        "1-3 insights per episode from the model (analyze), in a vector collection",
        uses_llm=True,
    ),
    Part(
        "cheatsheet",
        "encode",
        "one cheatsheet of tips revised by the model (summarize) after each episode",
        (Param("max_chars", "int", 1500, (500, 1000, 1500, 3000)),),
        uses_llm=True,
    ),
    Part(
        "effects",
        "encode",
        "what each action did, read from the result text and the score alone: what it made, used, used up and "
        "replaced, whether it did nothing or advanced the task (instance numbers abstracted), which actions "
        "made each word, and when it works: what the fields held when it advanced, did nothing or ended a task",
    ),
    Part(
        "setters",
        "encode",
        "which kind of action sets which field of the observation: per field, the kinds whose step changed it, "
        "the value each action left it at, and whether that value was the action's own number",
    ),
    Part(
        "settings",
        "encode",
        "where a panel's setting leads (a list field of short items: levers pulled, switches on): per thing a "
        "step's new sentences named, the settings it was named under and the action that reached it there; per "
        "item the actions that put it on and off; the kinds that take a thing and put it down",
    ),
    Part(
        "preludes",
        "encode",
        "what was done before an action that raised the score, stage by stage: per word of the goal and score "
        "reached, each action's rises and tries there and the actions taken before each (since the last try "
        "of an action that rose)",
    ),
    Part(
        "rises",
        "encode",
        "what raised the environment's own score, and where: per action, how often its step raised the score or "
        "ended an episode unsolved, the sentence before it that named what it acted on, and the goals it rose under",
    ),
    Part(
        "reveals",
        "encode",
        "what put new things in view: per action taken without going anywhere, how often its step showed things "
        "the episode had not (new words in the actions it listed, numbered things the text had not named), and "
        "how its thing was before ('closed')",
    ),
    Part(
        "roles",
        "encode",
        "what each action did to a thing the goal names, by how the goal describes the thing: how often it rose "
        "the score, was undone later or failed, per word of the thing's description (the thing as a slot)",
    ),
    Part(
        "graph_edges",
        "encode",
        "edges between the state field and a list field in the graph store; per-state counts of an item field",
        (STATE, Param("neighbors_key", "list_key", ""), Param("items_key", "list_key", "")),
        generic=False,
    ),
)
