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
    state_of,
    words,
)


def _goal_states(states, gw):
    """The states the goal names: every word of the state's name is a goal word (numbering aside:
    'shelf 2' is named by a goal that says 'shelf', unless the name is only a number)."""
    low = {w.lower() for w in gw}
    out = []
    for s in states:
        parts = [w.lower() for w in words(s)]
        named = [w for w in parts if not w.isdigit()] or parts
        if named and all(w in low for w in named):
            out.append(s)
    return out


def _reverses(edges):
    """Moves that undo one another, learned from round trips: ``a`` -> ``b`` when every round trip
    that went by ``a`` came back by ``b``, from two or more states. Moves that name where they lead
    are not reversed this way (a different state would name a different move back)."""
    backs = {}
    for s, out in edges.items():
        for a, t in out.items():
            if t in a:
                continue
            for b, back in (edges.get(t) or {}).items():
                if back == s:
                    backs.setdefault(a, {}).setdefault(b, set()).add(s)
    out = {}
    for a, bs in backs.items():
        if len(bs) == 1:  # one move back, whichever state the round trip began in
            ((b, starts),) = bs.items()
            if len(starts) >= 2:
                out[a] = b
    return out


def _graph(m):
    """state -> [(action, next state)], with never-entered neighbours reached by the learned move
    template, and the way back along an edge when the move that undoes it is known (``_reverses``)."""
    edges = m.get("edges", {})
    graph = {s: list(out.items()) for s, out in edges.items()}
    reverses = _reverses(edges)
    for s, out in edges.items():
        for a, t in out.items():
            b = reverses.get(a)
            tried = set(edges.get(t) or {}) | set(m.get("stayed", {}).get(t) or [])
            if b and b not in tried and (b, s) not in graph.setdefault(t, []):
                graph[t].append((b, s))
    moves = m.get("moves", {})
    if moves:
        template = max(moves, key=lambda t: moves[t])
        for s in m.get("entered", []):
            known = {dst for _, dst in graph.get(s, [])}
            for other in m.get("seen", []):
                if other not in known and other in m.get("near", {}).get(s, []):
                    graph.setdefault(s, []).append((template.replace("{to}", other), other))
    return graph


def _bfs(graph, src):
    """For each state reachable from ``src``: (distance, first action, previous state)."""
    best = {src: (0, "", "")}
    queue = [src]
    for here in queue:
        for action, nxt in graph.get(here, []):
            if nxt not in best:
                best[nxt] = (best[here][0] + 1, best[here][1] or action, here)
                queue.append(nxt)
    return best


def _towards(graph, targets):
    """For every state with a route to one of ``targets``: the first action of a shortest route."""
    out = {}
    for s in graph:
        if s in targets:
            continue
        reach = _bfs(graph, s)
        hits = sorted((reach[t][0], t) for t in targets if t in reach and t != s)
        if hits:
            out[s] = reach[hits[0][1]][1]
    return out


def _path_actions(graph, reach, src, dst):
    """[(action, state)] from ``src`` to ``dst`` along the breadth-first tree ``reach``."""
    path = [dst]
    while reach[path[-1]][2] != src:
        path.append(reach[path[-1]][2])
    out = []
    for s in reversed(path):
        prev = reach[s][2]
        action = next((a for a, dst2 in graph.get(prev, []) if dst2 == s), "")
        out.append((action, s))
    return out


def _circles(done, path, window=6):
    """Whether taking ``path`` after ``done`` repeats an action a third time within ``window`` steps."""
    seq = list(done)
    for action, _ in path:
        if seq[-window:].count(action) >= 2:
            return True
        seq.append(action)
    return False


def _sighted_states(memory, gw):
    """For each goal word (not those every goal had), the state ``sightings`` saw it appear in most
    often (its usual place)."""
    places = memory.get("sighting_places") or {}
    out = []
    for w in gw:
        if in_every_goal(memory, "sighting_goals", w):
            continue
        ranked = sorted((places.get(w.lower()) or {}).items(), key=lambda kv: -kv[1])
        if ranked:
            out.append(json.loads(ranked[0][0])[0])
    return list(dict.fromkeys(out))


def retrieve_route(memory, task, tools, p):
    """From every known state, the action toward a target state (a path in the learned map).
    ``p['towards']``: 'named' = the states the goal names; 'sighted' = where the goal's words were seen
    most (needs ``sightings`` with a state key; the situation is the state alone, as the item is not
    held yet). ``p['context']`` (named): 'goal_items' adds the goal's item to each rule's situation,
    framed as goal actions left it ('holding key', learned by ``goal_actions``; no rules before that is
    learned), 'none' conditions on the state alone."""
    m = memory.get("transitions") or {}
    gw = goal_words(task.get("goal", ""))
    sighted = p.get("towards", "named") == "sighted"
    states = list(dict.fromkeys(m.get("entered", []) + m.get("seen", [])))
    targets = _sighted_states(memory, gw) if sighted else _goal_states(states, gw)
    if not targets:
        return []
    extra = []
    if not sighted and p.get("context", "goal_items") == "goal_items":
        extra = _held(memory, gw, targets)
        if not extra:  # what holding the item looks like is not known yet: no rule can say when
            return []
    hops = _towards(_graph(m), set(targets))
    if extra and len(hops) > 1 and len(set(hops.values())) == 1:
        # every state takes the same first step (one hop from anywhere): the state does not matter
        return [{"kind": "rule", "cond": extra, "action": next(iter(hops.values()))}]
    return [{"kind": "rule", "cond": [s, *extra], "action": action} for s, action in hops.items()]


def _untried(m, graph):
    """Per entered state, the listed actions that moved the agent from some state but were never tried
    in this one (nor lead to a known state from it): the ways out of the known map."""
    moving = {a for out in m.get("edges", {}).values() for a in out}
    out = {}
    for s in m.get("entered", []):
        known = {a for a, _ in graph.get(s, [])} | set(m.get("stayed", {}).get(s, []))
        ways = [a for a in m.get("listed", {}).get(s, []) if a in moving and a not in known]
        if ways:
            out[s] = ways
    return out


def _explore_rules(m, graph):
    """From every state entered, the action toward the nearest way out of the known map: a state seen
    but never entered, or a state with an untried move (where the rule is that move)."""
    untried = _untried(m, graph)
    frontier = {s for s in m.get("seen", []) if s not in m.get("entered", [])} | set(untried)
    rules = {s: ways[0] for s, ways in untried.items()}
    rules.update({s: a for s, a in _towards(graph, frontier).items() if s not in rules})
    return [{"kind": "rule", "cond": [s], "action": a} for s, a in rules.items()]


def retrieve_explore(memory, task, tools, p):
    """How to cover the learned map and leave it: ``p['form']`` 'plan' = one walk from the task's start
    state that enters every known state, nearest first, then takes the nearest untried move (the
    rules instead when no such walk starts there); 'rules' = from every state entered, the
    action toward the nearest way out of the map (``_explore_rules``)."""
    m = memory.get("transitions") or {}
    graph = _graph(m)
    if p.get("form", "plan") == "rules":
        return _explore_rules(m, graph)
    here = state_of(task.get("observation") or {}, p.get("state_key", ""))
    if not here:
        return []
    # no walk from here (a start off the map): wherever the agent reaches the map, a rule applies
    return _plan(m, graph, here, p.get("max_steps", 30)) or _explore_rules(m, graph)


def _plan(m, graph, here, max_steps):
    """A walk from ``here`` entering every known state, nearest first, then out by the nearest untried
    move; [] when that is fewer than two steps."""
    steps, visited = [], {here}
    while len(steps) < max_steps:
        reach = _bfs(graph, here)
        todo = sorted((d, s) for s, (d, _, _) in reach.items() if s not in visited)
        if not todo:
            break
        best = None
        for _, target in todo:  # nearest first, avoiding routes that circle back (the agent's loop guard)
            path = _path_actions(graph, reach, here, target)
            if best is None:
                best = (target, path)
            if not _circles(steps, path):
                best = (target, path)
                break
        target, path = best
        steps += [a for a, _ in path]
        visited.update(s for _, s in path)
        here = target
    steps += _way_out(graph, _untried(m, graph), here)[: max(max_steps - len(steps), 0)]
    return [{"kind": "plan", "title": "Search plan", "steps": steps}] if len(steps) >= 2 else []


def _way_out(graph, untried, here):
    """The actions from ``here`` to the nearest state with an untried move, then that move."""
    reach = _bfs(graph, here)
    near = sorted((reach[s][0], s) for s in untried if s in reach)
    if not near:
        return []
    target = near[0][1]
    path = _path_actions(graph, reach, here, target) if target != here else []
    return [a for a, _ in path] + [untried[target][0]]


def _framed(frame, word):
    """A situation piece: the word as the observation text frames it ('holding key'), or the word."""
    return (frame + " " + word).strip()


def _supported(count, p):
    """Support counts episodes and decays with the store: more than ``min_support - 1`` episodes' worth."""
    return count > p.get("min_support", 1) - 1


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
        learned = [[*json.loads(k), "", -1][:4] for k, n in ranked if _supported(n, p)]
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
        if _supported(n, p) and action and action not in done:
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
    for w in goal_words(task.get("goal", "")):
        if in_every_goal(memory, "sighting_goals", w):
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
    """A kept action sequence, with this goal's words: of a goal of the same shape, or with
    ``p['match'] == 'goal'`` of this very goal; the latest, or with ``p['prefer'] == 'most'`` the one
    that scored most and then went furthest (for sequences kept from failures, the most progress). With
    ``p['form'] == 'rules'`` as rules instead of a plan: each step that changed something lasting, on the
    sentence it changed ('Fitted nothing: fit x.'). A rule applies however short the sequence (a
    plan only from three steps), and the steps that changed nothing are not replayed."""
    gw = goal_words(task.get("goal", ""))
    if p.get("match", "shape") == "goal":
        goal = goal_key(gw)
        found = [s for s in memory.get("sequences") or [] if s.get("goal") == goal]
    else:
        found = [s for s in memory.get("sequences") or [] if same_kind(s.get("kind", ""), gw)]
    if p.get("prefer", "latest") == "most":
        found = sorted(found, key=lambda s: (s.get("score", 0.0), len(s.get("actions", []))))
    if not found or not found[-1].get("actions"):
        return []
    steps = [filled(a, gw) or a for a in found[-1]["actions"]]
    if p.get("form", "plan") != "rules":
        # A sequence kept from a failed episode (``successes_only`` off) is not what worked: say so.
        worked = found[-1].get("success", True)  # sequences kept before this was recorded: as titled then
        title = "What worked before" if worked else "How far an unfinished attempt got"
        return [{"kind": "plan", "title": title, "steps": steps}]
    rules = []
    for step, where in zip(steps, found[-1].get("situations") or [], strict=False):
        cond = filled(where, gw) or where
        if cond:
            rules.append({"kind": "rule", "cond": [cond], "action": step})
    return rules


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
