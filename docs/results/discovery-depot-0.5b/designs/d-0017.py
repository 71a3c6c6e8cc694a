"""Memory design compiled from genome 'random-d-0017' (ATLAS genome v1, key ebd74b31b532).

  encode   episode_log(action_form='listed'): a compact text of each episode (goal, outcome, actions) in a vector collection
  encode   sequences(successes_only=False): the action sequences of episodes, goal words as slots, per goal shape
  store    {'recent': 10, 'cap': 50, 'decay': 0.9}: keep the last N sequences (0: all); at most this many keys per counter; counts are multiplied by this before each episode adds its own
  retrieve similar_episodes(k=2, floor=0.3): notes: the most similar past episodes by goal (vector search above a floor)
  retrieve replay(): the latest successful action sequence of a goal of the same shape, with this goal's words
  render   lines(style='bare', max_lines=10): rules as '<situation>: <action>', plans as one line of actions, notes as they are; a line budget

Edit the genome and compile again (`atlas design compile`), or edit this code like any design.
"""

import json
import re

GENOME = {'version': 1,
 'name': 'random-d-0017',
 'encode': [{'part': 'episode_log', 'params': {'action_form': 'listed', 'max_actions': 25}},
            {'part': 'sequences', 'params': {'successes_only': False, 'max_actions': 30}}],
 'store': {'recent': 10, 'cap': 50, 'decay': 0.9},
 'retrieve': [{'part': 'similar_episodes',
               'params': {'k': 2, 'floor': 0.3, 'failed_actions': True}},
              {'part': 'replay', 'params': {}}],
 'render': {'part': 'lines',
            'params': {'order': 'rules,plans,notes', 'style': 'bare', 'max_lines': 10}}}
STORE = {'recent': 10, 'cap': 50, 'decay': 0.9}

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

def recent(items, n):
    """The last ``n`` items (all when n <= 0)."""
    return items[-n:] if n > 0 else items

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

def retrieve_replay(memory, task, tools, p):
    """The latest successful action sequence of a goal of the same shape, with this goal's words."""
    gw = goal_words(task.get("goal", ""))
    for seq in reversed(memory.get("sequences") or []):
        if same_kind(seq.get("kind", ""), gw):
            steps = [filled(a, gw) or a for a in seq.get("actions", [])]
            return [{"kind": "plan", "title": "What worked before", "steps": steps}]
    return []

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
        encode_episode_log(memory, episode, tools, {'action_form': 'listed', 'max_actions': 25}, STORE)
    except Exception as exc:
        print("encode part episode_log failed:", repr(exc)[:200])
    try:
        encode_sequences(memory, episode, tools, {'successes_only': False, 'max_actions': 30}, STORE)
    except Exception as exc:
        print("encode part sequences failed:", repr(exc)[:200])


def recall(memory, task, tools):
    items = []
    try:
        items += retrieve_similar_episodes(memory, task, tools, {'action_form': 'listed', 'max_actions': 25, 'k': 2, 'floor': 0.3, 'failed_actions': True})
    except Exception as exc:
        print("retrieve part similar_episodes failed:", repr(exc)[:200])
    try:
        items += retrieve_replay(memory, task, tools, {'successes_only': False, 'max_actions': 30})
    except Exception as exc:
        print("retrieve part replay failed:", repr(exc)[:200])
    return render_lines(items, {'order': 'rules,plans,notes', 'style': 'bare', 'max_lines': 10})
