"""Memory design compiled from genome 'llm_edit-d-0005' (ATLAS genome v1, key 77f38beed8f6).

  encode   sequences(successes_only=False, max_actions=20): the action sequences of episodes, goal words as slots, per goal shape and exact goal (or only the actions that changed something)
  encode   transitions(state_key='text', neighbors_key='actions'): the map of observed states: which action led from one state to the next, states seen nearby, and the moves each state listed
  store    {'recent': 10, 'cap': 1000}: keep the last N sequences (0: all); at most this many keys per counter; counts are multiplied by this before each episode adds its own
  retrieve replay(match='goal', form='rules'): a kept action sequence of a goal of the same shape (or of this very goal), with this goal's words
  retrieve explore(form='rules', max_steps=20): a walk from the start through every known state, then out by the nearest untried move (plan; the rules when no walk starts there), or rules toward the map's edge
  render   lines(max_lines=100): rules as '<situation>: <action>', plans as one line of actions, notes as they are; a line budget shared among the retrieve parts

Edit the genome and compile again (`atlas design compile`), or edit this code like any design.
"""

import json
import re

GENOME = {'version': 1,
 'name': 'llm_edit-d-0005',
 'encode': [{'part': 'sequences',
             'params': {'successes_only': False, 'max_actions': 20, 'idle': 'keep'}},
            {'part': 'transitions', 'params': {'state_key': 'text', 'neighbors_key': 'actions'}}],
 'store': {'recent': 10, 'cap': 1000, 'decay': 1.0},
 'retrieve': [{'part': 'replay', 'params': {'match': 'goal', 'prefer': 'latest', 'form': 'rules'}},
              {'part': 'explore', 'params': {'form': 'rules', 'max_steps': 20}}],
 'render': {'part': 'lines',
            'params': {'order': 'rules,plans,notes', 'style': 'joined', 'max_lines': 100}}}
STORE = {'recent': 10, 'cap': 1000, 'decay': 1.0}

WORD = re.compile(r"[A-Za-z0-9_]+")

SLOT = re.compile(r"\{(\d+)\}")

STOP_WORDS = (
    "a", "an", "the", "to", "in", "on", "of", "and", "or", "at", "is", "are", "am", "you", "your", "it",
    "its", "this", "that", "with", "for", "from", "then", "as", "be", "by", "do", "does", "not", "if",
    "into", "now", "when", "while", "there", "here's", "i", "some", "any", "all",
)

STOP = frozenset(STOP_WORDS)

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
    """The value of observation field ``key`` as a state name ('' when absent, empty, a list or a number:
    a count such as the steps left changes with every action and names no place)."""
    if not key or not isinstance(obs, dict):
        return ""
    value = obs.get(key)
    if value is None or isinstance(value, (list, dict, bool, int, float)) or str(value).strip().isdigit():
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

def texts_of(episode):
    """``[before_text, after_text]`` per step of ``steps_of``: the observations as the agent read them."""
    before = (episode.get("task") or {}).get("observation_text") or ""
    out = []
    for step in episode.get("steps") or []:
        after = str(step.get("observation_text") or "")
        if str((step.get("action") or {}).get("text") or ""):
            out.append([before, after])
        if after:
            before = after
    return out

def items_of(value):
    """The items of a field that holds things: a list as it is; a mapping of names to counts (an
    inventory, ``{'x': 2}``) as its names, each as many times as its count (up to 20)."""
    if isinstance(value, dict):
        out = []
        for name, count in value.items():
            n = count if isinstance(count, int) and not isinstance(count, bool) and 0 < count <= 20 else 1
            out += [str(name)] * n
        return out
    return value if isinstance(value, list) else [value]

def value_words(obs):
    """Lower-case words that name things in an observation: the words of its values and list items of
    at most three words (names such as 'hall_2' or 'key 1'; prose and command lists are left out)."""
    out = set()
    for value in obs.values() if isinstance(obs, dict) else []:
        for item in items_of(value):
            found = words(value_text(item))
            if len(found) <= 3:
                out.update(w.lower() for w in found)
    return out

def lasting(obs):
    """What an action can change for good in an observation: its lists, its mappings of things (as
    ``items_of``) and its short names (prose such as a feedback line and numbers such as a step counter
    are left out)."""
    out = {}
    for key, value in obs.items() if isinstance(obs, dict) else []:
        if isinstance(value, list | dict):
            out[key] = value_text(items_of(value))
        elif isinstance(value, str) and 0 < len(words(value)) <= 3 and not value.strip().isdigit():
            out[key] = value
    return out

def idle(step):
    """Whether a step (``steps_of``) failed or left the observation as it was (see ``lasting``)."""
    before, _, after, error = step
    return bool(error) or lasting(before) == lasting(after)

def situation(step, texts, names):
    """The sentence of the text before a step (``steps_of``; ``texts`` its pair of ``texts_of``) that
    the step changed for good, as plain words: of the observation field that gained fewest new words,
    the sentence that names one of them after the step, as it read before it ('Mounted nothing' before
    'Mounted: rotor.'; '' when nothing lasting changed or no sentence says it in words beside names)."""
    before, _, after, error = step
    if error:
        return ""
    old, new = lasting(before), lasting(after)
    gained = []
    for key, value in new.items():
        added = {w.lower() for w in words(value)} - {w.lower() for w in words(old.get(key, ""))}
        if added:
            gained.append(sorted(added))
    if not gained:
        return ""
    word = min(gained, key=len)[0]
    said = [s for s in SENTENCE.split(str(texts[1])) if word in {w.lower() for w in words(s)}]
    skeleton = {w.lower() for w in words(said[-1]) if w.lower() not in names} if said else set()
    for sentence in reversed(SENTENCE.split(str(texts[0]))):
        if skeleton and skeleton <= {w.lower() for w in words(sentence)}:
            return " ".join(words(sentence))
    return ""

def observed_words(episode):
    """Lower-case words naming things in any observation of the episode (see ``value_words``)."""
    first = (episode.get("task") or {}).get("observation") or {}
    out = value_words(first)
    for step in episode.get("steps") or []:
        out |= value_words(step.get("observation") or {})
    return out

SENTENCE = re.compile(r"[.!?;\n]+(?:\s|$)")

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

def goal_key(gw):
    """The goal itself, as sequences are filed under it: its words, lower-case."""
    return " ".join(w.lower() for w in gw)

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

def scored_steps(episode):
    """Per step that reached the environment: ``before`` / ``after`` (the text as the agent read it),
    ``next`` (the text after the following step: what lasted; ``after`` for the last step), ``obs_before``
    / ``obs_after`` (the observations), ``action``, ``error``, ``gain`` (the change of the environment's
    score; 0.0 where the episode records none) and ``ended`` (the environment ended the episode there,
    before its step limit)."""
    text = (episode.get("task") or {}).get("observation_text") or ""
    obs = (episode.get("task") or {}).get("observation") or {}
    out, score = [], 0.0
    for step in episode.get("steps") or []:
        action = str((step.get("action") or {}).get("text") or "")
        after, after_obs = str(step.get("observation_text") or ""), step.get("observation") or {}
        now = step.get("score")
        gain = (now - score) if isinstance(now, (int, float)) else 0.0
        score = now if isinstance(now, (int, float)) else score
        if action:
            out.append(
                {
                    "before": text,
                    "action": action,
                    "after": after or text,
                    "obs_before": obs,
                    "obs_after": after_obs or obs,
                    "error": step.get("error"),
                    "gain": round(gain, 6),
                    "ended": bool(step.get("ended")),
                }
            )
        text, obs = after or text, after_obs or obs
    for i, step in enumerate(out):
        step["next"] = out[i + 1]["after"] if i + 1 < len(out) else step["after"]
    return out

def encode_sequences(memory, episode, tools, p, store):
    """The action sequence of each (successful, when ``p['successes_only']``) episode with goal words as
    slots, under the goal's shape and its exact goal; with ``p['idle'] == 'drop'`` only the actions
    that changed the observation for good (a failed episode then keeps the progress it made); the most
    recent ``store['recent']`` kept."""
    m = memory.setdefault("sequences", [])
    if p.get("successes_only", True) and not episode.get("success"):
        return
    gw = goal_words((episode.get("task") or {}).get("goal", ""))
    drop = p.get("idle", "keep") == "drop"
    names = observed_words(episode)
    kept = [
        (s, t)
        for s, t in zip(steps_of(episode), texts_of(episode), strict=True)
        if not s[3] and not (drop and idle(s))
    ][: p.get("max_actions", 30)]
    templates = [slotted(s[1], gw) or s[1] for s, _ in kept]
    situations = [situation(s, t, names) for s, t in kept]
    used = set()
    for t in templates:
        used |= slots_in(t)
    used |= {i for i, w in enumerate(gw) if w.lower() in names}
    m.append(
        {
            "kind": goal_kind(gw, used),
            "goal": goal_key(gw),
            "actions": templates,
            "situations": [slotted(w, gw) or w for w in situations],
            "score": episode.get("score", 0.0),
            "success": bool(episode.get("success")),
        }
    )
    memory["sequences"] = recent(m, store.get("recent", 0))[-store.get("cap", 200) :]
    print("sequences:", len(memory["sequences"]), "kept")

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

def encode_transitions(memory, episode, tools, p, store):
    """The map of observed states: ``state --action--> next state`` for observation field ``p['state_key']``,
    the states entered, the states named in list field ``p['neighbors_key']`` (seen, maybe never entered),
    how actions that change state are written (``move template``: the action with the next state as
    ``{to}``), the actions each state listed (``listed``) and those tried there that went nowhere
    (``stayed``): a listed action that moved the agent elsewhere but was never tried here leads out of
    the known map. Also what a move needs first (``opens``: the action after which, in the same state, the
    move came into the list, e.g. a way opened; templated by the state the move leads to) and where the
    score rose, per goal (``gains``)."""
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

def _explore_rules(m, graph):
    """From every state entered, the action toward the nearest way out of the known map: a state seen
    but never entered, or a state with an untried move (where the rule is that move)."""
    untried = _untried(m, graph)
    frontier = {s for s in m.get("seen", []) if s not in m.get("entered", [])} | set(untried)
    rules = {s: ways[0] for s, ways in untried.items()}
    rules.update({s: a for s, a in _towards(graph, frontier).items() if s not in rules})
    return _hop_rules(m, graph, rules, [])

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
        steps += [a for a, _ in _opened(m, here, path)]
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

def _within(lines, budget):
    """At most ``budget`` of ``[(source, line)]``, kept in order; over budget, each retrieve part
    (``source``) gets its turn: its first line, then every part's second, ... (one part's many rules
    do not crowd out another's one)."""
    if budget <= 0 or len(lines) <= budget:
        return [line for _, line in lines]
    rank, taken = [], {}
    for source, _ in lines:
        rank.append(taken.get(source, 0))
        taken[source] = rank[-1] + 1
    keep = sorted(range(len(lines)), key=lambda i: (rank[i], i))[:budget]
    return [lines[i][1] for i in sorted(keep)]

def render_lines(items, p):
    """Rules, plans and notes in the order of ``p['order']``, then what to avoid, at most ``p['max_lines']``
    lines (shared fairly among the retrieve parts when there are more: ``_within``), each rule and plan
    once; '' when nothing applies."""
    order = [*p.get("order", "rules,plans,notes").split(","), "untrieds", "avoids"]
    lines, seen = [], set()
    for kind in order:
        for item in items:
            if item.get("kind") + "s" != kind:
                continue
            if kind == "rules":
                line = _rule_line(item, p.get("style", "joined"))
            elif kind in ("plans", "untrieds"):  # what was not tried: a plan after every other one
                line = _plan_line(item)
            elif kind == "avoids":
                line = "Avoid: " + item.get("action", "") + "." if item.get("action") else ""
            else:
                line = item.get("text", "")
            if line and (kind == "notes" or line not in seen):
                seen.add(line)
                lines.append((item.get("source", 0), line))
    return "\n".join(_within(lines, p.get("max_lines", 60)))


def update(memory, episode, tools):
    try:
        encode_sequences(memory, episode, tools, {'successes_only': False, 'max_actions': 20, 'idle': 'keep'}, STORE)
    except Exception as exc:
        print("encode part sequences failed:", repr(exc)[:200])
    try:
        encode_transitions(memory, episode, tools, {'state_key': 'text', 'neighbors_key': 'actions'}, STORE)
    except Exception as exc:
        print("encode part transitions failed:", repr(exc)[:200])


def recall(memory, task, tools):
    items = []
    try:
        items += [{**i, 'source': 0} for i in retrieve_replay(memory, task, tools, {'successes_only': False,
 'max_actions': 20,
 'idle': 'keep',
 'match': 'goal',
 'prefer': 'latest',
 'form': 'rules'})]
    except Exception as exc:
        print("retrieve part replay failed:", repr(exc)[:200])
    try:
        items += [{**i, 'source': 1} for i in retrieve_explore(memory, task, tools, {'state_key': 'text', 'neighbors_key': 'actions', 'form': 'rules', 'max_steps': 20})]
    except Exception as exc:
        print("retrieve part explore failed:", repr(exc)[:200])
    return render_lines(items, {'order': 'rules,plans,notes', 'style': 'joined', 'max_lines': 100})
