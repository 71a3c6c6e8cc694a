"""Memory design compiled from genome 'recombine-d-0008' (ATLAS genome v1, key 648c80379205).

  encode   cheatsheet(): one cheatsheet of tips revised by the model (summarize) after each episode
  encode   sequences(successes_only=False): the action sequences of episodes, goal words as slots, per goal shape and exact goal (or only the actions that changed something)
  store    defaults: keep the last N sequences (0: all); at most this many keys per counter; counts are multiplied by this before each episode adds its own
  retrieve replay(prefer='most', form='rules'): a kept action sequence of a goal of the same shape (or of this very goal), with this goal's words
  retrieve sheet(): notes: the cheatsheet
  render   lines(order='notes,rules,plans'): rules as '<situation>: <action>', plans as one line of actions, notes as they are; a line budget shared among the retrieve parts

Edit the genome and compile again (`atlas design compile`), or edit this code like any design.
"""

import json
import re

GENOME = {'version': 1,
 'name': 'recombine-d-0008',
 'encode': [{'part': 'cheatsheet', 'params': {'max_chars': 1500}},
            {'part': 'sequences',
             'params': {'successes_only': False, 'max_actions': 30, 'idle': 'keep'}}],
 'store': {'recent': 0, 'cap': 200, 'decay': 1.0},
 'retrieve': [{'part': 'replay', 'params': {'match': 'shape', 'prefer': 'most', 'form': 'rules'}},
              {'part': 'sheet', 'params': {}}],
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

def lasting(obs):
    """What an action can change for good in an observation: its lists and its short names (prose
    such as a feedback line and numbers such as a step counter are left out)."""
    out = {}
    for key, value in obs.items() if isinstance(obs, dict) else []:
        if isinstance(value, list):
            out[key] = value_text(value)
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

def recent(items, n):
    """The last ``n`` items (all when n <= 0)."""
    return items[-n:] if n > 0 else items

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
        }
    )
    memory["sequences"] = recent(m, store.get("recent", 0))[-store.get("cap", 200) :]
    print("sequences:", len(memory["sequences"]), "kept")

def _episode_lines(episode, max_steps, args_json):
    lines = []
    for step in episode.get("steps", [])[:max_steps]:
        action = step.get("action") or {}
        args = action.get("args") or {}
        shown = json.dumps(args, sort_keys=True) if args_json else str(args)
        line = "- " + str(action.get("tool")) + " " + shown
        if step.get("error"):
            line += " -> error: " + str(step["error"])[:80]
        lines.append(line)
    return lines

SHEET_INSTRUCTION = (
    "You maintain a cheatsheet of short, general, reusable tips for an agent. Revise the current "
    "cheatsheet using the new episode: keep tips that still hold, add any new lesson, remove tips the "
    "episode contradicts. Reply with the revised cheatsheet only, as a bulleted list of at most 10 "
    "lines."
)

def encode_cheatsheet(memory, episode, tools, p, store):
    """Dynamic-Cheatsheet-style: the model (``summarize``) revises one short cheatsheet after each episode."""
    current = memory.get("cheatsheet", "")
    outcome = "succeeded" if episode.get("success") else "failed"
    head = "Goal: " + episode["task"].get("goal", "") + " (" + outcome + " in "
    head += str(episode.get("steps_taken", 0)) + " steps)"
    text = "\n".join([head, *_episode_lines(episode, 25, False)])
    text = "Current cheatsheet:\n" + (current or "(empty)") + "\n\nNew episode:\n" + text
    try:
        revised = tools.summarize(text, SHEET_INSTRUCTION).strip()
    except Exception as exc:
        print("summarize failed, cheatsheet unchanged:", exc)
        return
    if revised:
        memory["cheatsheet"] = revised[: p.get("max_chars", 1500)]
        memory["revisions"] = memory.get("revisions", 0) + 1
    print("cheatsheet now", len(memory.get("cheatsheet", "")), "chars")

def retrieve_replay(memory, task, tools, p):
    """A kept action sequence, with this goal's words: of a goal of the same shape, or with
    ``p['match'] == 'goal'`` of this very goal; the latest, or with ``p['prefer'] == 'most'`` the one
    that scored most and then went furthest (for sequences kept from failures, the most progress). With
    ``p['form'] == 'rules'`` as rules instead of a plan: each step that changed something lasting, on the
    sentence it changed ('Mounted nothing: mount rotor.'). A rule applies however short the sequence (a
    plan only from three steps), and the steps that changed nothing are not replayed."""
    gw = goal_words(task.get("goal", ""))
    if p.get("match", "shape") == "goal":
        found = [s for s in memory.get("sequences") or [] if s.get("goal") == goal_key(gw)]
    else:
        found = [s for s in memory.get("sequences") or [] if same_kind(s.get("kind", ""), gw)]
    if p.get("prefer", "latest") == "most":
        found = sorted(found, key=lambda s: (s.get("score", 0.0), len(s.get("actions", []))))
    if not found or not found[-1].get("actions"):
        return []
    steps = [filled(a, gw) or a for a in found[-1]["actions"]]
    if p.get("form", "plan") != "rules":
        return [{"kind": "plan", "title": "What worked before", "steps": steps}]
    rules = []
    for step, where in zip(steps, found[-1].get("situations") or [], strict=False):
        cond = filled(where, gw) or where
        if cond:
            rules.append({"kind": "rule", "cond": [cond], "action": step})
    return rules

def retrieve_sheet(memory, task, tools, p):
    """The cheatsheet, the same for every task."""
    sheet = memory.get("cheatsheet", "")
    if not sheet:
        return []
    return [{"kind": "note", "text": "Cheatsheet from earlier tasks:\n" + sheet}]

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
    """Rules, plans and notes in the order of ``p['order']``, at most ``p['max_lines']`` lines (shared
    fairly among the retrieve parts when there are more: ``_within``), each rule and plan once; ''
    when nothing applies."""
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
                lines.append((item.get("source", 0), line))
    return "\n".join(_within(lines, p.get("max_lines", 60)))


def update(memory, episode, tools):
    try:
        encode_cheatsheet(memory, episode, tools, {'max_chars': 1500}, STORE)
    except Exception as exc:
        print("encode part cheatsheet failed:", repr(exc)[:200])
    try:
        encode_sequences(memory, episode, tools, {'successes_only': False, 'max_actions': 30, 'idle': 'keep'}, STORE)
    except Exception as exc:
        print("encode part sequences failed:", repr(exc)[:200])


def recall(memory, task, tools):
    items = []
    try:
        items += [{**i, 'source': 0} for i in retrieve_replay(memory, task, tools, {'successes_only': False,
 'max_actions': 30,
 'idle': 'keep',
 'match': 'shape',
 'prefer': 'most',
 'form': 'rules'})]
    except Exception as exc:
        print("retrieve part replay failed:", repr(exc)[:200])
    try:
        items += [{**i, 'source': 1} for i in retrieve_sheet(memory, task, tools, {'max_chars': 1500})]
    except Exception as exc:
        print("retrieve part sheet failed:", repr(exc)[:200])
    return render_lines(items, {'order': 'notes,rules,plans', 'style': 'joined', 'max_lines': 60})
