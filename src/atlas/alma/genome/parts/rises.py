"""The memory of what raised the score, and where: each action whose step raised the environment's own
partial score, with the sentence of the text before it that named what it acted on.

``encode_rises`` keeps, per action (instance numbers as '#'), how often its step raised the score, how
often it ended an episode unsolved, the sentences it rose after (numbers left out: 'You hold mushroom
whole' before 'chop mushroom 8') and the goals it rose under. ``retrieve_rises`` writes each as a rule
'<sentence>: <action>.' for a goal that shares a word with one it rose under (the words every goal has
aside): the agent's matcher applies it where the observation reads like that sentence and re-binds the
action's numbers to the listed action of its kind. Where a kind's number is a setting (the task lists the
kind at several numbers, one of them a form that rose exactly), the rule names the form that rose for
goals like this one, or none: 'set knob 3' rose for goal 3, not for goal 5. It reads the score alone:
where only a finished task scores, it keeps only the steps that finished one.

Design code (the sandbox's rules apply); no environment's words.
"""

from common import (
    SENTENCE,
    capped_by,
    count_goal,
    goal_words,
    in_every_goal,
    scored_steps,
    store_factor,
    unnumbered,
    words,
)
from kinds import stem


def said_before(step):
    """The sentence of the text before ``step`` naming most of the action's words after its first (its
    thing and number; the latest of equals), as plain words without numbers, of a list only its head and
    the items the action names ('You hold mushroom whole' from 'You hold: leek 2 (whole), mushroom 8
    (whole).' for 'chop mushroom 8'); '' where none names one."""
    named = {w.lower() for w in words(step["action"])[1:]}
    best, most = "", 0
    for sentence in SENTENCE.split(str(step["before"])):
        n = len(named & {w.lower() for w in words(sentence)})
        if n and n >= most:
            best, most = sentence, n
    head, _, rest = best.rpartition(":") if ":" in best.split(",")[0] else ("", "", best)
    items = [x for x in rest.split(",") if named & {w.lower() for w in words(x)}]
    return " ".join(w for w in words(" ".join([head, *items])) if not w.isdigit())


def _about(rec, low, every=()):
    """Whether a goal with the words ``low`` (the words not every goal has) and ``every`` (all of its words)
    is one the action's rises were about: where the action names words of every goal it rose under (its
    things, plurals aside), the goal names them all ('move mug 1 to shelf 2' rose for mugs on shelves, not
    for mugs in a sink); else the goal shares a word with one it rose under."""
    if not rec.get("goals"):
        return False
    acted = {stem(w) for w in words(rec["eg"])[1:]}
    things = set.intersection(*[acted & {stem(w) for w in goal} for goal in rec["goals"]])
    if things:
        return bool(things & {stem(w) for w in low}) and things <= {stem(w) for w in [*low, *every]}
    return any(low & set(goal) for goal in rec["goals"])


def _settings(rec):
    """The forms of an action kept under ``settings`` ({} for older memories, which have none)."""
    settings = rec.get("settings")
    return settings if isinstance(settings, dict) else {}


def _set(rec, action, goal):
    """Count one rise of the exact form ``action`` under ``goal`` in ``rec['settings']`` (the latest four
    goals of each form; the eight most risen forms)."""
    settings = _settings(rec)
    form = settings.setdefault(action, {"n": 0, "goals": []})
    form["n"] += 1
    form["goals"] = [*[g for g in form["goals"] if g != goal], goal][-4:]
    rec["settings"] = capped_by(settings, 8, lambda f: f["n"])


def encode_rises(memory, episode, tools, p, store):
    """Per action (instance numbers as '#'): ``n``, how often its step raised the environment's score;
    ``ends``, how often it ended an episode unsolved; ``said``, the sentences it rose after (the latest
    three, ``said_before``); ``goals``, the words of the goals it rose under (the latest four); ``eg``, the
    latest such action; ``settings``, per exact form (numbers kept), its rises and goals. Counts decay with
    the store; the most used are kept, up to its cap."""
    table = memory.setdefault("rises", {})
    factor = store_factor(store)
    for rec in table.values():
        rec["n"], rec["ends"] = round(rec["n"] * factor, 4), round(rec["ends"] * factor, 4)
        for form in _settings(rec).values():
            form["n"] = round(form["n"] * factor, 4)
    gw = goal_words((episode.get("task") or {}).get("goal", ""))
    count_goal(memory, "rise_goals", gw)
    solved = bool(episode.get("success"))
    for step in scored_steps(episode):
        rose, ended = step["gain"] > 0 and not step["error"], step["ended"] and not solved
        if not (rose or ended):
            continue
        rec = table.setdefault(
            unnumbered(step["action"]), {"n": 0, "ends": 0, "said": [], "goals": [], "eg": ""}
        )
        rec["ends"] += ended
        if rose:
            said, goal = said_before(step), sorted({w.lower() for w in gw})
            rec["n"], rec["eg"] = rec["n"] + 1, step["action"]
            rec["said"] = [*[s for s in rec["said"] if s != said], said][-3:] if said else rec["said"]
            rec["goals"] = [*[g for g in rec["goals"] if g != goal], goal][-4:]
            _set(rec, step["action"], goal)
    kept = {k: r for k, r in table.items() if r["n"] + r["ends"] >= 0.05}
    memory["rises"] = capped_by(kept, store.get("cap", 200), lambda r: r["n"] + r["ends"])
    print("rises:", sum(1 for r in memory["rises"].values() if r["n"]), "actions raised the score")


def retrieve_rises(memory, task, tools, p):
    """A rule '<sentence>: <action>.' for each sentence an action raised the score after (``encode_rises``),
    most risen first, up to ``p['max_rules']``: for actions that rose ``p['min_rises']`` times or more, more
    often than they ended episodes unsolved, where this goal is one they were about (``_about``; the words
    every goal had, the task's form, aside). Where the action's number is a setting (``_is_setting``), the
    rule names the form that rose for goals like this one (``_setting``), or there is none."""
    low = {w.lower() for w in goal_words(task.get("goal", ""))}
    own = {w for w in low if not in_every_goal(memory, "rise_goals", w)}
    listed = {str(a).split(" (")[0] for a in task.get("actions") or []}
    out = []
    for rec in sorted((memory.get("rises") or {}).values(), key=lambda r: -r["n"]):
        if not (rec["n"] >= p.get("min_rises", 1) - 1e-6 and rec["n"] > rec["ends"]):
            continue
        if _is_setting(rec, listed):
            action = _setting(rec, own, low, listed)
        else:
            action = rec["eg"] if _about(rec, own, low) else None
        if action:
            out += [{"kind": "rule", "cond": [said], "action": action} for said in reversed(rec["said"])]
    return out[: p.get("max_rules", 16)]


def _is_setting(rec, listed):
    """Whether the action's number is a setting here: this task lists its kind at two numbers or more,
    one of them a form that rose exactly."""
    kind = unnumbered(rec["eg"])
    return sum(1 for a in listed if unnumbered(a) == kind) >= 2 and bool(listed & set(_settings(rec)))


def _setting(rec, own, low, listed):
    """The listed form of a setting to advise for a goal with the words ``low`` (``own``: those not every
    goal has), or None: none where every goal the kind rose under named a word this goal lacks (it rose
    for another value); else the form that rose under a goal naming all of ``own``; else, of the forms that
    rose under two goals or more, the one whose goals consistently named most of ``own`` (and nothing this
    goal lacks)."""
    forms = {
        a: f for a, f in _settings(rec).items() if a in listed and isinstance(f, dict) and f.get("goals")
    }
    goals = [set(g) for f in _settings(rec).values() if isinstance(f, dict) for g in f.get("goals") or []]
    if len(goals) >= 2 and set.intersection(*goals) - low:
        return None
    exact = [a for a, f in forms.items() if any(own <= set(g) for g in f["goals"])]
    if own and exact:
        return max(exact, key=lambda a: forms[a]["n"])
    fits = {}
    for a, f in forms.items():
        named = set.intersection(*map(set, f["goals"])) - (low - own)
        if len(f["goals"]) >= 2 and named and named <= own:
            fits[a] = len(named)
    return max(fits, key=lambda a: (fits[a], forms[a]["n"])) if fits else None
