"""The retrieve and render parts: what each turns memory into for a task, and how advice is written."""

from __future__ import annotations

from atlas.alma.genome.part_spec import Param, Part

RETRIEVE_PARTS: tuple[Part, ...] = (
    Part(
        "route",
        "retrieve",
        "rules: from every known state, the action toward the state the goal names, (towards sighted) the state "
        "where the goal's words were seen most, or (towards scored) where the score rose most for goals like this "
        "one (a path in the learned map, each move after what it was seen to need first); with context goal_items, "
        "once the goal's item is framed as goal_actions left it (held)",
        (
            Param("context", "choice", "goal_items", ("goal_items", "none")),
            Param(
                "towards",
                "choice",
                "named",
                ("named", "sighted", "scored"),
                doc="named: the state the goal names; sighted: where sightings saw the goal's words (before taking "
                "them); scored: where the score rose for goals like this one",
            ),
        ),
        requires=("transitions",),
        requires_if=(("towards", "sighted", "sightings"),),
    ),
    Part(
        "explore",
        "retrieve",
        "a walk from the start through every known state, then out by the nearest untried move (plan; the rules when no walk starts there), or rules toward the map's edge",
        (Param("form", "choice", "plan", ("plan", "rules")), Param("max_steps", "int", 30, (10, 20, 30, 60))),
        requires=("transitions",),
    ),
    Part(
        "goal_rules",
        "retrieve",
        "rules: learned goal-naming action templates filled with this goal's words",
        (
            Param(
                "min_support",
                "int",
                1,
                (1, 2, 3),
                doc="episodes a template was learned in (counts decay with the store; at most the episodes that taught the shape)",
            ),
        ),
        requires=("goal_actions",),
    ),
    Part(
        "where_seen",
        "retrieve",
        "a plan of the actions that most often showed the goal's words (moving to where they did first)",
        (Param("k", "int", 2, (1, 2, 3)),),
        requires=("sightings",),
    ),
    Part(
        "replay",
        "retrieve",
        "a kept action sequence of this goal or one of its shape (the steps goals shared), with this goal's words",
        (
            Param(
                "match", "choice", "shape", ("shape", "goal"), doc="goal: only sequences of this exact goal"
            ),
            Param(
                "prefer",
                "choice",
                "latest",
                ("latest", "most"),
                doc="most: the best-scored, then longest sequence (the most progress a failure made)",
            ),
            Param(
                "form",
                "choice",
                "plan",
                ("plan", "rules"),
                doc="rules: each step that changed something as a rule on the sentence it changed, no plan",
            ),
        ),
        requires=("sequences",),
    ),
    Part(
        "advances",
        "retrieve",
        "rules: in a situation like the one it was taken in, the action that advanced the task (the score rose or "
        "a goal word was newly shown), filled with this goal's words; and what to avoid: actions that never did "
        "anything (answering as their kind does when nothing happens), where the fields held what they held each "
        "time ('Avoid: filter when clear'), or ended their episodes (until what may have to come first is done: "
        "'Avoid: A before B'), and actions that ended episodes only where a field held some word ('Avoid: heat "
        "when warm')",
        (
            Param(
                "min_support",
                "int",
                1,
                (1, 2, 3),
                doc="episodes' worth of advancing steps a form needs (counts decay with the store)",
            ),
            Param(
                "avoid",
                "int",
                3,
                (0, 2, 3),
                doc="'Avoid: <action>' for actions that did nothing in this many situations (0: never)",
            ),
            Param(
                "fatal_kinds",
                "int",
                3,
                (0, 2, 3, 5),
                doc="'Avoid: <first words> … unless advised' once this many actions so begun each ended "
                "their episodes unsolved, more than the others so begun that never advanced a task (0: never)",
            ),
            Param(
                "before",
                "bool",
                True,
                doc="'Avoid: A before B' for an action that ended tasks while B, its kind's earliest action to "
                "raise the score, was not done (it may need B first), and 'Avoid: S before A' for what else came "
                "before an ending after B (S may have spoiled A); else 'Avoid: A'",
            ),
        ),
        requires=("effects",),
    ),
    Part(
        "recipe",
        "retrieve",
        "a plan that makes what the goal names: for each goal word an action made, the actions that make its "
        "inputs first (recursively), then that action; before the steps that raised this goal's score, what "
        "makes their conditions (a field word each worked under) and the quiet steps that came before each success",
        (
            Param("depth", "int", 6, (1, 2, 4, 6), doc="levels of inputs planned for"),
            Param("max_steps", "int", 20, (8, 14, 20, 30)),
            Param("min_support", "int", 1, (1, 2), doc="episodes' worth a maker needs"),
        ),
        requires=("effects",),
    ),
    Part(
        "roles",
        "retrieve",
        "a plan of the actions that rose the score for things described as the goal's things are, each on this "
        "goal's thing, in the order they rose; and what to avoid: actions undone or failed on things so described",
        (
            Param(
                "share",
                "float",
                0.5,
                (0.3, 0.5, 0.6),
                doc="rises (or falls) per try, one try added, to advise",
            ),
            Param("max_steps", "int", 20, (8, 14, 20, 30)),
        ),
        requires=("roles",),
    ),
    Part(
        "setters",
        "retrieve",
        "rules for a goal that names a field of the observation: the action seen to leave it at the value the goal "
        "names, the setting kind on the goal's number where it sets its own number, else the listed actions of "
        "that kind not yet seen to leave it elsewhere; each applies while the observation shows the field",
        (
            Param("min_sets", "int", 1, (1, 2), doc="times a kind of action must have set the field"),
            Param(
                "finish",
                "bool",
                True,
                doc="and the action the goal names ('then seal it'), for when every field it names shows "
                "the goal's value",
            ),
        ),
        requires=("setters",),
    ),
    Part(
        "settings",
        "retrieve",
        "a plan: the toggles to the setting that leads to where the goal's thing is, the action that went there "
        "and the one that takes it; then back, the toggles to the setting that leads to the place the goal "
        "names, the action that goes there and the one that puts the thing down",
        (Param("max_steps", "int", 20, (12, 20, 30)),),
        requires=("settings",),
    ),
    Part(
        "preludes",
        "retrieve",
        "a plan stitched from every game's stages: per score reached, lowest first, the actions that came "
        "before the riser's rises and not before its tries that failed, then the riser",
        (
            Param("min_support", "int", 1, (1, 2), doc="rises an action must have come before"),
            Param("max_steps", "int", 20, (12, 20, 30)),
        ),
        requires=("preludes",),
    ),
    Part(
        "rises",
        "retrieve",
        "rules: each action that raised the score, after the sentence that named what it acted on ('You hold "
        "mushroom whole: chop mushroom 8'), for a goal sharing a word with one it rose under; none for an action "
        "that ended as many episodes as it advanced",
        (
            Param("min_rises", "int", 1, (1, 2), doc="times an action must have raised the score"),
            Param("max_rules", "int", 16, (8, 16, 30)),
        ),
        requires=("rises",),
    ),
    Part(
        "reveals",
        "retrieve",
        "rules: each action that showed new things in at least half its tries, after how its thing was "
        "('Box closed: open box 2'): where what the goal names is out of sight, what puts things in view",
        (
            Param("min_shown", "int", 1, (1, 2), doc="times an action must have shown new things"),
            Param("max_rules", "int", 8, (4, 8, 16)),
        ),
        requires=("reveals",),
    ),
    Part(
        "untried",
        "retrieve",
        "a plan after every other: the actions listed at earlier tasks' start (or brought into the list by a "
        "step), that were never taken under this goal (or only ever did nothing where the fields held what they "
        "do not hold now), none that ended a task unless it may need another action first (then after it); "
        "those on the goal's own things first, then fewest tries; "
        "where nothing learned names a step, the agent tries what it has not instead of the first listed",
        (
            Param("max_steps", "int", 12, (6, 12, 20)),
            Param(
                "goal_first", "bool", True, doc="actions naming a word of the goal (not of every goal) first"
            ),
            Param(
                "unseen_last",
                "bool",
                True,
                doc="of those on the goal's things and of the rest, actions of a kind no game took (their first "
                "word) last: what one does is unknown, and where a wrong one ends the task (a focus, a "
                "submit) it is no safe try",
            ),
            Param(
                "later",
                "bool",
                False,
                doc="also actions a step brought into the list ('chop tomato 2' once a tomato is held), after "
                "those listed at a start: explores further, and where a wrong try is fatal, ends games sooner",
            ),
            Param(
                "sweep",
                "bool",
                False,
                doc="then those listed at a start tried under this goal, fewest tries first",
            ),
            Param(
                "ways",
                "bool",
                False,
                doc="a try not listed at this task's start written after the action whose step listed it "
                "before ('go to the shed then take the rake'): where no untried action is listed, the agent "
                "takes the way to one",
            ),
            Param(
                "trigger",
                "bool",
                True,
                doc="each try followed by the action that emptied the observation's list of what was done (a "
                "firing, a night: 'Not tried yet, each then wait: ...'), so a rise on it names the try that "
                "made it; nothing where no action empties such a list",
            ),
        ),
        requires=("effects",),
    ),
    Part(
        "kinds",
        "retrieve",
        "rules for what no game showed yet: each kind of listed action on a thing (the thing as a slot: "
        "'take {}'), on the goal's things the text frames as it frames that kind's things, or that no text "
        "framed yet ('lying here lamp: take lamp'); none of a kind that ends tasks",
        (Param("max_rules", "int", 8, (4, 8, 16)),),
        requires=("effects",),
    ),
    Part(
        "similar_episodes",
        "retrieve",
        "notes: the most similar past episodes by goal (vector search above a floor)",
        (
            Param("k", "int", 3, (1, 2, 3, 5)),
            Param("floor", "float", 0.0, (0.0, 0.3, 0.5, 0.7)),
            Param(
                "failed_actions",
                "bool",
                True,
                doc="list a failed episode's actions (the agent may follow them)",
            ),
        ),
        requires=("episode_log",),
    ),
    Part(
        "similar_insights",
        "retrieve",
        "notes: the insights most relevant to the goal, strategies first",
        (Param("k", "int", 5, (3, 5, 8)),),
        requires=("insights",),
    ),
    Part("sheet", "retrieve", "notes: the cheatsheet", requires=("cheatsheet",)),
    Part(
        "map_notes",
        "retrieve",
        "notes: exits from the start, where the goal's item was seen, routes through the graph store",
        (
            Param("goal_pattern", "text", r"(\S+) to (\S+?)\.?$"),
            Param("here_note", "text", "take it first."),
            Param("empty_note", "text", "No map yet: explore systematically and note what connects."),
        ),
        requires=("graph_edges",),
        generic=False,
    ),
    # ---- render ----------------------------------------------------------------------------------
    Part(
        "lines",
        "render",
        "rules as '<situation>: <action>', plans as one line of actions, notes as they are; a line budget shared among the retrieve parts",
        (
            Param(
                "order",
                "choice",
                "rules,plans,notes",
                ("rules,plans,notes", "plans,rules,notes", "notes,rules,plans", "notes,plans,rules"),
            ),
            Param("style", "choice", "joined", ("joined", "split", "bare")),
            Param("max_lines", "int", 60, (10, 20, 40, 60, 100)),
        ),
    ),
)
