"""Memory design compiled from genome 'mutate-d-0004' (ATLAS genome v1, key ba969bbb607c).

  encode   transitions(state_key='location', neighbors_key='adjacent_rooms'): the map of observed states: which action led from one state to the next, and states seen nearby
  encode   goal_actions(successes_only=False, state_key='location'): actions that name words of the goal, as templates per goal shape (and the goal state they were taken in)
  store    defaults: keep the last N sequences (0: all); at most this many keys per counter; counts are multiplied by this before each episode adds its own
  retrieve explore(max_steps=10): a walk from the start that enters every known state (plan), or rules toward states never entered
  retrieve goal_rules(min_support=3): rules: learned goal-naming action templates filled with this goal's words
  retrieve route(): rules: from every known state, the action toward the state the goal names (a path in the learned map)
  render   lines(order='notes,rules,plans'): rules as '<situation>: <action>', plans as one line of actions, notes as they are; a line budget

Edit the genome and compile again (`atlas design compile`), or edit this code like any design.
"""

import json
import re

GENOME = {'version': 1,
 'name': 'mutate-d-0004',
 'encode': [{'part': 'transitions',
             'params': {'state_key': 'location', 'neighbors_key': 'adjacent_rooms'}},
            {'part': 'goal_actions', 'params': {'successes_only': False, 'state_key': 'location'}}],
 'store': {'recent': 0, 'cap': 200, 'decay': 1.0},
 'retrieve': [{'part': 'explore', 'params': {'form': 'plan', 'max_steps': 10}},
              {'part': 'goal_rules', 'params': {'min_support': 3}},
              {'part': 'route', 'params': {'context': 'goal_items'}}],
 'render': {'part': 'lines', 'params': {'order': 'notes,rules,plans'}}}
STORE = {'recent': 0, 'cap': 200, 'decay': 1.0}

WORD = re.compile(r"[A-Za-z0-9_]+")

SLOT = re.compile(r"\{(\d+)\}")

STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "to",
        "in",
        "on",
        "of",
        "and",
        "or",
        "at",
        "is",
        "are",
        "you",
        "your",
        "it",
        "its",
        "this",
        "that",
        "with",
        "for",
        "from",
        "then",
        "as",
        "be",
        "by",
        "do",
        "not",
        "if",
        "into",
        "now",
        "when",
        "while",
        "there",
        "some",
        "any",
        "all",
    ]
)

def words(text):
    return WORD.findall(str(text))

def goal_words(goal):
    """The goal's content words in order (original case), each once."""
    out, seen = [], set()
    for w in words(goal):
        low = w.lower()
        if low not in STOP and low not in seen:
            seen.add(low)
            out.append(w)
    return out

def value_text(value):
    """An observation value as words: lists joined by commas, None as ''."""
    if isinstance(value, list):
        return ", ".join(value_text(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(str(k) + " " + value_text(v) for k, v in value.items())
    return "" if value is None else str(value)

def state_of(obs, key):
    """The value of observation field ``key`` as a state name ('' when absent, empty or a list)."""
    if not key or not isinstance(obs, dict):
        return ""
    value = obs.get(key)
    if value is None or isinstance(value, (list, dict)):
        return ""
    return str(value)

def steps_of(episode):
    """``[before, action_text, after, error]`` per step that reached the environment; ``before`` of
    the first step is the task's first observation."""
    before = (episode.get("task") or {}).get("observation") or {}
    out = []
    for step in episode.get("steps") or []:
        action = step.get("action") or {}
        after = step.get("observation") or {}
        text = str(action.get("text") or "")
        if text:
            out.append([before, text, after, step.get("error")])
        if after:
            before = after
    return out

def slotted(text, gw):
    """``text`` with every goal word replaced by ``{i}`` (its index in ``gw``); '' when none occurs."""
    low = [w.lower() for w in gw]
    parts = re.split(r"([A-Za-z0-9_]+)", str(text))
    hit = False
    for i, part in enumerate(parts):
        if part.lower() in low:
            parts[i] = "{" + str(low.index(part.lower())) + "}"
            hit = True
    return "".join(parts) if hit else ""

def filled(template, gw):
    """A slotted template with this goal's words put back ('' when a slot has no word)."""
    missing = [int(i) for i in SLOT.findall(template) if int(i) >= len(gw)]
    if missing:
        return ""
    return SLOT.sub(lambda m: gw[int(m.group(1))], template)

def goal_kind(gw, used):
    """The goal's shape: its words with the slot positions in ``used`` as '*'."""
    return " ".join("*" if i in used else w.lower() for i, w in enumerate(gw))

def same_kind(kind, gw):
    """Whether a goal with words ``gw`` has the shape ``kind``."""
    parts = kind.split(" ") if kind else []
    if len(parts) != len(gw):
        return False
    return all(p == "*" or p == w.lower() for p, w in zip(parts, gw, strict=True))

def slots_in(template):
    return {int(i) for i in SLOT.findall(template)}

def bump(counts, key, by=1):
    counts[key] = counts.get(key, 0) + by

def capped(counts, cap):
    """The ``cap`` largest entries of a count dict (ties: first inserted)."""
    if cap <= 0 or len(counts) <= cap:
        return counts
    ranked = sorted(counts.items(), key=lambda kv: -kv[1])[:cap]
    return dict(ranked)

def decay(counts, factor):
    """Multiply every count by ``factor`` (1.0: no decay), dropping those that fall near 0."""
    if factor >= 1.0:
        return counts
    return {k: round(v * factor, 4) for k, v in counts.items() if v * factor >= 0.05}

def encode_transitions(memory, episode, tools, p, store):
    """The map of observed states: ``state --action--> next state`` for observation field ``p['state_key']``,
    the states entered, the states named in list field ``p['neighbors_key']`` (seen, maybe never entered),
    and how actions that change state are written (``move template``: the action with the next state as
    ``{to}``)."""
    m = memory.setdefault("transitions", {"edges": {}, "entered": [], "seen": [], "near": {}, "moves": {}})
    key, near = p.get("state_key", ""), p.get("neighbors_key", "")
    first = (episode.get("task") or {}).get("observation") or {}
    observations = [first] + [s[2] for s in steps_of(episode)]
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
    added = 0
    for before, action, after, error in steps_of(episode):
        src, dst = state_of(before, key), state_of(after, key)
        if error or not src or not dst or src == dst:
            continue
        out = m["edges"].setdefault(src, {})
        if out.get(action) != dst:
            out[action] = dst
            added += 1
        if dst in action:
            bump(m["moves"], action.replace(dst, "{to}"))
    m["moves"] = capped(m["moves"], 5)
    if m["moves"]:  # listed actions of the learned move form name the states reachable from here
        best = max(m["moves"], key=lambda t: m["moves"][t])
        head, _, tail = best.partition("{to}")
        for obs in observations:
            here = state_of(obs, key)
            for value in obs.values() if here and isinstance(obs, dict) else []:
                for item in value if isinstance(value, list) else []:
                    text = str(item)
                    if text.startswith(head) and text.endswith(tail) and len(text) > len(head) + len(tail):
                        other = text[len(head) : len(text) - len(tail)]
                        if other != here and other not in m["near"].setdefault(here, []):
                            m["near"][here].append(other)
                        if other not in m["seen"]:
                            m["seen"].append(other)
    print("transitions:", added, "new;", len(m["entered"]), "states entered,", len(m["seen"]), "seen")

def encode_goal_actions(memory, episode, tools, p, store):
    """Actions that name words of the goal, as templates (``<verb> {1}``: word 1 of the goal) under the
    goal's shape, with the state they were taken in when that state is a goal word too; the state an
    action names otherwise becomes ``{here}`` (the action then applies in any state). Actions that change
    the state are left to ``transitions``. Only successful episodes when ``p['successes_only']``."""
    m = memory.setdefault("goal_actions", {})
    if p.get("successes_only", True) and not episode.get("success"):
        return
    for k in list(m):
        m[k] = decay(m[k], store.get("decay", 1.0))
    gw = goal_words((episode.get("task") or {}).get("goal", ""))
    key = p.get("state_key", "")
    found, used = [], set()
    places = memory.setdefault("goal_action_places", [])
    for before, action, after, error in steps_of(episode):
        here = state_of(before, key)
        if here and here not in places:
            places.append(here)
        moved = key and state_of(after, key) and state_of(after, key) != here
        template = "" if error or moved else slotted(action, gw)  # moves are the map's job
        if template:
            where = slotted(here, gw) if key else ""
            if here and not where and here in template:
                template = template.replace(here, "{here}")  # "take {2} 1 from {here}": any place
            found.append([where, template])
            used |= slots_in(template) | slots_in(where)
    memory["goal_action_places"] = places[-store.get("cap", 200) :]
    kind = goal_kind(gw, used)  # the goal's shape: every word some action named is a slot
    for pair in found:
        bump(m.setdefault(kind, {}), json.dumps(pair))
    for k in list(m):
        m[k] = capped(m[k], store.get("cap", 200))
    print("goal actions:", len(found), "templated;", len(m), "goal shapes")

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

def _graph(m):
    """state -> [(action, next state)], with never-entered neighbours reached by the learned move template."""
    graph = {s: list(out.items()) for s, out in m.get("edges", {}).items()}
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

def retrieve_route(memory, task, tools, p):
    """From every known state, the action toward the state the goal names (a path in the learned map).
    ``p['context']``: 'goal_items' adds the goal's other words to each rule's situation (the route then
    applies once what the goal names is in sight or in hand), 'none' conditions on the state alone."""
    m = memory.get("transitions") or {}
    gw = goal_words(task.get("goal", ""))
    states = list(dict.fromkeys(m.get("entered", []) + m.get("seen", [])))
    targets = _goal_states(states, gw)
    if not targets:
        return []
    extra = []
    if p.get("context", "goal_items") == "goal_items":
        low = {t.lower() for t in targets}
        extra = [w for w in gw[1:] if w.lower() not in low][:1]
    hops = _towards(_graph(m), set(targets))
    if extra and len(hops) > 1 and len(set(hops.values())) == 1:
        # every state takes the same first step (one hop from anywhere): the state does not matter
        return [{"kind": "rule", "cond": extra, "action": next(iter(hops.values()))}]
    return [{"kind": "rule", "cond": [s, *extra], "action": action} for s, action in hops.items()]

def retrieve_explore(memory, task, tools, p):
    """How to cover the learned map: ``p['form']`` 'plan' = one walk from the task's start state that enters
    every known state, nearest first; 'rules' = from every state entered, the action toward the nearest
    state seen but never entered."""
    m = memory.get("transitions") or {}
    graph = _graph(m)
    if p.get("form", "plan") == "rules":
        frontier = {s for s in m.get("seen", []) if s not in m.get("entered", [])}
        return [{"kind": "rule", "cond": [s], "action": a} for s, a in _towards(graph, frontier).items()]
    here = state_of(task.get("observation") or {}, p.get("state_key", ""))
    if not here:
        return []
    steps, visited = [], {here}
    while len(steps) < p.get("max_steps", 30):
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
    return [{"kind": "plan", "title": "Search plan", "steps": steps}] if len(steps) >= 2 else []

def retrieve_goal_rules(memory, task, tools, p):
    """Templates of goal-naming actions learned under this goal's shape, filled with this goal's words:
    'do X when the situation shows what X names' (or the goal state it was taken in)."""
    gw = goal_words(task.get("goal", ""))
    out = []
    for kind, counts in (memory.get("goal_actions") or {}).items():
        if not same_kind(kind, gw):
            continue
        for key, n in sorted(counts.items(), key=lambda kv: -kv[1]):
            if n < p.get("min_support", 1):
                continue
            where, template = json.loads(key)
            state = filled(where, gw) if where else ""
            places = memory.get("goal_action_places") or [] if "{here}" in template else [""]
            for place in places:
                action = filled(template.replace("{here}", place), gw)
                named = {t.lower() for t in words(action)}
                items = [w for w in gw if w.lower() in named and w != state][:1]
                cond = [state, *items] if state else items
                if action and cond:
                    out.append({"kind": "rule", "cond": cond, "action": action})
    return out

def _rule_line(item, style):
    cond = [c for c in item.get("cond", []) if c]
    if not cond:
        return ""
    if style == "split":
        situation = ". ".join(cond)
    elif style == "bare":
        situation = " ".join(cond)
    else:
        situation = "In " + cond[0] + ("" if len(cond) == 1 else " with the " + " and the ".join(cond[1:]))
    return situation + ": " + item.get("action", "") + "."

def _plan_line(item):
    steps = [s for s in item.get("steps", []) if s]
    return (item.get("title") or "Plan") + ": " + ", ".join(steps) + "." if steps else ""

def render_lines(items, p):
    """Rules, plans and notes in the order of ``p['order']``, at most ``p['max_lines']`` lines, each
    rule and plan once; '' when nothing applies."""
    order = p.get("order", "rules,plans,notes").split(",")
    lines, seen = [], set()
    for kind in order:
        for item in items:
            if item.get("kind") + "s" != kind:
                continue
            if kind == "rules":
                line = _rule_line(item, p.get("style", "joined"))
            elif kind == "plans":
                line = _plan_line(item)
            else:
                line = item.get("text", "")
            if line and (kind == "notes" or line not in seen):
                seen.add(line)
                lines.append(line)
    budget = p.get("max_lines", 60)
    return "\n".join(lines[:budget] if budget > 0 else lines)


def update(memory, episode, tools):
    try:
        encode_transitions(memory, episode, tools, {'state_key': 'location', 'neighbors_key': 'adjacent_rooms'}, STORE)
    except Exception as exc:
        print("encode part transitions failed:", repr(exc)[:200])
    try:
        encode_goal_actions(memory, episode, tools, {'successes_only': False, 'state_key': 'location'}, STORE)
    except Exception as exc:
        print("encode part goal_actions failed:", repr(exc)[:200])


def recall(memory, task, tools):
    items = []
    try:
        items += retrieve_explore(memory, task, tools, {'state_key': 'location', 'neighbors_key': 'adjacent_rooms', 'form': 'plan', 'max_steps': 10})
    except Exception as exc:
        print("retrieve part explore failed:", repr(exc)[:200])
    try:
        items += retrieve_goal_rules(memory, task, tools, {'successes_only': False, 'state_key': 'location', 'min_support': 3})
    except Exception as exc:
        print("retrieve part goal_rules failed:", repr(exc)[:200])
    try:
        items += retrieve_route(memory, task, tools, {'state_key': 'location', 'neighbors_key': 'adjacent_rooms', 'context': 'goal_items'})
    except Exception as exc:
        print("retrieve part route failed:", repr(exc)[:200])
    return render_lines(items, {'order': 'notes,rules,plans', 'style': 'joined', 'max_lines': 60})
