"""What actions do to the things a goal names, by how the goal describes each thing: an action on a
thing ('coat {X} resin') that raised the score for every thing the goal described with some words
('brittle') and for few others is advised for the next thing so described, whatever it is called;
one whose rise was undone later (the score fell at a step on the same thing) is avoided for things
so described. Learned from the goal text, the actions as the agent's list writes them and the score.

Design code (the sandbox's rules apply); no environment's words: a thing is a token of an action that
the goal also names ('K-12', 'rotor'); its description, the goal's words after it up to
the next thing or the end of a clause, single and in pairs ('bay c'); an action on a thing, the
action with the thing as ``{X}``.
"""

import re

from common import bump, capped_by, decay, first_word, scored_steps, store_factor

TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
CLAUSE = re.compile(r"[.;:)\n]")  # the end of what the goal says about one thing


def _tokens(text):
    return [t.lower() for t in TOKEN.findall(str(text))]


def _things(goal, labels):
    """The goal's tokens that some action of ``labels`` names, as the goal writes them, in goal order
    (numbers alone left out: they count, they name nothing)."""
    named = {t for label in labels for t in _tokens(label)}
    out = []
    for t in TOKEN.findall(str(goal)):
        if t.lower() in named and not t.isdigit() and t.lower() not in [o.lower() for o in out]:
            out.append(t)
    return out


def _descriptions(goal, things):
    """``{thing: [features]}``: the words the goal says after each thing up to the next thing or the end
    of a clause, each word and each pair of adjacent words ('12', 'cm', '12 cm')."""
    out = {t.lower(): [] for t in things}
    for clause in CLAUSE.split(str(goal)):
        current, said = None, []
        for t in [*_tokens(clause), None]:
            if t is None or t in out:
                if current is not None:
                    pairs = [said[i] + " " + said[i + 1] for i in range(len(said) - 1)]
                    out[current] = sorted(set(out[current]) | set(said) | set(pairs))
                current, said = t, []
            elif current is not None:
                said.append(t)
    return out


def _form(action, thing):
    """``action`` with ``thing`` as ``{X}`` ('' when it names it not once, or names another as well)."""
    pieces = re.split(r"([A-Za-z0-9][A-Za-z0-9_-]*)", str(action))
    hits = [i for i, piece in enumerate(pieces) if piece.lower() == thing.lower()]
    if len(hits) != 1:
        return ""
    pieces[hits[0]] = "{X}"
    return "".join(pieces)


def _outcomes(steps, things, success):
    """``[(form, thing, outcome, stage)]``, once per action on a thing: 'up' (the score rose at one of
    its tries), 'down' (it fell there, or the episode ended unsolved there; or a rise that a later fall at
    a step on the same thing undid) or 'none'; ``stage``: how many other actions had risen on the thing
    before it rose (what it may need first)."""
    out, seen, last_up, rises = [], {}, {}, {}
    for step in steps:
        named = [t.lower() for t in things if t.lower() in _tokens(step["action"])]
        fell = step["gain"] < 0 or (step["ended"] and not success and step["gain"] <= 0)
        for t in named:
            if fell and t in last_up:  # the fall undid the rise of what was done to it before
                out[last_up.pop(t)][2] = "down"
                fell = False
        form = _form(step["action"], named[0]) if len(named) == 1 else ""
        if not form:
            continue
        key = (form, named[0])
        if key not in seen:
            seen[key] = len(out)
            out.append([form, named[0], "none", 0])
        row = out[seen[key]]
        if step["gain"] > 0 and row[2] == "none":
            row[2], row[3] = "up", rises.get(named[0], 0)
            rises[named[0]] = row[3] + 1
            last_up[named[0]] = seen[key]
        elif fell and row[2] == "none":
            row[2] = "down"
    return out


def encode_roles(memory, episode, tools, p, store):
    """Per action on a thing (``_form``): how often it was taken, rose the score, was undone or failed, in
    all and per feature of the thing's description (``_descriptions``), and how many actions had risen on
    the thing before it rose (its stage: the order of a plan). Counts decay with the store (``recent`` N: an extra 1 - 1/N per episode) and the
    least tried actions go first past the store's cap."""
    table = memory.setdefault("roles", {})
    factor = store_factor(store)
    for rec in table.values():
        for name in ("tried", "ups", "downs"):
            rec[name] = decay(rec[name], factor)
        rec["n"], rec["up"], rec["down"] = (round(rec[k] * factor, 4) for k in ("n", "up", "down"))
    task = episode.get("task") or {}
    steps = scored_steps(episode)
    things = _things(task.get("goal", ""), list(task.get("actions") or []) + [s["action"] for s in steps])
    about = _descriptions(task.get("goal", ""), things)
    for form, thing, outcome, stage in _outcomes(steps, things, bool(episode.get("success"))):
        rec = table.setdefault(
            form, {"n": 0, "up": 0, "down": 0, "at": 0.0, "tried": {}, "ups": {}, "downs": {}}
        )
        rec["n"] += 1
        for w in about.get(thing, []):  # ``thing`` as ``_outcomes`` gives it: lower-case
            bump(rec["tried"], w)
        if outcome != "none":
            rec[outcome] += 1
            for w in about.get(thing, []):
                bump(rec[outcome + "s"], w)
        if outcome == "up":
            rec["at"] = rec["at"] + (stage - rec["at"]) / rec["up"]  # its stage when it rose, on average
    memory["roles"] = capped_by(table, store.get("cap", 200), lambda v: v["n"])
    print("roles:", len(things), "things;", len(memory["roles"]), "actions on things")


def _share(rec, kind, features):
    """The best share of ``kind`` ('up' or 'down') among the tries on things with one of ``features``
    (or on any thing), counted as if one more try had not: one rise in one try is 0.5. 0 when things
    with one of ``features`` were tried twice or more and it never did so for them (never rose for a
    thing so described: that word tells more than what it did for others)."""
    best = rec[kind] / (rec["n"] + 1)
    for w in features:
        tried, did = rec["tried"].get(w, 0), rec[kind + "s"].get(w, 0)
        if tried >= 2 and not did:
            return 0.0
        best = max(best, did / (tried + 1))
    return best


def retrieve_roles(memory, task, tools, p):
    """For each thing the goal names (a token the listed actions name), the actions on it that rose the
    score for things described as it is (a share of ``p['share']`` or more of their tries, ``_share``), as a
    plan in the order they rose in earlier episodes ('Steps in order: coat K-7 resin, load K-7
    north, check K-7.'), and 'Avoid: <action>.' for those undone or failed as often. Of a kind of action
    the task lists ('load'), only those it lists; a kind it does not list yet is planned as learned. Needs
    an environment that lists its actions (the things are read from the listing)."""
    listed = {str(a).lower(): str(a) for a in task.get("actions") or []}
    things = _things(task.get("goal", ""), list(listed.values()))
    about = _descriptions(task.get("goal", ""), things)
    offered = {first_word(label) for label in listed.values()}
    least = p.get("share", 0.5)
    steps, out = [], []
    for form, rec in (memory.get("roles") or {}).items():
        for thing in things:
            label = listed.get(form.replace("{X}", thing).lower())
            if not label and first_word(form) in offered:  # its kind is offered, not on this thing so
                continue
            label = label or form.replace("{X}", thing)  # a kind offered later ('check' once loaded)
            up = _share(rec, "up", about[thing.lower()])
            down = _share(rec, "down", about[thing.lower()])
            if down >= least:  # a fall undoes what rose before it: caution first
                out.append({"kind": "avoid", "action": label})
            elif up >= least or (up and rec["up"] >= 2 and not rec["down"]):  # or rose often, never harmed
                steps.append((round(rec["at"]), things.index(thing), -up, label))
    plan = [label for *_, label in sorted(steps)][: p.get("max_steps", 20)]
    return ([{"kind": "plan", "title": "Steps in order", "steps": plan}] if plan else []) + out
