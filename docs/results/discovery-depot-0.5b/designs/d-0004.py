"""Memory design compiled from genome 'recombine-d-0004' (ATLAS genome v1, key 37a427c381fe).

  encode   transitions(state_key='position', neighbors_key='paths'): the map of observed states: which action led from one state to the next, and states seen nearby
  encode   sequences(successes_only=False, max_actions=50): the action sequences of episodes, goal words as slots, per goal shape
  store    defaults: keep the last N sequences (0: all); at most this many keys per counter; counts are multiplied by this before each episode adds its own
  retrieve replay(): the latest successful action sequence of a goal of the same shape, with this goal's words
  retrieve explore(max_steps=20): a walk from the start that enters every known state (plan), or rules toward states never entered
  render   lines(order='notes,rules,plans', style='bare'): rules as '<situation>: <action>', plans as one line of actions, notes as they are; a line budget

Edit the genome and compile again (`atlas design compile`), or edit this code like any design.
"""

import json
import re

GENOME = {'version': 1,
 'name': 'recombine-d-0004',
 'encode': [{'part': 'transitions', 'params': {'state_key': 'position', 'neighbors_key': 'paths'}},
            {'part': 'sequences', 'params': {'successes_only': False, 'max_actions': 50}}],
 'store': {'recent': 0, 'cap': 200, 'decay': 1.0},
 'retrieve': [{'part': 'replay', 'params': {}},
              {'part': 'explore', 'params': {'form': 'plan', 'max_steps': 20}}],
 'render': {'part': 'lines',
            'params': {'order': 'notes,rules,plans', 'style': 'bare', 'max_lines': 60}}}
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

def value_words(obs):
    """Lower-case words that name things in an observation: the words of its values and list items of
    at most three words (names such as 'hall_2' or 'key 1'; prose and command lists are left out)."""
    out = set()
    for value in obs.values() if isinstance(obs, dict) else []:
        for item in value if isinstance(value, list) else [value]:
            found = words(value_text(item))
            if len(found) <= 3:
                out.update(w.lower() for w in found)
    return out

def observed_words(episode):
    """Lower-case words naming things in any observation of the episode (see ``value_words``)."""
    first = (episode.get("task") or {}).get("observation") or {}
    out = value_words(first)
    for step in episode.get("steps") or []:
        out |= value_words(step.get("observation") or {})
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

def recent(items, n):
    """The last ``n`` items (all when n <= 0)."""
    return items[-n:] if n > 0 else items

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

def encode_sequences(memory, episode, tools, p, store):
    """The action sequence of each (successful, when ``p['successes_only']``) episode with goal words as
    slots, under the goal's shape; the most recent ``store['recent']`` kept."""
    m = memory.setdefault("sequences", [])
    if p.get("successes_only", True) and not episode.get("success"):
        return
    gw = goal_words((episode.get("task") or {}).get("goal", ""))
    actions = [s[1] for s in steps_of(episode) if not s[3]]
    templates = [slotted(a, gw) or a for a in actions][: p.get("max_actions", 30)]
    used = set()
    for t in templates:
        used |= slots_in(t)
    used |= {i for i, w in enumerate(gw) if w.lower() in observed_words(episode)}
    m.append({"kind": goal_kind(gw, used), "actions": templates, "score": episode.get("score", 0.0)})
    memory["sequences"] = recent(m, store.get("recent", 0))[-store.get("cap", 200) :]
    print("sequences:", len(memory["sequences"]), "kept")

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

def retrieve_replay(memory, task, tools, p):
    """The latest successful action sequence of a goal of the same shape, with this goal's words."""
    gw = goal_words(task.get("goal", ""))
    for seq in reversed(memory.get("sequences") or []):
        if same_kind(seq.get("kind", ""), gw):
            steps = [filled(a, gw) or a for a in seq.get("actions", [])]
            return [{"kind": "plan", "title": "What worked before", "steps": steps}]
    return []

def _rule_line(item, style):
    cond = [c for c in item.get("cond", []) if c]
    if not cond:
        return ""
    if style == "split":
        situation = ". ".join(cond)
    elif style == "bare":
        situation = " ".join(cond)
    else:  # "In hall with the key", "In hall with holding key", "Lying here key"
        head = cond[0][:1].upper() + cond[0][1:] if " " in cond[0] else "In " + cond[0]
        rest = [c if " " in c else "the " + c for c in cond[1:]]
        situation = head + ("" if not rest else " with " + " and ".join(rest))
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
        encode_transitions(memory, episode, tools, {'state_key': 'position', 'neighbors_key': 'paths'}, STORE)
    except Exception as exc:
        print("encode part transitions failed:", repr(exc)[:200])
    try:
        encode_sequences(memory, episode, tools, {'successes_only': False, 'max_actions': 50}, STORE)
    except Exception as exc:
        print("encode part sequences failed:", repr(exc)[:200])


def recall(memory, task, tools):
    items = []
    try:
        items += retrieve_replay(memory, task, tools, {'successes_only': False, 'max_actions': 50})
    except Exception as exc:
        print("retrieve part replay failed:", repr(exc)[:200])
    try:
        items += retrieve_explore(memory, task, tools, {'state_key': 'position', 'neighbors_key': 'paths', 'form': 'plan', 'max_steps': 20})
    except Exception as exc:
        print("retrieve part explore failed:", repr(exc)[:200])
    return render_lines(items, {'order': 'notes,rules,plans', 'style': 'bare', 'max_lines': 60})
