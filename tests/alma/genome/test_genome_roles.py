"""What actions do to the things a goal names (``parts/roles.py``), by how the goal describes each thing:
learned from the goal text, the actions and the score alone, on real episodes of every built-in
environment and plug-in, and on recorded episodes of a desk whose things are named by codes the next
task never repeats."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[2] / "envs"))

import crafting_env  # noqa: F401  (registers "crafting")
import depot_env  # noqa: F401  (registers "depot")
import workbench_env  # noqa: F401  (registers "workbench")

from atlas.agent.advice_match import match_advice
from atlas.alma.genome import compile_genome, genome_design, parse_genome
from atlas.envs.registry import get_env

pytestmark = pytest.mark.filterwarnings(
    "ignore:.*(not fully supported|unsupported game|Unable to retrieve walkthrough)"
)

ROLES = parse_genome({"name": "roles", "encode": [{"part": "roles"}], "retrieve": [{"part": "roles"}]})
BUILT_IN = ["graphworld", "alfworld", "textworld", "textworld-fetch"]
PLUG_INS = ["crafting", "workbench", "depot"]


@pytest.mark.parametrize(
    "env_name", [*BUILT_IN, *PLUG_INS, pytest.param("scienceworld", marks=pytest.mark.scienceworld)]
)
def test_the_role_parts_run_clean_on_real_episodes(env_name, make_env, smoke):
    env = get_env(env_name) if env_name in PLUG_INS else make_env(env_name)
    report = smoke(genome_design(ROLES), env)
    assert report.ran_clean, report.to_feedback()
    failed = [p for c in report.calls for p in c.prints if " failed:" in p]
    assert not failed, failed
    updates = [c for c in report.calls if c.phase == "update"]
    assert updates and all(any(p.startswith("roles:") for p in c.prints) for c in updates)


# A desk with hidden house rules, as recorded episodes: coating with resin counts for a brittle crate
# and for no other; loading north counts for every crate, but a crate for bay a loaded north is lost
# when checked (the score falls to 0); loading south counts and delivers anywhere; checking a
# delivered crate counts.
def _crates(*specs: tuple[str, str]) -> str:
    return "Ship crates " + " and ".join(f"{code} ({about})" for code, about in specs) + " today."


def _listed(codes: list[str]) -> list[str]:
    return [
        f"{verb} {c}{tail}"
        for c in codes
        for verb, tail in [("coat", " resin"), ("wrap", " felt"), ("load", " north"), ("load", " south")]
    ]


def _episode(specs: list[tuple[str, str]], actions: list[str]) -> dict:
    """The episode view of ``actions`` on the desk: each step's text, score and end."""
    about = dict(specs)
    done: dict[str, set[str]] = {c: set() for c in about}
    score, steps, lost = 0.0, [], False
    for action in actions:
        verb, code, *rest = action.split()
        gain, text = 0.0, "Nothing changes."
        if verb == "coat" and "brittle" in about[code] and "coat" not in done[code]:
            gain, text = 0.1, f"{code} is coated."
        elif verb == "load" and not done[code] & {"north", "south"}:
            gain, text = 0.3, f"{code} is loaded {rest[0]}."
            done[code].add(rest[0])
        elif verb == "check" and "north" in done[code] and "bay a" in about[code]:
            gain, text, lost = -score, f"{code} is lost.", True
        elif verb == "check" and done[code] & {"north", "south"} and "checked" not in done[code]:
            gain, text = 0.1, f"{code} arrived."
            done[code].add("checked")
        done[code].add(verb)
        score = round(score + gain, 6)
        steps.append(
            {
                "action": {"tool": verb, "args": {}, "text": action},
                "observation": {"text": text},
                "observation_text": text,
                "error": None,
                "score": score,
                "ended": lost,
            }
        )
        if lost:
            break
    goal = _crates(*specs)
    task = {
        "goal": goal,
        "actions": _listed(list(about)),
        "observation": {"text": goal},
        "observation_text": goal,
    }
    return {"task": task, "steps": steps, "success": False, "score": score, "steps_taken": len(steps)}


GAMES = [
    ([("K-12", "brittle, bay c"), ("K-40", "bulky, bay a")],
     ["coat K-12 resin", "coat K-40 resin", "load K-12 south", "load K-40 north", "check K-12", "check K-40"]),
    ([("K-51", "bulky, bay c"), ("K-33", "brittle, bay b")],
     ["coat K-51 resin", "wrap K-33 felt", "coat K-33 resin", "load K-33 north", "check K-33"]),
    ([("K-70", "brittle, bay a"), ("K-18", "bulky, bay b")],
     ["coat K-70 resin", "load K-70 north", "wrap K-18 felt", "coat K-18 resin", "check K-70"]),
    ([("K-25", "brittle, bay c"), ("K-61", "bulky, bay c")],
     ["coat K-25 resin", "load K-25 north", "load K-61 north", "check K-25", "check K-61"]),
]  # fmt: skip


def _design() -> dict:
    namespace: dict = {}
    exec(compile(compile_genome(ROLES), "design", "exec"), namespace)
    return namespace


def _learned(games=GAMES) -> tuple[dict, dict]:
    design, memory = _design(), {}
    for specs, actions in games:
        design["update"](memory, _episode(specs, actions), None)
    return memory, design


def _advice(memory, design, specs, listed=None) -> str:
    goal = _crates(*specs)
    codes = [c for c, _ in specs]
    task = {"goal": goal, "actions": _listed(codes) if listed is None else listed, "observation_text": goal}
    return design["recall"](memory, task, None)


def _plan(advice: str) -> list[str]:
    line = next((x for x in advice.splitlines() if x.startswith("Steps in order: ")), "")
    return [s for s in line.removeprefix("Steps in order: ").rstrip(".").split(", ") if s]


def test_an_action_that_rose_for_things_so_described_is_planned_for_the_next_thing_so_described():
    memory, design = _learned()
    advice = _advice(memory, design, [("Q-9", "brittle, bay c"), ("Q-4", "bulky, bay c")])
    plan = _plan(advice)
    assert "coat Q-9 resin" in plan and "coat Q-4 resin" not in plan, advice
    assert not any("felt" in step for step in plan), "wrapping never counted"
    assert plan.index("coat Q-9 resin") < plan.index("load Q-9 south"), "what rose first comes first"
    assert plan[-2:] == ["check Q-9", "check Q-4"], "a kind the task does not list yet is planned last"


def test_a_rise_undone_later_is_avoided_for_things_so_described_and_not_for_others():
    memory, design = _learned()
    advice = _advice(memory, design, [("Q-2", "bulky, bay a"), ("Q-3", "brittle, bay c")])
    assert "Avoid: load Q-2 north." in advice.splitlines(), advice
    assert "load Q-2 north" not in _plan(advice)
    assert "load Q-2 south" in _plan(advice)
    assert "Avoid: load Q-3 north." not in advice.splitlines()
    listed = _listed(["Q-2", "Q-3"])
    weights = match_advice(advice, "", listed).actions
    assert weights["load Q-2 north"] < 0 < weights[_plan(advice)[0]], "the agent's matcher acts on both"


def test_only_listed_actions_of_a_listed_kind_and_nothing_without_a_listing():
    memory, design = _learned()
    specs = [("Q-9", "brittle, bay c"), ("Q-4", "bulky, bay c")]
    listed = [a for a in _listed(["Q-9", "Q-4"]) if a != "load Q-9 south"]
    plan = _plan(_advice(memory, design, specs, listed))
    assert "load Q-9 south" not in plan and "coat Q-9 resin" in plan, "a listed kind: only what is listed"
    assert _advice(memory, design, specs, []) == "", "the things are read from the listing"


def test_one_rise_in_one_try_is_not_enough_at_a_higher_share():
    genome = parse_genome(
        {
            "name": "strict",
            "encode": [{"part": "roles"}],
            "retrieve": [{"part": "roles", "params": {"share": 0.6}}],
        }
    )
    namespace: dict = {}
    exec(compile(compile_genome(genome), "design", "exec"), namespace)
    memory: dict = {}
    namespace["update"](memory, _episode(*GAMES[0]), None)
    plan = _plan(_advice(memory, namespace, [("Q-9", "brittle, bay c"), ("Q-4", "bulky, bay c")]))
    assert "coat Q-9 resin" not in plan, "one coat that counted, in one try"
    memory, _ = _learned()
    plan = _plan(_advice(memory, namespace, [("Q-9", "brittle, bay c"), ("Q-4", "bulky, bay c")]))
    assert "coat Q-9 resin" in plan, "four brittle crates coated, each counted"


def test_the_role_memory_is_plain_json_and_honours_the_store_policy():
    def learned(store):
        genome = parse_genome({**ROLES.model_dump(), "store": store})
        namespace: dict = {}
        exec(compile(compile_genome(genome), "design", "exec"), namespace)
        memory: dict = {}
        for specs, actions in GAMES:
            namespace["update"](memory, _episode(specs, actions), None)
        return memory

    full = learned({"recent": 0, "cap": 1000, "decay": 1.0})
    assert json.loads(json.dumps(full)) == full
    coat = full["roles"]["coat {X} resin"]
    assert coat["up"] == 4 and coat["n"] == 7 and coat["ups"]["brittle"] == 4 and coat["tried"]["bulky"] == 3
    faded = learned({"recent": 0, "cap": 1000, "decay": 0.7})["roles"]["coat {X} resin"]
    assert faded["n"] < coat["n"]
    assert len(learned({"recent": 0, "cap": 2, "decay": 1.0})["roles"]) <= 2 < len(full["roles"])
