"""The memory of effects: what actions did, learned from the result text and the score alone, and the
advice it gives. ``encode_effects`` keeps, per action, what it made, used, used up and replaced, whether
it did nothing or advanced the task; ``retrieve_advances`` turns that into rules (and what to avoid),
``retrieve_recipe`` into a plan that makes what the goal names, inputs first.

Design code (the sandbox's rules apply); no environment's words: a thing is a word the text frames, an
action is written as the agent's list writes it, progress is the score or a goal word newly shown.
"""

import json
import re

from common import (
    SENTENCE,
    bump,
    called,
    capped,
    capped_by,
    count_goal,
    decay,
    described,
    fewer,
    field_gains,
    filled,
    finish_where,
    frame_of,
    framed_pairs,
    goal_key,
    goal_kind,
    goal_words,
    idle,
    in_every_goal,
    lasting,
    observed_words,
    placed,
    same_kind,
    scored_steps,
    slots_in,
    stand_in,
    store_factor,
    together,
    unnumbered,
    value_words,
    words,
)
from conditions import (
    clears_record,
    ending_when,
    ends_tasks,
    fatal_heads,
    field_losses,
    given_back,
    here_words,
    idle_states,
    idle_when,
    needs_first,
    needs_of,
    note_done,
    note_judged,
    note_order,
    plain_replies,
    primers_of,
    reply_of,
    says_nothing_new,
    seen_everywhere,
    spoilers_of,
    thing_state,
    undoers,
    volatile,
)


def _goal_of(gw):
    """The goal as effects are filed under it: its words with instance numbers as '#' ('sample S-19' and
    'sample S-55' are one goal; what raised the score for one is a step of the other)."""
    return unnumbered(goal_key(gw))


def _enough(count, p):
    """More than ``min_support - 1`` episodes' worth (counts decay with the store)."""
    return count > p.get("min_support", 1) - 1


def _effect(step, names, goal):
    """What one step (``scored_steps``) did, read from its texts, fields and score alone: ``made`` (words
    that came into a field, a new thing into the things held; for text alone, what it newly frames and keeps
    framing; and goal words it shows that the text before did not), ``uses`` (words the action names that
    the text showed before it: its inputs), ``eats`` (inputs the text stopped framing as before: used up),
    ``swaps`` (frames where it replaced a word the action did not name: a new place for the old one),
    ``moved`` (the goal words it advanced: made, or framed together in a sentence the text did not have
    before, 'You put the key on the shelf'), ``advanced`` (the score rose or a goal word moved) and
    ``nothing`` (it failed, or changed no field, made nothing, no score)."""
    pb, pa = framed_pairs(step["before"], names), framed_pairs(step["after"], names)
    new = pa - pb  # kept: still framed after a following step that changed the text (not a repeated message)
    kept = new & framed_pairs(step["next"], names) if step["next"] != step["after"] else set()
    shown = {w for _, w in pb}
    acted = {w.lower() for w in words(step["action"])}
    if lasting(step["obs_after"]):  # fields that hold things and places: what came into them
        made = field_gains(step["obs_before"], step["obs_after"])
    else:  # text alone: what the text newly frames and keeps framing
        made = {w for f, w in kept if w != f}
    made |= {w for _, w in new if w in goal and w not in shown}
    frames = {}  # how the text frames each thing made: where it lasted, else where it is new
    for f, w in sorted(new - kept) + sorted(kept):
        if w in made and w != f:
            frames[w] = f
    frames_after = {f for f, _ in pa}
    lost = {(f, w) for f, w in pb - pa if f in frames_after and w != f}
    moved = (made & goal) | together(step["before"], step["after"], goal)
    still = idle([step["obs_before"], step["action"], step["obs_after"], step["error"]])
    return {
        "made": {w: frames.get(w, "") for w in sorted(made)},
        "uses": sorted((acted & shown) - made),
        "eats": sorted(
            fewer(step["obs_before"], step["obs_after"], acted) or {w for _, w in lost if w in acted} - made
        ),
        "swaps": sorted({f for f, w in lost if w not in acted and f in frames.values()}),
        "drops": sorted(field_losses(step["obs_before"], step["obs_after"])),
        "moved": moved,
        "advanced": step["gain"] > 0 or bool(moved),
        "nothing": bool(step["error"]) or (still and not made and step["gain"] <= 0 and not moved),
    }


def _goal_form(step, gw, names, moved, where=None):
    """An advancing step as a form any goal can fill: the goal words it moved (``_effect``) that the action
    names, as slots ('take {2} 2 from shelf 1'), a word naming where the agent is (a short text field) as
    ``{@}`` ('take {2} 2 from {@} 1': from wherever it is), and its situation, how the text before framed the first of
    them ('see {2}'; the goal's own sentence is no situation); None when it names none or no sentence
    frames it. With ``where`` ({goal word index: the word the text put in its place}), the situation adds
    where the text put those words (``placed``): 'carry {1} "you are in {3}"', where the action finished
    a task or would have (``stand_in``)."""
    low = [w.lower() for w in gw]
    pieces = re.split(r"([A-Za-z0-9_]+)", step["action"])
    slots = [i for i, t in enumerate(pieces) if t.lower() in moved and t.lower() in low]
    if not slots:
        return None
    first = pieces[slots[0]]
    for i in slots:
        pieces[i] = "{" + str(low.index(pieces[i].lower())) + "}"
    here = here_words(step["obs_before"])
    pieces = ["{@}" if t.lower() in here and t.lower() not in low else t for t in pieces]
    told = ". ".join(
        x for x in SENTENCE.split(str(step["before"])) if not set(low) <= {w.lower() for w in words(x)}
    )
    frame = frame_of(told, first, names)
    if not frame:
        return None
    situation = frame + " {" + str(low.index(first.lower())) + "}"
    added = [placed(told, w, names, "{" + str(i) + "}") for i, w in sorted((where or {}).items())]
    return ["".join(pieces), " ".join([situation, *[a for a in added if a][:2]])]


def _form_key(form, gw, names):
    """Where a form is filed: the goal's shape (names and slots as '*'), the action, the situation."""
    kind = goal_kind(gw, {i for i, w in enumerate(gw) if w.lower() in names} | slots_in(" ".join(form)))
    return json.dumps([kind, unnumbered(form[0]), form[1]])


def encode_effects(memory, episode, tools, p, store):
    """What each action did, from the result text and the score alone (no environment's words): per
    action (instance numbers as '#', so 'take key 2' and 'take key 1' are one), how often it was tried,
    did nothing, advanced the task, ended its episode unsolved (``fatal``), and what it made, used, used
    up and replaced (``_effect``); which actions made each word (``effect_makers``: what makes what,
    e.g. 'join x y' made 'z'); and each advancing step as a form with the goal's words as slots
    (``effect_forms``). Counts decay with the store (``recent`` N: an extra 1 - 1/N per episode, a window
    of about N episodes) and are capped."""
    m = memory.setdefault("effects", {})
    makers = memory.setdefault("effect_makers", {})
    forms = memory.setdefault("effect_forms", {})
    factor = store_factor(store)
    for rec in m.values():
        rec["counts"], rec["made"] = decay(rec["counts"], factor), decay(rec["made"], factor)
    for w in list(makers):
        makers[w] = decay(makers[w], factor)
    for rec in forms.values():
        rec["n"] = round(rec["n"] * factor, 4)
    gw = goal_words((episode.get("task") or {}).get("goal", ""))
    goal = {w.lower() for w in gw}
    count_goal(memory, "effect_goals", gw)
    this_goal = _goal_of(gw)
    names = observed_words(episode)
    steps = scored_steps(episode)
    texts = [s["before"] for s in steps] + [s["after"] for s in steps[-1:]]
    names_of, low = described(texts), [w.lower() for w in gw]
    form_words = {w for w in low if in_every_goal(memory, "effect_goals", w)}
    frames = {}  # the frames each word is shown under in the episode
    for f, w in {pair for text in texts for pair in framed_pairs(text, names)}:
        if f and f != w:
            frames.setdefault(w, set()).add(f)
    places = memory.setdefault("effect_places", [])
    listed = memory.setdefault("effect_listed", {})  # what the agent was shown at a task's start
    for label in (episode.get("task") or {}).get("actions") or []:
        shown = called(label, names_of)
        listed[unnumbered(shown)] = shown
    later = memory.setdefault("effect_later", {})  # what a step of it brought into the list
    ways = memory.setdefault("effect_way", {})  # and that step's action: the way to where it is listed
    for raw in episode.get("steps") or []:
        way = str((raw.get("action") or {}).get("text") or "")
        for label in [a for a in raw.get("new_actions") or [] if isinstance(a, str)]:
            shown = called(label, names_of)
            later[unnumbered(shown)] = shown
            if way:
                ways[unnumbered(shown)] = called(way, names_of)
    counted, stage, moving = set(), 0, volatile(steps)  # stage: how often the score rose before a step
    quiet, done, risen = [], [], []  # in this episode: what did nothing; all taken; whose rise still holds
    taken, pending = set(), {}  # the actions before this step, as the text wrote them; those not judged yet
    for i, step in enumerate(steps):
        here = sorted(here_words(step["obs_before"]))  # the situation it was taken in
        places += [w for w in here if w not in places]
        eff = _effect(step, names, goal)
        if eff["moved"] and step["gain"] <= 0 and given_back(steps, i, eff["moved"]):
            eff = {**eff, "moved": set(), "advanced": False}
        fatal = step["ended"] and not episode.get("success")  # it ended the episode, unsolved, early
        if fatal:  # then what it showed made nothing: 'You focus on the drain' ends a task, however worded
            eff = {**eff, "made": {}, "moved": set(), "advanced": step["gain"] > 0}
        action = called(step["action"], names_of)  # 'open valve 3 (coolant)': one per thing so called
        key = unnumbered(action)
        rec = m.setdefault(key, {"eg": "", "counts": {}, "made": {}, "frames": {}, "judged_at": {}})
        rec["eg"] = action
        rec["tried_goals"] = sorted(set(rec.get("tried_goals", [])) | {this_goal})[:8]
        at = rec.setdefault("tried_at", {})  # per goal, the furthest stage it was tried at
        at[this_goal] = max(at.get(this_goal, 0), stage)
        rec["tried_at"] = dict(list(at.items())[-8:])
        c = rec["counts"]
        refused = bool(step["error"]) and not fatal  # the environment did not take it: it did nothing there
        for name, hit in (
            ("n", 1),
            ("nothing", eff["nothing"]),
            ("up", eff["advanced"]),
            ("fatal", fatal),
            ("refused", refused),
        ):
            bump(c, name, 1 if hit else 0)
        bump(c, "gain", max(step["gain"], 0.0))
        bump(c, "pos", i / max(len(steps) - 1, 1))
        cleared = clears_record(step, taken)
        rec["clears"] = rec.get("clears", 0) + cleared
        note_judged(m, pending, this_goal, key, stage, cleared, refused)
        taken.add(step["action"].lower())
        for w, f in eff["made"].items():
            bump(rec["made"], w)
            rec["frames"][w] = f or rec["frames"].get(w, "")
            bump(makers.setdefault(w, {}), key)
        rec["uses"] = eff["uses"] or rec.get("uses", [])
        rec["eats"] = sorted(set(rec.get("eats", [])) | set(eff["eats"]))[:8]
        rec["swaps"] = sorted(set(rec.get("swaps", [])) | set(eff["swaps"]))[:8]
        rec["drops"] = sorted(set(rec.get("drops", [])) | set(eff["drops"]))[:8]
        rec["made"] = capped(rec["made"], 5)
        if eff["nothing"]:  # the situations it did nothing in (what the fields named before it)
            seen = " ".join(sorted(value_words(step["obs_before"])))[:300]
            rec["idle_in"] = sorted(set(rec.get("idle_in", [])) | {seen})[:4]
            rec["idle_goals"] = sorted(set(rec.get("idle_goals", [])) | {this_goal})[:4]
            rec["idle_here"] = [*[x for x in rec.get("idle_here", []) if x != here], here][-6:]
            rec["idle_as"] = [*rec.get("idle_as", []), thing_state(step["before"], step["action"])][-6:]
            bump(rec.setdefault("replies", {}), reply_of(step))
            rec["replies"] = capped(rec["replies"], 3)
        key_in = "end_in" if fatal else "safe_in"  # the situations it ended a task in, and did not
        note_order(rec, key, risen, done, step["obs_before"], fatal, step["gain"] > 0)  # what came before it
        note_done(rec, key, done, step, moving)
        rec[key_in] = [*[x for x in rec.get(key_in, []) if x != here], here][-6:]
        if eff["advanced"]:  # the situation it advanced in: with those it did nothing in, its conditions
            seen = sorted(value_words(step["obs_before"]))[:80]
            rec["up_in"] = [*[x for x in rec.get("up_in", []) if x != seen], seen][-4:]
        after = "up_after" if eff["advanced"] else "fail_after" if eff["nothing"] or fatal else ""
        if after:  # what had quietly been done before it: with its failures, what it needs first
            rec[after] = [*rec.get(after, [])[-3:], sorted(set(quiet[-12:]) - {key})]
        if eff["nothing"] and not fatal and key not in quiet:
            quiet.append(key)
        if step["gain"] < 0 and risen:  # a rise undone: its own (a switch flipped back), else the last
            bump(c, "undid", int(key in risen))
            risen.remove(key if key in risen else risen[-1])
        if step["gain"] > 0:  # what raised the score for this very goal, in order (a sub-goal reached)
            rec["first_rise"] = min(rec.get("first_rise", stage), stage)
            risen = [k for k in risen if k != key] + [key]
            stage += 1
            ups = memory.setdefault("effect_goal_ups", {}).setdefault(this_goal, [])
            if key not in ups:
                ups.append(key)
            del ups[:-12]
        where, like, moved = {}, step, eff["moved"]  # where it finished the task or would have; ``like``:
        if step["ended"] and episode.get("success"):  # the step on the goal's thing
            where = finish_where(step, low)
        elif not (step["error"] or step["ended"] or eff["nothing"]):
            where, rebound = stand_in(step, low, frames, names, form_words)
            if rebound:
                like, moved = rebound[0], {rebound[1]}
        form = _goal_form(like, gw, names, moved, where) if eff["advanced"] or like is not step else None
        if form:
            key_f = _form_key(form, gw, names)
            rec_f = forms.setdefault(key_f, {"eg": "", "n": 0})
            if where:  # (the one without dropped things anywhere: its situation holds on the way)
                bare = _form_key(_goal_form(like, gw, names, moved), gw, names)
                rec_f["bare"] = bare if bare != key_f else ""
            rec_f["eg"], rec_f["n"] = form[0], rec_f["n"] + (key_f not in counted)  # once per episode
            counted.add(key_f)
    reached = memory.setdefault("effect_reached", {})  # per goal, the furthest stage an episode reached
    reached[this_goal] = max(reached.get(this_goal, 0), stage)
    cap = store.get("cap", 200)
    for w in list(makers):
        makers[w] = capped(makers[w], 3)
    if len(m) > cap:  # the least tried go first
        keep = sorted(m, key=lambda k: -m[k]["counts"].get("n", 0))[:cap]
        memory["effects"] = {k: m[k] for k in keep}
    memory["effect_places"] = places[-cap:]
    memory["effect_listed"] = dict(list(listed.items())[-cap:])
    memory["effect_later"] = dict(list(later.items())[-cap:])
    memory["effect_way"] = dict(list(ways.items())[-cap:])
    memory["effect_makers"] = capped_by(makers, cap, lambda v: sum(v.values()))
    memory["effect_forms"] = capped_by(forms, cap, lambda v: v["n"])
    ups = memory.get("effect_goal_ups") or {}
    memory["effect_goal_ups"] = {k: ups[k] for k in list(ups)[-cap:]}
    memory["effect_reached"] = {k: reached[k] for k in list(reached)[-cap:]}
    print("effects:", len(steps), "steps;", len(memory["effects"]), "actions,", len(makers), "words made")


def retrieve_advances(memory, task, tools, p):
    """From ``effects``: rules 'in a situation like S, A advanced the task' (each form of a step that
    raised the score or newly showed a goal word, filled with this goal's words: 'See egg: take egg 2
    from shelf 1.'), and 'Avoid: A.' for each action that never did anything (failed, or changed nothing;
    the agent's matcher lowers it) in ``p['avoid']`` situations or more (what the fields named before it;
    0: never), under this goal or under two goals or more: in fewer, it may only have come out of order
    ('Avoid: A when W.' where the short fields held W each time it did nothing and not in every situation
    seen: 'Avoid: filter when clear' leaves a cloudy sample's filter to be tried; where its situations share
    no such word but each has one, a line per word: 'Avoid: put leek in pot when whole', '… when washed'
    leave a chopped leek's put to be tried); for each action that,
    every time it was taken, ended its episode unsolved before the step limit (a wrong answer, a fatal
    move) and never advanced a task: one such ending is enough; 'Avoid: A before B.' while it may need a
    riser B first (``needs_first``; ``p['before']``), also where A advanced other tasks, and for each S that
    may have spoiled it after B (``spoilers_of``) 'Avoid: S.' (a state S left) or 'Avoid: S before A.'.
    'Once only: K ….' for each kind K of action whose own retake undid the score it raised (``undoers``).
    Actions that did nothing are not avoided while no action ever advanced a task and they are most of
    those offered at tasks' starts: then 'did nothing' cannot tell what to leave out (observing, waiting).
    Forms need ``p['min_support']`` episodes' worth of support (decayed with the store)."""
    gw = goal_words(task.get("goal", ""))
    out = []
    forms = memory.get("effect_forms") or {}
    finished_as = {rec.get("bare") for rec in forms.values()}
    for key, rec in sorted(forms.items(), key=lambda kv: -kv[1]["n"]):
        kind, _, cond = json.loads(key)
        if not same_kind(kind, gw) or key in finished_as:
            continue
        cond, action = filled(cond, gw), filled(rec["eg"], gw)
        named = [gw[i] for i in slots_in(rec["eg"]) if i < len(gw)]
        form_only = all(in_every_goal(memory, "effect_goals", w) for w in named)  # the task's form
        if _enough(rec["n"], p) and cond and action and named and not form_only:
            for place in memory.get("effect_places") or [] if "{@}" in action else [""]:
                out.append({"kind": "rule", "cond": [cond], "action": action.replace("{@}", place)})
            if '"' in cond and "{@}" not in action:  # only where it finishes: not on the way
                out.append(
                    {"kind": "avoid", "action": action + " unless " + " ".join(re.findall('"[^"]+"', cond))}
                )
    situations = p.get("avoid", 3)
    if situations:
        effects = memory.get("effects") or {}
        fatal, idle = [], []
        plain = plain_replies(effects)
        everywhere = seen_everywhere(effects)
        for rec in effects.values():
            c = rec.get("counts") or {}
            tried = c.get("n", 0)
            varied = (
                len(rec.get("idle_in", [])) >= situations
                and _idle_for(rec, gw)
                and says_nothing_new(rec, plain)
            )
            first = needs_first(rec, effects) if p.get("before", True) else ""
            if ends_tasks(rec) or (first and not ending_when(rec, effects)):
                fatal.append(rec["eg"] + (" before " + first if first else ""))
                spoiled = spoilers_of(rec, effects) if first else []  # a state it left: avoided outright
                fatal += [s + ("" if sets else " before " + rec["eg"]) for s, sets in spoiled]
            elif when := ending_when(rec, effects):
                fatal += [rec["eg"] + " when " + w for w in when]  # each word alone: any of them ends it
            elif varied and c.get("nothing", 0) >= tried - 1e-6:
                where = idle_when(rec, everywhere)
                states = [] if where else idle_states(rec)  # any of them: a line each
                idle += [rec["eg"] + " when " + w for w in states] or [
                    rec["eg"] + (" when " + " ".join(where) if where else "")
                ]
        listed = len(memory.get("effect_listed") or {})
        advanced = any((rec.get("counts") or {}).get("up", 0) for rec in effects.values())
        if not advanced and listed and len(idle) * 2 > listed:  # 'nothing' is all there is to see yet
            idle = []
        out += [{"kind": "avoid", "action": action} for action in fatal + idle]
        for head in fatal_heads(effects, p.get("fatal_kinds", 3)):
            out.append({"kind": "avoid", "action": head + " … unless advised"})
        out += [
            {"kind": "untried", "title": "Once only", "steps": once} for once in [undoers(effects)] if once
        ]
    return out


def _idle_for(rec, gw):
    """Whether what an action did nothing under holds for this goal: it did nothing while pursuing this
    very goal, or under two goals or more. Under one other goal it may only have been out of that goal's
    order (a step another goal needs first), and avoiding it would stop the walks that find its use."""
    goals = rec.get("idle_goals")
    return not goals or _goal_of(gw) in goals or len(goals) >= 2


def _maker(memory, word, stack, p):
    """The action that most often made ``word`` (not one on ``stack``), with enough support."""
    effects = memory.get("effects") or {}
    ranked = sorted(
        (memory.get("effect_makers") or {}).get(word, {}).items(),
        key=lambda kv: (-kv[1], len(effects.get(kv[0], {}).get("uses", []))),
    )
    for key, n in ranked:
        if key in effects and key not in stack and _enough(n, p):
            return key
    return ""


def _apply(rec, have, made_by):
    """``have`` after an action: what it made added, what it used up or a field lost removed, and where it
    replaced a word in a frame (a new place), everything made in that frame before."""
    for frame in rec.get("swaps", []):
        for w in [w for w in have if made_by.get(w) == frame]:
            have.discard(w)
    have.difference_update(rec.get("eats", []))
    have.difference_update(w for w in rec.get("drops", []) if w not in rec.get("made", {}))
    for w in rec.get("made", {}):
        have.add(w)
        made_by[w] = rec.get("frames", {}).get(w, "")


def _make(memory, word, have, made_by, plan, stack, p):
    """Append to ``plan`` the actions that make ``word``: its inputs first (recursively, up to
    ``p['depth']`` levels), then its maker; nothing when it is had or no maker is known."""
    if word in have or len(stack) >= p.get("depth", 6) or len(plan) >= p.get("max_steps", 20):
        return
    key = _maker(memory, word, stack, p)
    if not key:
        return
    rec = memory["effects"][key]
    for _ in range(2):  # again for an input a later one's making used up
        for w in [*rec.get("uses", []), *needs_of(rec)]:
            _make(memory, w, have, made_by, plan, [*stack, key], p)
    if not plan or plan[-1] != rec["eg"]:
        plan.append(rec["eg"])
    _apply(rec, have, made_by)


def retrieve_recipe(memory, task, tools, p):
    """From ``effects``: a plan that makes what the goal names, inputs first. For each goal word some
    action was seen to make (in the order such steps came in episodes), the action that made it, after
    the actions that make its inputs (the words it names that the text showed before it), recursively:
    'Steps in order: get x, get y, join x y.' What the task's first text already frames
    as made is not made again; what an action used up is made again where needed. Instance numbers are
    those last seen (the agent's matcher re-binds them where one listed action fits). Before those, the
    actions that raised the score in earlier episodes of this very goal (its sub-goals), each after what
    makes its inputs: progress toward inputs the goal never names."""
    gw = goal_words(task.get("goal", ""))
    effects = memory.get("effects") or {}
    wanted = []
    for w in [w.lower() for w in gw]:
        key = _maker(memory, w, [], p)
        if key:
            c = effects[key].get("counts") or {}
            wanted.append((c.get("pos", 0.0) / max(c.get("n", 1), 1e-9), w))
    frames = {f for rec in effects.values() for f in (rec.get("frames") or {}).values() if f}
    first = framed_pairs(task.get("observation_text") or "", value_words(task.get("observation") or {}))
    have = {w for f, w in first if f in frames and w != f} | here_words(task.get("observation") or {})
    made_by, plan = {}, []
    for key in (memory.get("effect_goal_ups") or {}).get(_goal_of(gw), []):  # sub-goals of this goal
        rec = effects.get(key)
        if rec:
            for w in [*rec.get("uses", []), *needs_of(rec)]:
                _make(memory, w, have, made_by, plan, [key], p)
            plan += [eg for eg in primers_of(rec, effects) if eg not in plan]
            if not plan or plan[-1] != rec["eg"]:
                plan.append(rec["eg"])
            _apply(rec, have, made_by)
    for _, w in sorted(wanted):
        _make(memory, w, have, made_by, plan, [], p)
    plan = plan[: p.get("max_steps", 20)]
    return [{"kind": "plan", "title": "Steps in order", "steps": plan}] if plan else []
