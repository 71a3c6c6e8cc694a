"""The parts a genome is made of: their roles, parameters and what each needs.

A part's code lives in ``parts/<role>.py`` as ``<role>_<name>(...)`` (design code: it runs in the
sandbox once compiled); this catalog is the host's description of it: the parameters with their
types and allowed values (what mutation draws from and what the LLM operator's grammar allows), and
the encode parts a retrieve part reads. Parameters of kind ``state_key`` / ``list_key`` name an
observation field: their values come from the environment's observations, never from this file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["encode", "retrieve", "render"]
ParamKind = Literal["choice", "int", "float", "bool", "state_key", "list_key", "text"]
ROLES: tuple[Role, ...] = ("encode", "retrieve", "render")


@dataclass(frozen=True)
class Param:
    """One parameter: its kind, default and allowed values (``choices`` for choice/int/float)."""

    name: str
    kind: ParamKind
    default: Any
    choices: tuple[Any, ...] = ()
    doc: str = ""

    def allowed(self, obs_keys: dict[str, list[str]] | None = None) -> list[Any] | None:
        """The values this parameter may take (None: any of its type)."""
        if self.kind == "bool":
            return [False, True]
        if self.kind in ("state_key", "list_key"):
            keys = (obs_keys or {}).get("scalar" if self.kind == "state_key" else "list")
            return ["", *keys] if keys is not None else None
        return list(self.choices) or None


@dataclass(frozen=True)
class Part:
    """A memory part: ``role`` and ``name`` name its function ``<role>_<name>`` in ``parts/<role>.py``."""

    name: str
    role: Role
    summary: str
    params: tuple[Param, ...] = ()
    # encode parts whose memory this part reads (their parameters reach this part too, e.g. state_key)
    requires: tuple[str, ...] = ()
    # (parameter, value, encode part): a memory read only when the parameter has that value
    requires_if: tuple[tuple[str, Any, str], ...] = ()
    uses_llm: bool = False  # calls summarize/analyze (costs model calls during collection)
    generic: bool = True  # False: a port of one hand-built design, kept for the baselines, not sampled

    @property
    def function(self) -> str:
        return f"{self.role}_{self.name}"

    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params}

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    def reads(self, params: dict[str, Any]) -> tuple[str, ...]:
        """The encode parts this part reads with ``params`` (defaults fill what is unset)."""
        values = {**self.defaults(), **params}
        extra = tuple(enc for name, value, enc in self.requires_if if values.get(name) == value)
        return self.requires + tuple(e for e in extra if e not in self.requires)


STATE = Param("state_key", "state_key", "", doc="observation field naming where the agent is")
SUCCESSES_ONLY = Param(
    "successes_only",
    "bool",
    True,
    doc="learn from successful episodes only (else also what failures' actions left)",
)

PARTS: tuple[Part, ...] = (
    # ---- encode ----------------------------------------------------------------------------------
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
                ("keep", "drop"),
                doc="drop: leave out actions that changed nothing lasting in the observation",
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
    # ---- retrieve --------------------------------------------------------------------------------
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
                doc="episodes a template was learned in (counts decay with the store)",
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
        "a kept action sequence of a goal of the same shape (or of this very goal), with this goal's words",
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
        (Param("min_sets", "int", 1, (1, 2), doc="times a kind of action must have set the field"),),
        requires=("setters",),
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

_BY_KEY = {(p.role, p.name): p for p in PARTS}


def part(role: str, name: str) -> Part | None:
    return _BY_KEY.get((role, name))  # type: ignore[arg-type]


def parts(role: Role, *, generic_only: bool = False) -> list[Part]:
    return [p for p in PARTS if p.role == role and (p.generic or not generic_only)]


@dataclass
class StoreParam:
    name: str
    choices: tuple[Any, ...]
    doc: str


STORE_PARAMS: tuple[StoreParam, ...] = (
    StoreParam("recent", (0, 10, 30), "keep the last N sequences (0: all)"),
    StoreParam("cap", (50, 200, 1000), "at most this many keys per counter"),
    StoreParam("decay", (1.0, 0.9, 0.7), "counts are multiplied by this before each episode adds its own"),
)
STORE_DEFAULTS: dict[str, Any] = {"recent": 0, "cap": 200, "decay": 1.0}


@dataclass
class ObsKeys:
    """The observation fields of an environment, by shape, read from real observations."""

    scalar: list[str] = field(default_factory=list)
    lists: list[str] = field(default_factory=list)
    # How much each field looks like a state (scalar: values recur across observations) or a list of
    # states nearby (list: its items are values of scalar fields); draws favour the likelier ones.
    weights: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, list[str]]:
        return {"scalar": list(self.scalar), "list": list(self.lists)}


__all__ = ["PARTS", "ROLES", "STORE_DEFAULTS", "STORE_PARAMS", "ObsKeys", "Param", "Part", "part", "parts"]
