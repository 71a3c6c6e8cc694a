"""Memory design compiled from genome 'mutate-d-0003' (ATLAS genome v1, key fd29902447ea).

  encode   goal_actions(state_key='location'): actions that name words of the goal, as templates per goal shape, with the goal state they were taken in and how the observation text framed the word named (as the agent reads it)
  encode   transitions(state_key='location', neighbors_key='admissible_commands'): the map of observed states: which action led from one state to the next, states seen nearby, and the moves each state listed
  encode   sightings(state_key='location'): which action first showed each word in the observations (and in which state)
  encode   sequences(): the action sequences of episodes, goal words as slots, per goal shape and exact goal (or only the actions that changed something)
  store    {'recent': 10, 'cap': 1000, 'decay': 0.7}: keep the last N sequences (0: all); at most this many keys per counter; counts are multiplied by this before each episode adds its own
  retrieve replay(): a kept action sequence of a goal of the same shape (or of this very goal), with this goal's words
  retrieve route(context='none', towards='sighted'): rules: from every known state, the action toward the state the goal names, or (towards sighted) the state where the goal's words were seen most (a path in the learned map); with context goal_items, once the goal's item is framed as goal_actions left it (held)
  retrieve goal_rules(min_support=2): rules: learned goal-naming action templates filled with this goal's words
  retrieve explore(): a walk from the start through every known state, then out by the nearest untried move (plan; the rules when no walk starts there), or rules toward the map's edge
  render   lines(order='notes,rules,plans'): rules as '<situation>: <action>', plans as one line of actions, notes as they are; a line budget shared among the retrieve parts

Edit the genome and compile again (`atlas design compile`), or edit this code like any design.
"""

import json
import re

GENOME = {'version': 1,
 'name': 'mutate-d-0003',
 'encode': [{'part': 'goal_actions',
             'params': {'successes_only': True, 'state_key': 'location', 'any_item': True}},
            {'part': 'transitions',
             'params': {'state_key': 'location', 'neighbors_key': 'admissible_commands'}},
            {'part': 'sightings', 'params': {'goal_only': False, 'state_key': 'location'}},
            {'part': 'sequences',
             'params': {'successes_only': True, 'max_actions': 30, 'idle': 'keep'}}],
 'store': {'recent': 10, 'cap': 1000, 'decay': 0.7},
 'retrieve': [{'part': 'replay', 'params': {'match': 'shape', 'prefer': 'latest', 'form': 'plan'}},
              {'part': 'route', 'params': {'context': 'none', 'towards': 'sighted'}},
              {'part': 'goal_rules', 'params': {'min_support': 2}},
              {'part': 'explore', 'params': {'form': 'plan', 'max_steps': 30}}],
 'render': {'part': 'lines', 'params': {'order': 'notes,rules,plans'}}}
STORE = {'recent': 10, 'cap': 1000, 'decay': 0.7}

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

def frame_of(text, word, names):
    """How the observation text frames ``word``: in the last sentence of ``text`` that names it, the first
    two content words before it that name nothing (not in ``names``, not a number nor followed by one), e.g. 'holding' in
    'You are holding: key.' and 'lying here' in 'Lying here: lamp, key.' ('' when no sentence names
    the word)."""
    low = word.lower()
    for sentence in reversed(SENTENCE.split(str(text))):
        tokens = [w.lower() for w in words(sentence)]
        if low not in tokens:
            continue
        lead = tokens[: tokens.index(low)]
        numbered = {
            w for w, nxt in zip(lead, [*lead[1:], low], strict=True) if nxt.isdigit()
        }  # 'lamp 1': a name
        kept = [w for w in lead if w not in STOP | names | numbered and not w.isdigit()]
        return " ".join(kept[:2])
    return ""

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

def count_goal(memory, key, gw):
    """Count one more episode and the words of its goal under ``memory[key]``."""
    goals = memory.setdefault(key, {"episodes": 0, "words": {}})
    goals["episodes"] += 1
    for w in {w.lower() for w in gw}:
        bump(goals["words"], w)

def in_every_goal(memory, key, word):
    """The word was in the goal of every episode counted under ``memory[key]`` (two or more, and
    the goals differ in some word): the task's form ('find', 'take'), not a thing it names."""
    goals = memory.get(key) or {}
    n, counts = goals.get("episodes", 0), goals.get("words") or {}
    varied = any(c < n for c in counts.values())
    return n >= 2 and varied and counts.get(word.lower(), 0) >= n

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

def decay(counts, factor):
    """Multiply every count by ``factor`` (1.0: no decay), dropping those that fall near 0."""
    if factor >= 1.0:
        return counts
    return {k: round(v * factor, 4) for k, v in counts.items() if v * factor >= 0.05}

def encode_transitions(memory, episode, tools, p, store):
    """The map of observed states: ``state --action--> next state`` for observation field ``p['state_key']``,
    the states entered, the states named in list field ``p['neighbors_key']`` (seen, maybe never entered),
    how actions that change state are written (``move template``: the action with the next state as
    ``{to}``), the actions each state listed (``listed``) and those tried there that went nowhere
    (``stayed``): a listed action that moved the agent elsewhere but was never tried here leads out of
    the known map."""
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

def _carried(episode, gw, key, names):
    """Per goal word, the frames the text kept it in across a change of state: the word moved with the
    agent (it was held), e.g. 'holding' in 'You are holding: key.' before and after a move."""
    obs = [(episode.get("task") or {}).get("observation") or {}]
    texts = [(episode.get("task") or {}).get("observation_text") or ""]
    for step in episode.get("steps") or []:
        if step.get("observation"):
            obs.append(step["observation"])
            texts.append(step.get("observation_text") or "")
    out = {w: set() for w in gw}
    for i in range(1, len(obs)):
        was, now = state_of(obs[i - 1], key), state_of(obs[i], key)
        if not was or not now or was == now:
            continue
        for w in gw:
            frame = frame_of(texts[i], w, names)
            if frame and frame == frame_of(texts[i - 1], w, names):
                out[w].add(frame)
    return out

def _from_failure(found, carried, goal_place):
    """What a failed episode teaches: an action that made a goal word carried (applies anywhere), and
    one that ended carrying it (applies in the place the goal names: ``goal_place(word)``, if any)."""
    out = []
    for where, template, frame, word, after in found:
        held = carried.get(word, set())
        if after in held and frame not in held:
            out.append([where, template, frame, word, after])
        elif frame in held and after not in held and not where and goal_place(word):
            out.append([goal_place(word), template, frame, word, after])
    return out

def _everywhere(episode):
    """The value words every observation of the episode had (the actions always listed, ...)."""
    observations = [(episode.get("task") or {}).get("observation") or {}]
    observations += [s.get("observation") for s in episode.get("steps") or [] if s.get("observation")]
    common = value_words(observations[0])
    for obs in observations[1:]:
        common &= value_words(obs)
    return common

def _carry_forms(episode, gw, key, names, everywhere=None, form=frozenset()):
    """``[template, frame]`` for each action that made a thing move with the agent, whatever the goal:
    the thing's word was in the observation before the action and not in the previous state's, and is
    still there after the next change of state. The template names it ``{item}`` (and goal words as
    slots); the frame is how the text showed it before ('objects here'). In the episode's first state,
    which has no previous one, the word must not be one that ``everywhere`` (past episodes) always had.
    A word of the task's ``form`` (every goal has it: 'take') is never the thing: listed beside other
    things after the move, 'take' of 'take key' looked carried."""
    steps, texts = steps_of(episode), texts_of(episode)
    out = []
    for i, (before, action, after, error) in enumerate(steps):
        here = state_of(before, key)
        if error or not here or state_of(after, key) not in ("", here):
            continue
        earlier = [b for b, _, _, _ in steps[:i] if state_of(b, key) not in ("", here)]
        later = [a for _, _, a, _ in steps[i:] if state_of(a, key) not in ("", here)]
        if not later or not (earlier or everywhere is not None):
            continue
        was_there = value_words(earlier[-1]) if earlier else set(everywhere)
        moved = value_words(later[0])
        for w in sorted({t.lower() for t in words(action)} & value_words(before)):
            if w.isdigit() or w in was_there or w not in moved or w in form:
                continue
            pieces = re.split(r"([A-Za-z0-9_]+)", action)
            template = "".join("{item}" if t.lower() == w else slotted(t, gw) or t for t in pieces)
            frame = frame_of(texts[i][0], w, names)
            learned = [template, slotted(frame, gw) or frame]
            if learned not in out:
                out.append(learned)
    return out

def encode_goal_actions(memory, episode, tools, p, store):
    """Actions that name words of the goal, as templates (``<verb> {1}``: word 1 of the goal) under the
    goal's shape, with the state they were taken in when that state is a goal word too, and how the
    observation text framed the named word before the action (``holding`` in 'You are holding: key'); the
    state an action names otherwise becomes ``{here}`` (the action then applies in any state). How
    the text frames the word after an action taken anywhere is kept too (``goal_action_after``: what
    holding it looks like). Actions that change the state are left to ``transitions``. Only
    successful episodes when ``p['successes_only']``; otherwise a failed episode teaches the action that
    made a goal word carried (its frame then seen in two states) and the one that ended carrying it,
    which applies in the state the goal names. How many goals named each word: ``goal_action_goals``.
    With ``p['any_item']``, the form of any action that made a thing carried (``carry_forms``: one
    'take coin' teaches 'take {item}' for every goal), from every episode, solved or not: its evidence is
    the thing moving with the agent, not the outcome."""
    m = memory.setdefault("goal_actions", {})
    after_m = memory.setdefault("goal_action_after", {})
    gw = goal_words((episode.get("task") or {}).get("goal", ""))
    count_goal(memory, "goal_action_goals", gw)
    key = p.get("state_key", "")
    names = observed_words(episode)
    if p.get("any_item", True):  # a thing moving with the agent says what carrying is, solved or not
        _learn_carry_forms(memory, episode, gw, key, names, store)
    if p.get("successes_only", True) and not episode.get("success"):
        return
    for table in (m, after_m):
        for k in list(table):
            table[k] = decay(table[k], store.get("decay", 1.0))
    found, afters, used = [], [], set()
    places = memory.setdefault("goal_action_places", [])
    for (before, action, after, error), (seen, then) in zip(
        steps_of(episode), texts_of(episode), strict=True
    ):
        here = state_of(before, key)
        if here and here not in places:
            places.append(here)
        moved = key and state_of(after, key) and state_of(after, key) != here
        template = "" if error or moved else slotted(action, gw)  # moves are the map's job
        if template:
            where = slotted(here, gw) if key else ""
            if here and not where and here in template:
                template = template.replace(here, "{here}")  # "take {2} 1 from {here}": any place
            item = sorted(slots_in(template) - slots_in(where), key=lambda i: gw[i].lower() not in names)
            word = gw[item[0]] if item else ""  # the word an action acts on: a name the agent saw first
            frame = frame_of(seen, word, names) if word else ""
            after_frame = frame_of(then, word, names) if word else ""
            found.append([where, template, slotted(frame, gw) or frame, word, after_frame])
            used |= slots_in(template) | slots_in(where)
    if not episode.get("success"):
        entered = set(memory.get("goal_action_places") or [])

        def goal_place(word):  # another goal word naming something seen, a state entered first
            named = [w for w in gw if w != word and w.lower() in names]
            return slotted(sorted(named, key=lambda w: w not in entered)[0], gw) if named else ""

        found = _from_failure(found, _carried(episode, gw, key, names), goal_place)
    for where, _template, _frame, word, after_frame in found:
        if word and not where and after_frame:
            afters.append([gw.index(word), after_frame])
    memory["goal_action_places"] = places[-store.get("cap", 200) :]
    # the goal's shape: every word an action named, or the observations named, is a slot
    used |= {i for i, w in enumerate(gw) if w.lower() in names}
    kind = goal_kind(gw, used)
    for where, template, frame, word, _ in found:
        slot = gw.index(word) if word else -1
        bump(m.setdefault(kind, {}), json.dumps([where, template, frame, slot]))
    for pair in afters:
        bump(after_m.setdefault(kind, {}), json.dumps(pair))
    for table in (m, after_m):
        for k in list(table):
            table[k] = capped(table[k], store.get("cap", 200))
    print("goal actions:", len(found), "templated;", len(m), "goal shapes")

def _learn_carry_forms(memory, episode, gw, key, names, store):
    """Count the episode's carry forms (``_carry_forms``) under ``memory['carry_forms']``."""
    forms = decay(memory.get("carry_forms") or {}, store.get("decay", 1.0))
    everywhere = memory.get("goal_action_everywhere")  # past episodes' words in every observation
    form = {w.lower() for w in gw if in_every_goal(memory, "goal_action_goals", w)}
    learned = _carry_forms(episode, gw, key, names, everywhere, form)
    for found in learned:
        bump(forms, json.dumps(found))
    memory["carry_forms"] = capped(forms, store.get("cap", 200))
    mine = _everywhere(episode)
    memory["goal_action_everywhere"] = sorted(mine if everywhere is None else mine & set(everywhere))
    print("carry forms:", len(learned), "new;", len(memory["carry_forms"]), "kept")

def _placed(actions, places):
    """How well a word's sightings say where it is: the share of them in its most frequent state (or
    after its most frequent action), then how many there were. A thing lies in one place; the words
    of the prose around it turn up everywhere."""
    counts = {}
    for k, n in (places or {}).items():
        bump(counts, json.loads(k)[0], n)
    counts = counts or actions
    total = sum(counts.values())
    return (max(counts.values()) / total, total) if total else (0.0, 0.0)

def encode_sightings(memory, episode, tools, p, store):
    """Which action first showed each word (a word in the observation after the action, not before it):
    ``word -> {action: count}``, and with ``p['state_key']`` in which state (``sighting_places``).
    Words of the goal only when ``p['goal_only']``. How many episodes' goals named each word
    (``sighting_goals``): a word in every goal is the task's form, not a thing to find. Over the
    store's cap, words no goal named go first, those whose sightings say least where they are
    first among them (``_placed``)."""
    m = memory.setdefault("sightings", {})
    gw = [w.lower() for w in goal_words((episode.get("task") or {}).get("goal", ""))]
    for w in list(m):
        m[w] = decay(m[w], store.get("decay", 1.0))
    count_goal(memory, "sighting_goals", gw)
    shown = 0
    places = memory.setdefault("sighting_places", {})
    key = p.get("state_key", "")
    for before, action, after, error in steps_of(episode):
        if error or not after:
            continue
        old = {w.lower() for w in words(value_text(before))}
        for w in sorted({w.lower() for w in words(value_text(after))} - old):
            if w.isdigit() or (p.get("goal_only", False) and w not in gw):
                continue
            bump(m.setdefault(w, {}), action)
            if state_of(after, key):
                bump(places.setdefault(w, {}), json.dumps([state_of(after, key), action]))
            shown += 1
    for w in list(m):
        m[w] = capped(m[w], 3)
    if len(m) > store.get("cap", 200):  # words a goal named first: what a later goal will look for
        named = (memory.get("sighting_goals") or {}).get("words") or {}
        ranked = sorted(m, key=lambda w: (w in named, *_placed(m[w], places.get(w))), reverse=True)
        m = memory["sightings"] = {w: m[w] for w in ranked[: store.get("cap", 200)]}
    for w in list(places):
        places[w] = capped(places[w], 3) if w in m else {}
        if not places[w]:
            del places[w]
    print("sightings:", shown, "new;", len(memory["sightings"]), "words tracked")

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

def retrieve_replay(memory, task, tools, p):
    """A kept action sequence, with this goal's words: of a goal of the same shape, or with
    ``p['match'] == 'goal'`` of this very goal; the latest, or with ``p['prefer'] == 'most'`` the one
    that scored most and then went furthest (for sequences kept from failures, the most progress). With
    ``p['form'] == 'rules'`` as rules instead of a plan: each step that changed something lasting, on the
    sentence it changed ('Mounted nothing: mount rotor.'). A rule applies however short the sequence (a
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
        encode_goal_actions(memory, episode, tools, {'successes_only': True, 'state_key': 'location', 'any_item': True}, STORE)
    except Exception as exc:
        print("encode part goal_actions failed:", repr(exc)[:200])
    try:
        encode_transitions(memory, episode, tools, {'state_key': 'location', 'neighbors_key': 'admissible_commands'}, STORE)
    except Exception as exc:
        print("encode part transitions failed:", repr(exc)[:200])
    try:
        encode_sightings(memory, episode, tools, {'goal_only': False, 'state_key': 'location'}, STORE)
    except Exception as exc:
        print("encode part sightings failed:", repr(exc)[:200])
    try:
        encode_sequences(memory, episode, tools, {'successes_only': True, 'max_actions': 30, 'idle': 'keep'}, STORE)
    except Exception as exc:
        print("encode part sequences failed:", repr(exc)[:200])


def recall(memory, task, tools):
    items = []
    try:
        items += [{**i, 'source': 0} for i in retrieve_replay(memory, task, tools, {'successes_only': True,
 'max_actions': 30,
 'idle': 'keep',
 'match': 'shape',
 'prefer': 'latest',
 'form': 'plan'})]
    except Exception as exc:
        print("retrieve part replay failed:", repr(exc)[:200])
    try:
        items += [{**i, 'source': 1} for i in retrieve_route(memory, task, tools, {'state_key': 'location',
 'neighbors_key': 'admissible_commands',
 'context': 'none',
 'towards': 'sighted'})]
    except Exception as exc:
        print("retrieve part route failed:", repr(exc)[:200])
    try:
        items += [{**i, 'source': 2} for i in retrieve_goal_rules(memory, task, tools, {'successes_only': True, 'state_key': 'location', 'any_item': True, 'min_support': 2})]
    except Exception as exc:
        print("retrieve part goal_rules failed:", repr(exc)[:200])
    try:
        items += [{**i, 'source': 3} for i in retrieve_explore(memory, task, tools, {'state_key': 'location', 'neighbors_key': 'admissible_commands', 'form': 'plan', 'max_steps': 30})]
    except Exception as exc:
        print("retrieve part explore failed:", repr(exc)[:200])
    return render_lines(items, {'order': 'notes,rules,plans', 'style': 'joined', 'max_lines': 60})
