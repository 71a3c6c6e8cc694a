"""The memory of the map: which action led from one state to the next (``encode_transitions``), and
the advice it gives: the way toward a state the goal names, where its words were seen, or where the task's
score rose (``retrieve_route``), and a walk that covers the map and leaves it (``retrieve_explore``).

Design code (the sandbox's rules apply); a state is the value of an observation field the genome names
(``state_key``), an action is written as the agent's list writes it.
"""

import json

from common import (
    bump,
    capped,
    goal_key,
    goal_words,
    in_every_goal,
    scored_steps,
    state_of,
    steps_of,
    value_text,
    words,
)
from retrieve import _held


def encode_transitions(memory, episode, tools, p, store):
    """The map of observed states: ``state --action--> next state`` for observation field ``p['state_key']``,
    the states entered, the states named in list field ``p['neighbors_key']`` (seen, maybe never entered),
    how actions that change state are written (``move template``: the action with the next state as
    ``{to}``), the actions each state listed (``listed``) and those tried there that went nowhere
    (``stayed``): a listed action that moved the agent elsewhere but was never tried here leads out of
    the known map. Also what a move needs first (``opens``: the action after which, in the same state, the
    move came into the list, e.g. a way opened; templated by the state the move leads to) and where the
    score rose, per goal (``gains``), and the words the goals of failed games named (``sought``)."""
    m = memory.setdefault("transitions", {"edges": {}, "entered": [], "seen": [], "near": {}, "moves": {}})
    key, near = p.get("state_key", ""), p.get("neighbors_key", "")
    first = (episode.get("task") or {}).get("observation") or {}
    observations = [first] + [s[2] for s in steps_of(episode)]
    if not episode.get("success"):  # what this game looked for and did not find
        goal = goal_words((episode.get("task") or {}).get("goal", ""))
        m["sought"] = list(dict.fromkeys([*m.get("sought", []), *(w.lower() for w in goal)]))[-200:]
    for obs in observations:
        here = state_of(obs, key)
        if here and here not in m["entered"]:
            m["entered"].append(here)
        listed = obs.get(near) if near and isinstance(obs, dict) else None
        for other in listed if isinstance(listed, list) else []:
            name = value_text(other)
            if name and name != here and name not in m["seen"]:
                m["seen"].append(name)
            if name and here and name not in m["near"].setdefault(here, []):
                m["near"][here].append(name)
    for obs in observations:  # the actions each state listed: a move listed but never taken is a way out
        here = state_of(obs, key)
        listed = m.setdefault("listed", {})
        for value in obs.values() if here and isinstance(obs, dict) else []:
            for item in value if isinstance(value, list) else []:
                if isinstance(item, str) and item not in listed.setdefault(here, []):
                    listed[here] = [*listed[here], item][-40:]
    added = 0
    for before, action, after, error in steps_of(episode):
        src, dst = state_of(before, key), state_of(after, key)
        stayed = m.setdefault("stayed", {})
        if src and (error or dst in ("", src)) and action not in stayed.get(src, []):
            stayed[src] = [*stayed.get(src, []), action][-40:]  # tried here, went nowhere
        if error or not src or not dst or src == dst:
            continue
        out = m["edges"].setdefault(src, {})
        if out.get(action) != dst:
            out[action] = dst
            added += 1
        if dst in action:
            bump(m["moves"], action.replace(dst, "{to}"))
    m["moves"] = capped(m["moves"], 5)
    _learn_openers(m, episode, key)
    _learn_gains(m, episode, key, store.get("cap", 200))
    if m[
        "moves"
    ]:  # listed actions of the learned move form (or of what it needs first) name states near here
        best = max(m["moves"], key=lambda t: m["moves"][t])
        forms = [f.partition("{to}") for f in [best, *(m["opens"].get(best) or {})] if "{to}" in f]
        for obs in observations:
            here = state_of(obs, key)
            for text in _listed(obs) if here else []:
                for head, _, tail in forms:
                    if text.startswith(head) and text.endswith(tail) and len(text) > len(head) + len(tail):
                        other = text[len(head) : len(text) - len(tail)]
                        if other != here and other not in m["near"].setdefault(here, []):
                            m["near"][here].append(other)
                        if other not in m["seen"]:
                            m["seen"].append(other)
    print("transitions:", added, "new;", len(m["entered"]), "states entered,", len(m["seen"]), "seen")


def _listed(obs):
    """The strings of an observation's list fields (the actions offered, things in sight), in order."""
    out = {}
    for value in obs.values() if isinstance(obs, dict) else []:
        for item in value if isinstance(value, list) else []:
            if isinstance(item, str):
                out[item] = True
    return list(out)


def _learn_openers(m, episode, key):
    """``opens[move][action]``: counts of a move coming into the list right after ``action``, taken where the
    agent stayed (a way opened, then the move through it listed). A move that names the state it led to is
    kept as its template, with that state as ``{to}`` in the action too ('go to {to}' after
    'unlock gate to {to}'), so it applies to moves never taken; another move, with the state it was taken
    in ('lobby<TAB>go east': a gate east of the lobby)."""
    moving = {a: dst for out in m["edges"].values() for a, dst in out.items()}
    opens = m.setdefault("opens", {})
    for before, action, after, error in steps_of(episode):
        here = state_of(before, key)
        if error or not here or state_of(after, key) not in ("", here):
            continue
        for move in sorted((set(_listed(after)) - set(_listed(before))) & set(moving)):
            dst = moving[move]
            named = dst in move and dst in action
            pair = (
                (move.replace(dst, "{to}"), action.replace(dst, "{to}"))
                if named
                else (here + "\t" + move, action)
            )
            if pair[1] != pair[0]:
                bump(opens.setdefault(pair[0], {}), pair[1])
    m["opens"] = {k: capped(v, 3) for k, v in list(opens.items())[-100:]}


def _learn_gains(m, episode, key, cap):
    """``gains[goal][state]``: [total, rises]: how much and how often the environment's score rose in each
    state (after the step that raised it), per goal text."""
    goal = goal_key(goal_words((episode.get("task") or {}).get("goal", "")))
    for step in scored_steps(episode):
        here = state_of(step["obs_after"], key)
        if here and step["gain"] > 0:
            total, rises = m.setdefault("gains", {}).setdefault(goal, {}).get(here, [0.0, 0])
            m["gains"][goal][here] = [round(total + step["gain"], 6), rises + 1]
    gains = m.get("gains") or {}
    m["gains"] = {g: gains[g] for g in list(gains)[-cap:]}


def _opener(m, src, action, dst):
    """The action that made ``action`` (a move from ``src`` to ``dst``) listed where it was not, as
    learned; '' if none."""
    opens = m.get("opens") or {}
    for key, to in (
        (action.replace(dst, "{to}") if dst and dst in action else "", dst),
        (src + "\t" + action, ""),
    ):
        ranked = opens.get(key) if key else None
        if ranked:
            return max(ranked, key=lambda a: ranked[a]).replace("{to}", to)
    return ""


def _opened(m, src, path):
    """``path`` ([(action, state)] from ``src``) with the action each move needs first (``_opener``) before it."""
    out = []
    for action, dst in path:
        first = _opener(m, src, action, dst)
        out += [(first, dst)] if first else []
        out.append((action, dst))
        src = dst
    return out


def _scored_states(m, gw):
    """The states where the score rose by most at a time, over the goals most like this one (half their
    words or more shared): where the task's main progress was made before (a small rise anywhere, such as
    for leaving the start, does not draw the route)."""
    want = {w.lower() for w in gw}
    alike = []
    for goal, states in (m.get("gains") or {}).items():
        have = set(goal.split())
        alike.append((len(want & have) / max(len(want | have), 1), states))
    best = max((share for share, _ in alike), default=0)
    total = {}
    for share, states in alike if best >= 0.5 else []:
        for state, (gain, rises) in states.items() if share == best else []:
            old = total.get(state, [0.0, 0])
            total[state] = [old[0] + gain, old[1] + rises]
    size = {s: gain / rises for s, (gain, rises) in total.items() if rises}
    top = max(size.values(), default=0)
    return [s for s, g in size.items() if g >= 0.9 * top] if top > 0 else []


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


def _acted_on(m):
    """The words the lists named as things (``_things_named``); None where the map kept no list."""
    items = [a for listed in (m.get("listed") or {}).values() for a in listed]
    return _things_named(items) if items else None


def _things_named(items):  # an action's words past its first ('take candle': candle), an item whole
    return {w.lower() for ws in map(words, items) for w in (ws[1:] or ws)}


def _spots(m, task):
    """Where the thing was seen: the states whose lists offered an action on a goal word (past its first
    word; not a name alone, nor a state's name), for each word some states' lists did not."""
    states = {s.lower() for s in [*m.get("entered", []), *m.get("seen", [])]}
    gw = {w.lower() for w in goal_words(task.get("goal", ""))} - states
    acts = {s: [a for a in items if len(words(a)) > 1] for s, items in (m.get("listed") or {}).items()}
    named = {s: _things_named(items) & gw for s, items in acts.items()}
    spots = set()
    for w in gw:
        where = {s for s, ws in named.items() if w in ws}
        if len(where) < len(named):
            spots |= where
    return spots


def _sighted_states(memory, gw):
    """For each goal word (not those every goal had, nor, where the map knows the listed actions, one no
    listed action ever named as a thing: 'find' in 'You find yourself…'), the state ``sightings`` saw it
    appear in most often (its usual place)."""
    places = memory.get("sighting_places") or {}
    acted = _acted_on(memory.get("transitions") or {})
    out = []
    for w in gw:
        if in_every_goal(memory, "sighting_goals", w, gw) or (acted is not None and w.lower() not in acted):
            continue
        ranked = sorted((places.get(w.lower()) or {}).items(), key=lambda kv: -kv[1])
        if ranked:
            out.append(json.loads(ranked[0][0])[0])
    return list(dict.fromkeys(out))


def retrieve_route(memory, task, tools, p):
    """From every known state, the action toward a target state (a path in the learned map), after what
    that move needs first where that was learned (a way opened: ``_opener``). ``p['towards']``: 'named' =
    the states the goal names; 'sighted' = where the goal's words were seen most (needs ``sightings``
    with a state key; the situation is the state alone, as the item is not held yet); 'scored' = where the
    score rose most in episodes of goals like this one (the state alone). ``p['context']`` (named):
    'goal_items' adds the goal's item to each rule's situation, framed as goal actions left it ('holding
    key', learned by ``goal_actions``; no rules before that is learned), 'none' conditions on the state
    alone."""
    m = memory.get("transitions") or {}
    gw = goal_words(task.get("goal", ""))
    towards = p.get("towards", "named")
    states = list(dict.fromkeys(m.get("entered", []) + m.get("seen", [])))
    if towards == "sighted":
        targets = _sighted_states(memory, gw)
    elif towards == "scored":
        targets = _scored_states(m, gw)
    else:
        targets = _goal_states(states, gw)
    if not targets:
        return []
    extra = []
    if towards == "named" and p.get("context", "goal_items") == "goal_items":
        extra = _held(memory, gw, targets)
        if not extra:  # what holding the item looks like is not known yet: no rule can say when
            return []
    graph = _graph(m)
    hops = _towards(graph, set(targets))
    if extra and len(hops) > 1 and len(set(hops.values())) == 1:
        # every state takes the same first step (one hop from anywhere): the state does not matter
        return _hop_rules(m, graph, {"": next(iter(hops.values()))}, extra)
    return _hop_rules(m, graph, hops, extra)


def _hop_rules(m, graph, hops, extra):
    """Rules ``state (+ extra): action`` for ``hops`` (state -> move; '' = any state), each after the rule
    for what its move needs first."""
    out = []
    for s, action in hops.items():
        edges = graph.get(s, []) if s else [edge for out_of in graph.values() for edge in out_of]
        dst = next((t for a, t in edges if a == action), "")
        cond = [s, *extra] if s else list(extra)
        out += [{"kind": "rule", "cond": cond, "action": a} for a, _ in _opened(m, s, [(action, dst)])]
    return out


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


def _leads_off(m, graph, untried):
    """Of the untried moves, those that cannot be a passage between two known states: by the map's
    learned reverses, a passage walked from neither end is untried at both, so a move whose reverse is
    untried in no other known state it could join (none already joined to this one) leads off the map.
    A move with no learned reverse counts as leading off. Where no move is sure, all of them."""
    reverses = _reverses(m.get("edges", {}))
    joined = {s: {t for _, t in graph.get(s, [])} for s in untried}

    def could_join(s, back):
        return any(
            t != s and t not in joined[s] and s not in joined[t] and back in ways
            for t, ways in untried.items()
        )

    off = {}
    for s, ways in untried.items():
        sure = [a for a in ways if a not in reverses or not could_join(s, reverses[a])]
        if sure:
            off[s] = sure
    return off or untried


def _ways_off(m, graph):
    return _leads_off(m, graph, _untried(m, graph))


def _explore_rules(m, graph):
    """From every state entered, the action toward the nearest way out of the known map: a state seen
    but never entered, or a state with an untried move that leads off the map (``_leads_off``; where
    the rule is that move)."""
    untried = _ways_off(m, graph)
    frontier = {s for s in m.get("seen", []) if s not in m.get("entered", [])} | set(untried)
    rules = {s: ways[0] for s, ways in untried.items()}
    rules.update({s: a for s, a in _towards(graph, frontier).items() if s not in rules})
    return _hop_rules(m, graph, rules, [])


def retrieve_explore(memory, task, tools, p):
    """How to cover the learned map and leave it: ``p['form']`` 'plan' = one walk from the task's start
    state that enters every known state, nearest first, then takes the nearest untried move (the
    rules instead when no such walk starts there); 'rules' = from every state entered, the
    action toward the nearest way out of the map (``_explore_rules``). A plan tours the known states to
    look there again, so where failed games sought this goal's thing and no list of the map named it
    (it was looked for there, not seen), the rules toward the map's edge instead, and the tour only
    where there is no way out. Where the thing was seen (``_spots``), either form: the rules there."""
    m = memory.get("transitions") or {}
    graph = _graph(m)
    spots = _spots(m, task)
    if spots and (seen_there := _hop_rules(m, graph, _towards(graph, spots), [])):
        return seen_there
    if p.get("form", "plan") == "rules":
        return _explore_rules(m, graph)
    if _sought_in_vain(m, task):
        return _explore_rules(m, graph) or _tour(m, graph, task, p)
    return _tour(m, graph, task, p)


def _sought_in_vain(m, task):
    """Whether failed games' goals named every word of this goal and no known state's list ever named
    one as a thing: what it seeks was looked for in the known map and not seen there (False where the
    map kept no list)."""
    acted = _acted_on(m)
    gw = {w.lower() for w in goal_words(task.get("goal", ""))}
    return acted is not None and bool(gw) and gw <= set(m.get("sought", [])) and not acted & gw


def _tour(m, graph, task, p):
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
        steps += [a for a, _ in _opened(m, here, path)]
        visited.update(s for _, s in path)
        here = target
    steps += _way_out(graph, _ways_off(m, graph), here)[: max(max_steps - len(steps), 0)]
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
