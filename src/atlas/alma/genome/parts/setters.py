"""The memory of what sets what: which kind of action sets which field of the observation, and to what.

``encode_setters`` keeps, per observation field (a short value: a dial's reading, a floor, a mode), the
kinds of action (instance numbers as '#') whose step changed it, the value each concrete action left
it at, and how often that value was the action's own number ('turn dial 4' left the dial at 4).
``retrieve_setters`` turns it into rules for a goal that names the field: the action that left it at
the value the goal names, the kind with the goal's number where the kind sets its own number, else the
listed actions of that kind not yet seen to leave it elsewhere; and it says to avoid the ones seen to
leave it elsewhere (a setting found right is not set again to a wrong one).

Design code (the sandbox's rules apply); no environment's words: a field is a key of the observation,
its value and the goal's words are compared as words.
"""

from common import NUMBER, STOP, capped_by, goal_words, scored_steps, store_factor, unnumbered, words
from conditions import leaves


def _ticking(steps):
    """The short values (``leaves``) that changed at every step that showed them before and after, two or
    more, taken by two kinds of action or more: a count of steps left, a clock. A reading that appears or
    goes (a panel lit, an episode ended) has not changed by that."""
    shown, changed, kinds = {}, {}, {}
    for step in steps:
        before, after = leaves(step["obs_before"]), leaves(step["obs_after"])
        for k in set(before) & set(after):
            shown[k] = shown.get(k, 0) + 1
            changed[k] = changed.get(k, 0) + (str(before[k]) != str(after[k]))
            kinds.setdefault(k, set()).add(unnumbered(step["action"]))
    return {k for k, n in shown.items() if n >= 2 and changed[k] == n and len(kinds[k]) >= 2}


def encode_setters(memory, episode, tools, p, store):
    """Per field of the observation (``leaves``, less the ``_ticking`` ones that change at every step: the
    steps left), each kind of action whose step changed it: how often (``n``), how often the
    value it left was its own number (``own``), and the value each concrete action last left it at
    (``values``). Counts decay with the store; the fields changed most often are kept, up to its cap."""
    table = memory.setdefault("setters", {})
    factor = store_factor(store)
    for kinds in table.values():
        for rec in kinds.values():
            rec["n"], rec["own"] = round(rec["n"] * factor, 4), round(rec["own"] * factor, 4)
    steps = scored_steps(episode)
    moving = _ticking(steps)
    for step in steps:
        before, after = leaves(step["obs_before"]), leaves(step["obs_after"])
        changed = [k for k in after if k in before and k not in moving and str(before[k]) != str(after[k])]
        numbers = NUMBER.findall(step["action"])
        for field in changed:
            kind = table.setdefault(field, {}).setdefault(
                unnumbered(step["action"]), {"n": 0, "own": 0, "values": {}}
            )
            kind["n"] += 1
            kind["own"] += len(numbers) == 1 and numbers[0] == str(after[field])
            kind["values"].pop(step["action"], None)  # the latest last
            kind["values"][step["action"]] = str(after[field])
            kind["values"] = dict(list(kind["values"].items())[-12:])
    kept = {f: {k: r for k, r in kinds.items() if r["n"] >= 0.05} for f, kinds in table.items()}
    memory["setters"] = capped_by(
        {f: k for f, k in kept.items() if k}, store.get("cap", 200), lambda k: sum(r["n"] for r in k.values())
    )
    print("setters:", len(memory["setters"]), "fields set by an action")


def _setter(kinds, least):
    """The kind of action that set the field most often (and at least ``least`` times), or None."""
    kind, rec = max(kinds.items(), key=lambda kv: kv[1]["n"], default=(None, None))
    return (kind, rec) if rec and rec["n"] >= least - 1e-9 else (None, None)


def _goal_number(goal, name):
    """The number the goal gives after the field's name ('channel 5' -> '5'), or ''."""
    said = [w.lower() for w in words(goal)]
    return next((said[i + 1] for i, w in enumerate(said[:-1]) if w == name and said[i + 1].isdigit()), "")


def _wanted(kind, rec, goal, name, listed):
    """The actions that set the field to what ``goal`` wants: the one seen to leave the value the goal
    names; the kind on the goal's number where every set left the action's own number; else the listed
    actions of the kind that were never seen to leave the field at another value."""
    said = {w.lower() for w in words(goal)}
    number = _goal_number(goal, name)
    if number and rec["own"] >= rec["n"] - 1e-9 and kind.count("#") == 1:
        return [kind.replace("#", number)]
    named = [a for a, v in rec["values"].items() if words(v) and {w.lower() for w in words(v)} <= said]
    if named:
        return named[-1:]
    return [a for a in listed if unnumbered(a) == kind and a not in rec["values"]]


def _elsewhere(rec, goal, name, listed, wanted):
    """The listed actions of a setting kind (two values or more seen) each seen to leave the field at a
    value the goal does not want: taking one undoes what the wanted action set."""
    values = rec["values"]
    if len(set(values.values())) < 2:
        return []
    number, said = _goal_number(goal, name), {w.lower() for w in words(goal)}

    def unwanted(value):
        return value != number if number else not {w.lower() for w in words(value)} <= said

    return [a for a in listed if a in values and a not in wanted and unwanted(values[a])]


def _target(kinds, goal, name):
    """The value the goal wants the field at, as the observation would show it: the goal's number after the
    field's name; else a value some action left it at whose words the goal says; else the goal's word just
    before the name ('a violet glow'); '' when none."""
    number = _goal_number(goal, name)
    if number:
        return number
    said = [w.lower() for w in words(goal)]
    for rec in kinds.values():
        for value in rec["values"].values():
            if words(value) and {w.lower() for w in words(value)} <= set(said):
                return str(value)
    at = said.index(name) if name in said else 0
    before = said[at - 1] if at else ""
    return before if before and before not in STOP and not before.isdigit() else ""


def _finish(table, said, listed, named):
    """A rule for when every named field shows what the goal wants (each as a quoted phrase, '"glow blue"',
    that must be shown word for word): the listed action the goal (its words ``said``) itself names ('then
    seal it': 'seal'), with no number and of no kind that sets a field. None when there is no such action
    or no such field."""
    setting = {kind for kinds in table.values() for kind in kinds}
    final = [
        a
        for a in listed
        if not NUMBER.search(a) and a not in setting and set(goal_words(a.lower())) <= said and goal_words(a)
    ]
    cond = [f'"{name} {value}"' for name, value in named if value]
    if not final or not cond:
        return None
    return {"kind": "rule", "cond": cond, "action": final[0]}


def retrieve_setters(memory, task, tools, p):
    """For each field whose name the goal says ('band', 'floor'), a rule of the actions that set it to what
    the goal wants (``_wanted``), under the field's name: it applies while the observation shows the
    field (a reading shown only where it can be set); and what to avoid, the actions seen to leave it at
    another value (``_elsewhere``). Fields set fewer than ``p['min_sets']`` times give nothing. With
    ``p['finish']``, last, the action the goal names for when every such field reads as it wants (``_finish``)."""
    goal = task.get("goal", "")
    said = {w.lower() for w in words(goal)}
    listed = [str(a) for a in task.get("actions") or []]
    table = memory.get("setters") or {}
    out, named = [], []
    for field, kinds in table.items():
        name = field.split()[-1].lower()
        kind, rec = _setter(kinds, p.get("min_sets", 1))
        if kind is None or name not in said:
            continue
        named.append((name, _target(kinds, goal, name)))
        actions = _wanted(kind, rec, goal, name, listed)
        if actions:
            # " or ": a choice, never read as a plan of steps to walk while the field is not shown
            out.append({"kind": "rule", "cond": [name], "action": " or ".join(actions)})
        undo = _elsewhere(rec, goal, name, listed, actions)
        if undo:
            out.append({"kind": "avoid", "action": ", ".join(undo) + " when " + name})
    finish = _finish(table, said, listed, named) if p.get("finish", True) and named else None
    return [*out, finish] if finish else out
