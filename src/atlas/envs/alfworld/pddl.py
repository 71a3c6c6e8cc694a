"""Turn a household + task into an ALFWorld game: PDDL problem, display names, gold plan.

The problem is written against ``alfworld/data/alfred.pddl`` (the domain the package ships)
with one location per receptacle plus the agent's start in the middle of the room, as in the
real ALFWorld games. Display names ("cabinet 3") follow ALFWorld's ``Demangler`` numbering so
the gold plan uses the exact admissible commands.
"""

from __future__ import annotations

from collections import Counter

from atlas.envs.alfworld.households import Household, TaskSpec, can_contain, has_property

GOALS = {
    # Same goal formulas as alfworld.gen.goal_library ('#' written as '-').
    "pick_and_place_simple": """(and (exists (?r - receptacle) (exists (?o - object) (and
        (inReceptacle ?o ?r) (objectType ?o {obj}Type) (receptacleType ?r {recep}Type)))))""",
    "pick_clean_then_place_in_recep": """(and (exists (?r - receptacle) (exists (?o - object) (and
        (cleanable ?o) (objectType ?o {obj}Type) (receptacleType ?r {recep}Type) (isClean ?o)
        (inReceptacle ?o ?r)))))""",
    "pick_heat_then_place_in_recep": """(and (exists (?r - receptacle) (exists (?o - object) (and
        (heatable ?o) (objectType ?o {obj}Type) (receptacleType ?r {recep}Type) (isHot ?o)
        (inReceptacle ?o ?r)))))""",
    "pick_cool_then_place_in_recep": """(and (exists (?r - receptacle) (exists (?o - object) (and
        (coolable ?o) (objectType ?o {obj}Type) (receptacleType ?r {recep}Type) (isCool ?o)
        (inReceptacle ?o ?r)))))""",
    "pick_two_obj_and_place": """(and (exists (?r - receptacle) (exists (?o1 - object) (and
        (objectType ?o1 {obj}Type) (receptacleType ?r {recep}Type) (inReceptacle ?o1 ?r)
        (exists (?o2 - object) (and (not (= ?o1 ?o2)) (objectType ?o2 {obj}Type)
        (receptacleType ?r {recep}Type) (inReceptacle ?o2 ?r)))))))""",
    "look_at_obj_in_light": """(and
        (exists (?ot - object ?r - receptacle ?a - agent ?l - location) (and
            (objectType ?ot {toggle}Type) (toggleable ?ot) (isToggled ?ot) (receptacleAtLocation ?r ?l)
            (atLocation ?a ?l) (inReceptacle ?ot ?r)))
        (exists (?o - object ?a - agent) (and (objectType ?o {obj}Type) (holds ?a ?o))))""",
}


def display_names(ids: list[str]) -> dict[str, str]:
    """ALFWorld's Demangler numbering: per base name, ids in sorted order get n, n-1, …, 1."""
    base: dict[str, str] = {}
    for i in ids:
        head, sep, _ = i.partition("_bar_")
        if sep:
            base[i] = head + ("basin" if "basin" in i else "")
    counts = Counter(base.values())
    pools = {name: list(range(1, n + 1)) for name, n in counts.items()}
    names = {}
    for i in sorted(base):
        names[i] = f"{base[i]} {pools[base[i]].pop()}"
    return names


def _loc(rid: str) -> str:
    return f"loc_bar_{rid}"


def problem_pddl(h: Household, t: TaskSpec, name: str) -> str:
    items = list(h.items) + ([h.lamp] if h.lamp else [])
    otypes = sorted({i.type for i in items} | {t.object_type})
    rtypes = sorted({r.type for r in h.receptacles})
    objects = [
        "agent1 - agent",
        " ".join(f"{o}Type" for o in otypes) + " - otype",
        " ".join(f"{r}Type" for r in rtypes) + " - rtype",
        " ".join(i.id for i in items) + " - object",
        " ".join(r.id for r in h.receptacles) + " - receptacle",
        " ".join(["loc_bar_start"] + [_loc(r.id) for r in h.receptacles]) + " - location",
    ]
    init = ["(atLocation agent1 loc_bar_start)"]
    for r in h.receptacles:
        init += [f"(receptacleAtLocation {r.id} {_loc(r.id)})", f"(receptacleType {r.id} {r.type}Type)"]
        if r.openable:
            init.append(f"(openable {r.id})")
    placements = dict(t.placements)
    for i in h.items:
        init += [f"(objectType {i.id} {i.type}Type)", f"(pickupable {i.id})"]
        for prop, pred in (("Heatable", "heatable"), ("Coolable", "coolable"), ("Cleanable", "cleanable")):
            if has_property(i.type, prop):
                init.append(f"({pred} {i.id})")
        where = placements[i.id]
        init += [f"(inReceptacle {i.id} {where})", f"(objectAtLocation {i.id} {_loc(where)})"]
    if h.lamp and h.lamp_holder:
        lamp = h.lamp.id
        init += [
            f"(objectType {lamp} DeskLampType)",
            f"(toggleable {lamp})",
            f"(inReceptacle {lamp} {h.lamp_holder})",
            f"(objectAtLocation {lamp} {_loc(h.lamp_holder)})",
        ]
    for rt in rtypes:
        for ot in otypes:
            if can_contain(rt, ot):
                init.append(f"(canContain {rt}Type {ot}Type)")
    goal = GOALS[t.task_type].format(obj=t.object_type, recep=t.receptacle_type, toggle=t.toggle_type)
    nl = "\n    "
    return (
        f"(define (problem {name})\n  (:domain alfred)\n  (:objects{nl}{nl.join(objects)}\n  )\n"
        f"  (:init{nl}{nl.join(init)}\n  )\n  (:goal {goal})\n)\n"
    )


def all_ids(h: Household) -> list[str]:
    ids = [r.id for r in h.receptacles] + [i.id for i in h.items] + (["desklamp_bar_01"] if h.lamp else [])
    return ids


def gold_plan(h: Household, t: TaskSpec) -> list[str]:
    """A shortest-ish command sequence that wins the game (verified by the tests)."""
    names = display_names(all_ids(h))
    by_id = {r.id: r for r in h.receptacles}
    opened: set[str] = set()
    plan: list[str] = []
    here = [""]
    where = dict(t.placements)

    def goto(rid: str) -> None:
        if here[0] != rid:
            plan.append(f"go to {names[rid]}")
            here[0] = rid

    def open_if(rid: str) -> None:
        if by_id[rid].openable and rid not in opened:
            plan.append(f"open {names[rid]}")
            opened.add(rid)

    def take(iid: str) -> None:
        src = where.pop(iid)
        goto(src)
        open_if(src)
        plan.append(f"take {names[iid]} from {names[src]}")

    def put(iid: str, rid: str) -> None:
        goto(rid)
        open_if(rid)
        plan.append(f"move {names[iid]} to {names[rid]}")
        where[iid] = rid

    def first_of(rtype: str) -> str:
        return min((r.id for r in h.receptacles if r.type == rtype), key=lambda x: names[x])

    instances = sorted((i.id for i in h.items if i.type == t.object_type), key=lambda x: names[x])
    obj = instances[0]
    tt = t.task_type
    if tt == "look_at_obj_in_light":
        assert h.lamp and h.lamp_holder
        take(obj)
        goto(h.lamp_holder)
        plan.append(f"use {names[h.lamp.id]}")
        return plan
    target = first_of(t.receptacle_type)
    take(obj)
    for kind, rtype in (("clean", "SinkBasin"), ("heat", "Microwave"), ("cool", "Fridge")):
        if tt == f"pick_{kind}_then_place_in_recep":
            tool = first_of(rtype)
            goto(tool)
            plan.append(f"{kind} {names[obj]} with {names[tool]}")
    put(obj, target)
    if tt == "pick_two_obj_and_place":
        second = instances[1]
        take(second)
        put(second, target)
    return plan


__all__ = ["GOALS", "all_ids", "display_names", "gold_plan", "problem_pddl"]
