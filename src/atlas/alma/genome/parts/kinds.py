"""Kinds of action on the goal's things: a prior for what no game showed yet. Each action listed on a
thing (a word the text frames: 'key' in 'Lying here: key.') is a kind ('take {}') whose
things are framed so ('lying'); a goal's thing that no text framed otherwise fills it:
'lying here lamp: take lamp'. The agent's matcher applies the rule only where that action is
listed and the text frames the thing so; until then it is a line the agent may read.

Design code (the sandbox's rules apply); no environment's words: kinds, frames and things come from the
lists and texts the agent was shown.
"""

from common import (
    STOP,
    bump,
    first_word,
    framed_pairs,
    goal_words,
    in_every_goal,
    unnumbered,
    value_words,
    words,
)
from conditions import ending_words, ends_tasks


def stem(word):
    """A word without its plural ending, lower-case ('potatoes' -> 'potato', 'berries' -> 'berry')."""
    w = word.lower()
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith(("oes", "ses", "xes", "ches", "shes")):
        return w[:-2]
    return w[:-1] if w.endswith("s") and not w.endswith("ss") and len(w) > 3 else w


def thing_frames(memory, text, names):
    """``{word: {frame: count}}`` for the things named so far: how the effects saw each made thing framed
    (a frame: the first word of its sentence that names nothing, 'lying' of 'Lying here: lamp.'; not by an
    action on that very thing: 'take lamp' leaves it held, which is not where a lamp is taken from), and
    how this task's first text frames the things it names (counted above the rest)."""
    out = {}
    for rec in (memory.get("effects") or {}).values():
        own = {x.lower() for x in words(rec.get("eg", ""))}  # what it did to its own thing: an after-state
        for w, f in (rec.get("frames") or {}).items():
            if f and f != w and w not in own:
                bump(out.setdefault(w, {}), f)
    for f, w in framed_pairs(text, names):
        if f and f != w and w in names:
            bump(out.setdefault(w, {}), f, 100)
    return out


def _frame(counts):
    return max(sorted(counts), key=lambda f: counts[f]) if counts else ""


def slot_frames(memory, gw, frames):
    """Per word of the goal, the frames the words in its place in earlier goals of its length were seen
    under: 'lamp' of 'bring lamp hall' was seen lying somewhere, so 'rope' of 'Bring the rope
    to the hall' is looked for there too."""
    out = [set() for _ in gw]
    for goal in memory.get("effect_reached") or {}:
        said = goal.split(" ")
        if len(said) == len(gw):
            for i, w in enumerate(said):
                out[i] |= set(frames.get(w, {}))
    return out


def action_kinds(labels, frames):
    """``{kind: frame}``: each label with one of its things (a word after its first that has a frame) as
    '{}' ('take {}'), framed as most of its things were ('lying': a thing taken is then also held); a word
    numbered as an instance stays a thing ('take {} 2 from shelf 1'), and kinds that differ in their
    numbers only are one."""
    out, by = {}, {}
    for label in labels:
        said = words(label)
        head = said[0].lower() if said else ""
        for w in said[1:]:
            low = w.lower()
            if low in STOP or w.isdigit() or low == head or not frames.get(low):
                continue
            kind = " ".join("{}" if x == w else x for x in said)
            out.setdefault(unnumbered(kind), kind)  # 'go to {} 1' and 'go to {} 2': one kind
            for f, n in frames[low].items():
                bump(by.setdefault(unnumbered(kind), {}), f, n)
    return {kind: _frame(by[key]) for key, kind in out.items()}


def retrieve_kinds(memory, task, tools, p):
    """Rules 'F g: K g' for each kind K of listed action (this task's list and the lists earlier tasks
    started with) whose things the text frames as F, and each goal word g framed so, or never framed yet
    and in a goal's place whose words were (or no word of which was ever framed, where no earlier goal had
    it: a word earlier games sought and no text ever framed is no thing to act on); a word of every goal is
    the task's form, not a thing. None of a kind whose first word ends tasks, nor an action that ended its
    tasks or only ever did nothing. A goal word stands for the shown name it is the plural of. Where this
    task lists a kind on one goal word, the kind is not filled with the goal's other words. Up to
    ``p['max_rules']``, those on things already framed first."""
    gw = goal_words(task.get("goal", ""))
    text = task.get("observation_text") or ""
    names = value_words(task.get("observation") or {}) | set(memory.get("effect_makers") or {})
    effects = memory.get("effects") or {}
    frames = thing_frames(memory, text, names)
    labels = [*(task.get("actions") or []), *(memory.get("effect_listed") or {}).values()]
    kinds = action_kinds([str(x).split(" (")[0] for x in labels], frames)
    ending = ending_words(effects)
    places = slot_frames(memory, gw, frames)
    shown = {stem(w): w for w in sorted(names | set(frames) | {x.lower() for a in labels for x in words(a)})}
    listed_now = {unnumbered(str(a).split(" (")[0]).lower() for a in task.get("actions") or []}
    sought = set((memory.get("effect_goals") or {}).get("words") or {})  # words of earlier goals
    rules = []
    for kind, frame in kinds.items():
        if first_word(kind) in ending:
            continue
        on = [shown.get(stem(g), g) if g.lower() not in frames else g for g in gw]  # 'eggs': 'egg 3' is shown
        lists = [unnumbered(kind.replace("{}", g)).lower() in listed_now for g in on]
        for i, g in enumerate(on):
            low = g.lower()
            if (
                low in STOP
                or g.isdigit()
                or low == first_word(kind)
                or in_every_goal(memory, "effect_goals", g)
                or (any(lists) and not lists[i])  # the task lists this kind on a goal's thing: that one
            ):
                continue
            known = set(frames.get(low, {})) or places[i]
            if (known and frame not in known) or (not known and low in sought):
                continue
            action = kind.replace("{}", g)
            rec = effects.get(unnumbered(action)) or {}
            c = rec.get("counts") or {}
            if rec and (ends_tasks(rec) or (c.get("nothing", 0) >= c.get("n", 0) > 0 and not c.get("up"))):
                continue
            rules.append(
                (low not in frames, len(rules), {"kind": "rule", "cond": [f"{frame} {g}"], "action": action})
            )
    return [r for _, _, r in sorted(rules, key=lambda x: x[:2])][: p.get("max_rules", 8)]
