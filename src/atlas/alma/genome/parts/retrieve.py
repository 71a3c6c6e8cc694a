"""Retrieve parts: what memory says about a new task. Each ``retrieve_<part>(memory, task, tools, p)``
returns advice items: ``{"kind": "rule", "cond": [words], "action": text}`` (do ``action`` when the
situation shows ``cond``), ``{"kind": "plan", "title": text, "steps": [actions]}`` or
``{"kind": "note", "text": text}``. Actions are written as the agent's action list writes them.
"""

import json
import re

from common import (
    filled,
    goal_key,
    goal_words,
    in_every_goal,
    same_kind,
    slots_in,
    words,
)


def _framed(frame, word):
    """A situation piece: the word as the observation text frames it ('holding key'), or the word."""
    return (frame + " " + word).strip()


def _supported(count, p, taught=None):
    """Support counts episodes and decays with the store: more than ``min_support - 1`` episodes' worth,
    or, where fewer than ``min_support`` episodes ``taught`` this shape, more than ``taught - 1``: a
    threshold weeds out what one episode did by chance only where another could have confirmed it."""
    need = p.get("min_support", 1) if taught is None else min(p.get("min_support", 1), taught)
    return count > need - 1


def retrieve_goal_rules(memory, task, tools, p):
    """Templates of goal-naming actions learned under this goal's shape, filled with this goal's words:
    'do X when the situation shows what X names, framed as it was when X was done' (and the goal
    state it was taken in; an action also done in the goal's state is advised only there)."""
    gw = goal_words(task.get("goal", ""))
    out = []
    for kind, counts in (memory.get("goal_actions") or {}).items():
        if not same_kind(kind, gw):
            continue
        ranked = sorted(counts.items(), key=lambda kv: -kv[1])
        taught = (memory.get("goal_action_episodes") or {}).get(kind)
        learned = [[*json.loads(k), "", -1][:4] for k, n in ranked if _supported(n, p, taught)]
        in_goal_state = {template for where, template, _, _ in learned if where}
        for where, template, frame, slot in learned:
            if not where and template in in_goal_state:
                continue  # done in the goal's state too: elsewhere it was a detour
            if all(
                in_every_goal(memory, "goal_action_goals", gw[i])
                for i in slots_in(template + where)
                if i < len(gw)
            ):
                continue  # it names only the task's form ('take book' for 'take'): a thing of that episode
            state = filled(where, gw) if where else ""
            places = memory.get("goal_action_places") or [] if "{here}" in template else [""]
            for place in places:
                action = filled(template.replace("{here}", place), gw)
                named = {t.lower() for t in words(action)}
                items = [w for w in gw if w.lower() in named and w != state][:1]
                items = [gw[slot]] if 0 <= slot < len(gw) else items
                items = [_framed(filled(frame, gw) or frame, w) for w in items]
                cond = [state, *items] if state else items
                if action and cond:
                    out.append({"kind": "rule", "cond": cond, "action": action})
    return out + _carry_rules(memory, gw, p, {r["action"] for r in out})


def _goal_item(memory, gw):
    """The word of the goal that names its thing: the first that not every goal had (two goals or
    more), that is no number and no state entered ('' when unknown)."""
    if (memory.get("goal_action_goals") or {}).get("episodes", 0) < 2:
        return ""
    states = {w.lower() for s in memory.get("goal_action_places") or [] for w in words(s)}
    for w in gw:
        low = w.lower()
        if not low.isdigit() and low not in states and not in_every_goal(memory, "goal_action_goals", w):
            return w
    return ""


def _carry_rules(memory, gw, p, done):
    """Rules from ``carry_forms``: the action that made any thing carried, for the goal's thing."""
    item = _goal_item(memory, gw)
    out = []
    if not item:
        return out
    for key, n in sorted((memory.get("carry_forms") or {}).items(), key=lambda kv: -kv[1]):
        template, frame = json.loads(key)
        action = filled(template.replace("{item}", item), gw)
        if _supported(n, p, memory.get("carry_form_episodes")) and action and action not in done:
            done.add(action)
            out.append(
                {"kind": "rule", "cond": [_framed(filled(frame, gw) or frame, item)], "action": action}
            )
    return out


def _held(memory, gw, targets):
    """How the goal's item looks once a goal action taken anywhere has been done ('holding key'): the
    most frequent frame learned under this goal's shape, for a goal word that is not a target state."""
    low = {t.lower() for t in targets}
    for kind, counts in (memory.get("goal_action_after") or {}).items():
        if not same_kind(kind, gw):
            continue
        for key, _ in sorted(counts.items(), key=lambda kv: -kv[1]):
            slot, frame = json.loads(key)
            if slot < len(gw) and gw[slot].lower() not in low:
                return [_framed(frame, gw[slot])]
    return []


def retrieve_where_seen(memory, task, tools, p):
    """For each goal word (not those every goal had), the actions that most often showed it before (a
    search plan); where the state they showed it in is known and ``transitions`` learned how moves are
    written, the move there first."""
    seen = memory.get("sightings") or {}
    places = memory.get("sighting_places") or {}
    moves = (memory.get("transitions") or {}).get("moves") or {}
    move = max(moves, key=lambda t: moves[t]) if moves else ""
    steps = []
    gw = goal_words(task.get("goal", ""))
    for w in gw:
        if in_every_goal(memory, "sighting_goals", w, gw):
            continue
        if move and places.get(w.lower()):
            ranked = sorted(places[w.lower()].items(), key=lambda kv: -kv[1])[: p.get("k", 2)]
            found = []
            for key, _ in ranked:
                place, action = json.loads(key)
                found += [move.replace("{to}", place), action]
        else:
            ranked = sorted((seen.get(w.lower()) or {}).items(), key=lambda kv: -kv[1])
            found = [a for a, _ in ranked[: p.get("k", 2)]]
        steps += [a for a in found if a not in steps]
    return [{"kind": "plan", "title": "Where these were found before", "steps": steps}] if steps else []


def retrieve_replay(memory, task, tools, p):
    """A kept action sequence, with this goal's words: of this very goal, or (unless ``p['match'] ==
    'goal'``) of a goal of the same shape; the latest, or with ``p['prefer'] == 'most'`` the one that
    scored most and then went furthest (for sequences kept from failures, the most progress). From
    another goal's sequence only the steps that name goal words, re-bound to this goal's, and the steps
    that sequences of two or more goals of this shape took: one goal's way to its thing is not another
    thing's way, and a step that did no part of its task ('examine key', kept as ``futile``) is not
    this one's either. With ``p['form'] == 'rules'`` as rules instead of a plan: each step that changed
    something lasting, on the sentence it changed ('Fitted nothing: fit x.'). A rule applies however
    short the sequence (a plan only from three steps), and the steps that changed nothing are not
    replayed."""
    gw = goal_words(task.get("goal", ""))
    goal = goal_key(gw)
    kept = [s for s in memory.get("sequences") or [] if s.get("actions")]
    found = [s for s in kept if s.get("goal") == goal]
    shared = None
    if not found and p.get("match", "shape") != "goal":
        found = [s for s in kept if same_kind(s.get("kind", ""), gw)]
        shared = _steps_of_many_goals(found)
    if p.get("prefer", "latest") == "most":
        found = sorted(found, key=lambda s: (s.get("score", 0.0), len(s.get("actions", []))))
    if not found:
        return []
    actions, where = found[-1]["actions"], found[-1].get("situations") or []
    futile = found[-1].get("futile") or []  # sequences kept before this was recorded: every step did
    pairs = [(a, where[i] if i < len(where) else "") for i, a in enumerate(actions)]
    if shared is not None:
        did = [not (i < len(futile) and futile[i]) for i in range(len(pairs))]
        pairs = [(a, w) for (a, w), d in zip(pairs, did, strict=True) if (slots_in(a) and d) or a in shared]
    steps = [filled(a, gw) or a for a, _ in pairs]
    if not steps:
        return []
    if p.get("form", "plan") != "rules":
        # A sequence kept from a failed episode (``successes_only`` off) is not what worked: say so.
        worked = found[-1].get("success", True)  # sequences kept before this was recorded: as titled then
        title = "What worked before" if worked else "How far an unfinished attempt got"
        return [{"kind": "plan", "title": title, "steps": steps}]
    rules = []
    for step, (_, changed) in zip(steps, pairs, strict=True):
        cond = filled(changed, gw) or changed
        if cond:
            rules.append({"kind": "rule", "cond": [cond], "action": step})
    return rules


def _steps_of_many_goals(sequences):
    """The steps (as kept, goal words as slots) that sequences of two or more different goals took."""
    goals = {}
    for s in sequences:
        for a in set(s.get("actions") or []):
            goals.setdefault(a, set()).add(s.get("goal"))
    return {a for a, g in goals.items() if len(g) > 1}


def retrieve_similar_episodes(memory, task, tools, p):
    """The most similar past episodes (vector search on the goal), as notes; a failed one without its
    actions unless ``p['failed_actions']`` (the agent reads a list of actions as a plan to follow)."""
    if not memory.get("episodes"):
        return []
    hits = tools.find_similar(task.get("goal", ""), p.get("k", 3), "episodes")
    hits = [h for h in hits if h["score"] >= p.get("floor", 0.0)]
    if not hits:
        return []
    lines = ["Similar past episodes (most similar first):"]
    for hit in hits:
        ok = hit["metadata"].get("success")
        text = hit["text"] if ok or p.get("failed_actions", True) else hit["text"].split("\nActions:")[0]
        tag = "succeeded" if ok else "failed"
        lines.append("- (" + tag + ", similarity " + str(round(hit["score"], 2)) + ") " + text)
    if [h for h in hits if h["metadata"].get("success")]:
        lines.append("Follow the successful episode's approach, adapting names to this task.")
    else:
        lines.append("Those attempts failed: avoid repeating their actions.")
    return [{"kind": "note", "text": line} for line in lines]


def retrieve_similar_insights(memory, task, tools, p):
    """Insights most relevant to the goal (vector search), strategies first, then pitfalls."""
    if not memory.get("items"):
        return []
    good = tools.find_similar(task.get("goal", ""), p.get("k", 5), "insights")
    if not good:
        return []
    strategies = [h["text"] for h in good if h["metadata"].get("kind") == "strategy"]
    pitfalls = [h["text"] for h in good if h["metadata"].get("kind") != "strategy"]
    lines = []
    if strategies:
        lines.append("Strategies that worked before:")
        lines += ["- " + s for s in strategies]
    if pitfalls:
        lines.append("Pitfalls seen before:")
        lines += ["- " + s for s in pitfalls]
    return [{"kind": "note", "text": line} for line in lines]


def retrieve_sheet(memory, task, tools, p):
    """The cheatsheet, the same for every task."""
    sheet = memory.get("cheatsheet", "")
    if not sheet:
        return []
    return [{"kind": "note", "text": "Cheatsheet from earlier tasks:\n" + sheet}]


def _route_names(tools, src, dst):
    if src == dst:
        return [src]
    return tools.graph_path(src, dst)


def retrieve_map_notes(memory, task, tools, p):
    """Notes from the graph store and per-state sightings: known exits from the start, where the goal's
    first captured name (``p['goal_pattern']``, a regex with two groups: item, destination) was seen
    most, and routes there and on to the destination. ``p['here_note']`` / ``p['empty_note']``: the
    words for "the item is here" and "no map yet"."""
    obs = task.get("observation") or {}
    start = obs.get(p.get("state_key", ""))
    match = re.search(
        p.get("goal_pattern", r"(\S+) to (\S+?)\.?$"), task.get("goal", "").strip(), re.IGNORECASE
    )
    if not match or not isinstance(start, str):
        return []
    obj, dest = match.group(1), match.group(2)
    lines = []
    exits = tools.graph_neighbors(start)
    if exits:
        lines.append("Known exits from " + start + ": " + ", ".join(exits) + ".")
    seen = memory.get("map_sightings", {}).get(obj, {})
    source = None
    if obj in (obs.get(p.get("items_key", "")) or []):
        lines.append("The " + obj + " is here: " + p.get("here_note", "take it first."))
        source = start
    elif seen:
        ranked = sorted(seen.items(), key=lambda kv: -kv[1])
        source = ranked[0][0]
        lines.append("The " + obj + " was seen before in: " + ", ".join(r for r, _ in ranked[:3]) + ".")
        path = _route_names(tools, start, source)
        if path:
            lines.append("Route to " + source + ": " + " -> ".join(path) + ".")
    if source:
        path = _route_names(tools, source, dest)
        if path:
            lines.append("Then carry it to " + dest + ": " + " -> ".join(path) + ".")
    if not lines:
        return [
            {
                "kind": "note",
                "text": p.get("empty_note", "No map yet: explore systematically and note what connects."),
            }
        ]
    lines.append("Objects move between tasks: if the " + obj + " is not where it was seen, explore.")
    return [{"kind": "note", "text": line} for line in lines]
