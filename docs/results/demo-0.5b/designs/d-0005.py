"""Memory design compiled from genome 'random-d-0005' (ATLAS genome v1, key ee5e4734a038).

  encode   sightings(goal_only=True, state_key='steps_left'): which action first showed each word in the observations (and in which state)
  encode   episode_log(action_form='listed'): a compact text of each episode (goal, outcome, actions) in a vector collection
  store    {'recent': 10, 'decay': 0.7}: keep the last N sequences (0: all); at most this many keys per counter; counts are multiplied by this before each episode adds its own
  retrieve where_seen(): a plan of the actions that most often showed the goal's words (moving to where they did first)
  retrieve similar_episodes(k=2): notes: the most similar past episodes by goal (vector search above a floor)
  render   lines(style='split', max_lines=10): rules as '<situation>: <action>', plans as one line of actions, notes as they are; a line budget

Edit the genome and compile again (`atlas design compile`), or edit this code like any design.
"""

import json
import re

GENOME = {'version': 1,
 'name': 'random-d-0005',
 'encode': [{'part': 'sightings', 'params': {'goal_only': True, 'state_key': 'steps_left'}},
            {'part': 'episode_log', 'params': {'action_form': 'listed', 'max_actions': 25}}],
 'store': {'recent': 10, 'cap': 200, 'decay': 0.7},
 'retrieve': [{'part': 'where_seen', 'params': {'k': 2}},
              {'part': 'similar_episodes',
               'params': {'k': 2, 'floor': 0.0, 'failed_actions': True}}],
 'render': {'part': 'lines',
            'params': {'order': 'rules,plans,notes', 'style': 'split', 'max_lines': 10}}}
STORE = {'recent': 10, 'cap': 200, 'decay': 0.7}

WORD = re.compile(r"[A-Za-z0-9_]+")

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

def encode_sightings(memory, episode, tools, p, store):
    """Which action first showed each word (a word in the observation after the action, not before it):
    ``word -> {action: count}``, and with ``p['state_key']`` in which state (``sighting_places``).
    Words of the goal only when ``p['goal_only']``."""
    m = memory.setdefault("sightings", {})
    gw = [w.lower() for w in goal_words((episode.get("task") or {}).get("goal", ""))]
    for w in list(m):
        m[w] = decay(m[w], store.get("decay", 1.0))
    shown = 0
    places = memory.setdefault("sighting_places", {})
    key = p.get("state_key", "")
    for before, action, after, error in steps_of(episode):
        if error or not after:
            continue
        old = {w.lower() for w in words(value_text(before))}
        for w in {w.lower() for w in words(value_text(after))} - old:
            if w.isdigit() or (p.get("goal_only", False) and w not in gw):
                continue
            bump(m.setdefault(w, {}), action)
            if state_of(after, key):
                bump(places.setdefault(w, {}), json.dumps([state_of(after, key), action]))
            shown += 1
    for w in list(m):
        m[w] = capped(m[w], 3)
    for w in list(places):
        places[w] = capped(places[w], 3) if w in m else {}
        if not places[w]:
            del places[w]
    if len(m) > store.get("cap", 200):
        ranked = sorted(m, key=lambda w: -sum(m[w].values()))[: store.get("cap", 200)]
        memory["sightings"] = {w: m[w] for w in ranked}
    print("sightings:", shown, "new;", len(memory["sightings"]), "words tracked")

def _call_text(step):
    action = step.get("action") or {}
    args = action.get("args") or {}
    inner = ", ".join(str(k) + "=" + str(v) for k, v in sorted(args.items()))
    text = (action.get("tool") or "?") + "(" + inner + ")"
    if step.get("error"):
        text += " [failed: " + str(step["error"])[:60] + "]"
    return text

def encode_episode_log(memory, episode, tools, p, store):
    """A compact text of each episode (goal, outcome, the actions) in the vector collection 'episodes'
    (``p['action_form']``: 'call' = tool(arg=value), 'listed' = as the agent's list writes it)."""
    goal = episode["task"].get("goal", "")
    if p.get("action_form", "call") == "listed":
        actions = [s[1] for s in steps_of(episode)]
    else:
        actions = [_call_text(s) for s in episode.get("steps", [])]
    actions = actions[: p.get("max_actions", 25)]
    outcome = "SUCCESS" if episode.get("success") else "FAILURE"
    text = goal + "\nOutcome: " + outcome + "\nActions: " + "; ".join(actions)
    tools.store_obs(
        text, {"success": bool(episode.get("success")), "score": episode.get("score", 0.0)}, "episodes"
    )
    memory["episodes"] = memory.get("episodes", 0) + 1
    memory["successes"] = memory.get("successes", 0) + (1 if episode.get("success") else 0)

def retrieve_where_seen(memory, task, tools, p):
    """For each goal word, the actions that most often showed it before (a search plan); where the state
    they showed it in is known and ``transitions`` learned how moves are written, the move there first."""
    seen = memory.get("sightings") or {}
    places = memory.get("sighting_places") or {}
    moves = (memory.get("transitions") or {}).get("moves") or {}
    move = max(moves, key=lambda t: moves[t]) if moves else ""
    steps = []
    for w in goal_words(task.get("goal", "")):
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
        encode_sightings(memory, episode, tools, {'goal_only': True, 'state_key': 'steps_left'}, STORE)
    except Exception as exc:
        print("encode part sightings failed:", repr(exc)[:200])
    try:
        encode_episode_log(memory, episode, tools, {'action_form': 'listed', 'max_actions': 25}, STORE)
    except Exception as exc:
        print("encode part episode_log failed:", repr(exc)[:200])


def recall(memory, task, tools):
    items = []
    try:
        items += retrieve_where_seen(memory, task, tools, {'goal_only': True, 'state_key': 'steps_left', 'k': 2})
    except Exception as exc:
        print("retrieve part where_seen failed:", repr(exc)[:200])
    try:
        items += retrieve_similar_episodes(memory, task, tools, {'action_form': 'listed', 'max_actions': 25, 'k': 2, 'floor': 0.0, 'failed_actions': True})
    except Exception as exc:
        print("retrieve part similar_episodes failed:", repr(exc)[:200])
    return render_lines(items, {'order': 'rules,plans,notes', 'style': 'split', 'max_lines': 10})
