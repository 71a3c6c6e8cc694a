"""Memory design compiled from genome 'mutate-d-0003' (ATLAS genome v1, key 99401b706d3f).

  encode   effects(): what each action did, read from the result text and the score alone: what it made, used, used up and replaced, whether it did nothing or advanced the task (instance numbers abstracted), which actions made each word, and when it works: what the fields held when it advanced, did nothing or ended a task
  encode   setters(): which kind of action sets which field of the observation: per field, the kinds whose step changed it, the value each action left it at, and whether that value was the action's own number
  encode   transitions(state_key='power'): the map of observed states: which action led from one state to the next, states seen nearby, and the moves each state listed
  encode   sightings(state_key='power'): which action first showed each word in the observations (and in which state)
  store    {'recent': 30, 'decay': 0.7}: keep the last N sequences (0: all); at most this many keys per counter; counts are multiplied by this before each episode adds its own
  retrieve route(towards='sighted'): rules: from every known state, the action toward the state the goal names, (towards sighted) the state where the goal's words were seen most, or (towards scored) where the score rose most for goals like this one (a path in the learned map, each move after what it was seen to need first); with context goal_items, once the goal's item is framed as goal_actions left it (held)
  retrieve setters(): rules for a goal that names a field of the observation: the action seen to leave it at the value the goal names, the setting kind on the goal's number where it sets its own number, else the listed actions of that kind not yet seen to leave it elsewhere; each applies while the observation shows the field
  retrieve untried(max_steps=20, later=True, sweep=True): a plan after every other: the actions listed at earlier tasks' start (or brought into the list by a step), that were never taken under this goal (or only ever did nothing where the fields held what they do not hold now), none that ended a task unless it may need another action first (then after it); those on the goal's own things first, then fewest tries; where nothing learned names a step, the agent tries what it has not instead of the first listed
  retrieve advances(): rules: in a situation like the one it was taken in, the action that advanced the task (the score rose or a goal word was newly shown), filled with this goal's words; and what to avoid: actions that never did anything (answering as their kind does when nothing happens), where the fields held what they held each time ('Avoid: filter when clear'), or ended their episodes (until what may have to come first is done: 'Avoid: A before B'), and actions that ended episodes only where a field held some word ('Avoid: heat when warm')
  render   lines(order='notes,plans,rules', style='split', max_lines=10): rules as '<situation>: <action>', plans as one line of actions, notes as they are; a line budget shared among the retrieve parts

Edit the genome and compile again (`atlas design compile`), or edit this code like any design.
"""

import json
import re

GENOME = {'version': 1,
 'name': 'mutate-d-0003',
 'encode': [{'part': 'effects', 'params': {}},
            {'part': 'setters', 'params': {}},
            {'part': 'transitions', 'params': {'state_key': 'power', 'neighbors_key': ''}},
            {'part': 'sightings', 'params': {'goal_only': False, 'state_key': 'power'}}],
 'store': {'recent': 30, 'cap': 200, 'decay': 0.7},
 'retrieve': [{'part': 'route', 'params': {'context': 'goal_items', 'towards': 'sighted'}},
              {'part': 'setters', 'params': {'min_sets': 1}},
              {'part': 'untried',
               'params': {'max_steps': 20, 'goal_first': True, 'later': True, 'sweep': True}},
              {'part': 'advances',
               'params': {'min_support': 1, 'avoid': 3, 'fatal_kinds': 3, 'before': True}}],
 'render': {'part': 'lines',
            'params': {'order': 'notes,plans,rules', 'style': 'split', 'max_lines': 10}}}
STORE = {'recent': 30, 'cap': 200, 'decay': 0.7}

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

def first_word(text):
    """The first word of ``text``, lower-case ('' for none): the kind of an action."""
    said = words(text)
    return said[0].lower() if said else ""

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
            w for w, nxt in zip(lead, [*lead[1:], low][: len(lead)], strict=True) if nxt.isdigit()
        }  # 'lamp 1': a name
        kept = [w for w in lead if w not in STOP | names | numbered and not w.isdigit()]
        return " ".join(kept[:2])
    return ""

def placed(text, word, names, slot):
    """Where ``text`` puts ``word``, with ``slot`` for it: by its frame ('in box {3}'), or, where no content
    word leads to it, by the words that do, quoted ('"you are in {3}"'): the agent's matcher applies a rule
    only where its quoted phrase is shown word for word (where it is, not 'Next to: {3}')."""
    frame = frame_of(text, word, names)
    if frame:
        return frame + " " + slot
    for sentence in reversed(SENTENCE.split(str(text))):
        tokens = [w.lower() for w in words(sentence)]
        if word.lower() in tokens:
            return '"' + " ".join([*tokens[: tokens.index(word.lower())][-3:], slot]) + '"'
    return ""

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

def store_factor(store):
    """What the store policy multiplies counts by before an episode adds its own: ``decay``, and for
    ``recent`` N an extra 1 - 1/N (a window of about N episodes)."""
    return store.get("decay", 1.0) * (1 - 1 / store["recent"] if store.get("recent", 0) > 0 else 1.0)

def capped(counts, cap):
    """The ``cap`` largest entries of a count dict (ties: first inserted)."""
    if cap <= 0 or len(counts) <= cap:
        return counts
    ranked = sorted(counts.items(), key=lambda kv: -kv[1])[:cap]
    return dict(ranked)

def capped_by(table, cap, size):
    """The ``cap`` entries of ``table`` with the largest ``size(value)`` (all when within the cap)."""
    if cap <= 0 or len(table) <= cap:
        return table
    return {k: table[k] for k in sorted(table, key=lambda k: -size(table[k]))[:cap]}

def decay(counts, factor):
    """Multiply every count by ``factor`` (1.0: no decay), dropping those that fall near 0."""
    if factor >= 1.0:
        return counts
    return {k: round(v * factor, 4) for k, v in counts.items() if v * factor >= 0.05}

NUMBER = re.compile(r"(?<![A-Za-z0-9_{])\d+(?![A-Za-z0-9_}])")

def unnumbered(text):
    """``text`` with its instance numbers as '#' ('take key 2 from shelf 1' -> 'take key # from shelf #'):
    the same action on another instance of the same things."""
    return NUMBER.sub("#", str(text))

MENTION = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s+(\d+)(?![A-Za-z0-9_])")

def _said_after(texts):
    """``{thing: [word sets]}``: per text, the content words each numbered thing ('valve 3') is followed by,
    up to the next numbered thing or the end of the sentence ('coolant closed' in 'valve 3 (coolant)
    closed; valve 1 ...')."""
    out = {}
    for text in texts:
        said = {}
        for piece in re.split(r"[.!?;\n]+", str(text)):
            found = list(MENTION.finditer(piece))
            for i, m in enumerate(found):
                end = found[i + 1].start() if i + 1 < len(found) else len(piece)
                after = {w.lower() for w in words(piece[m.end() : end]) if not w.isdigit()} - STOP
                thing = m.group(1).lower() + " " + m.group(2)
                said[thing] = said.get(thing, set()) | after
        for thing, after in said.items():
            out.setdefault(thing, []).append(after)
    return out

def described(texts):
    """What each numbered thing is called besides its number: the words said after it in every text that
    names it (two or more texts), and never after another thing of its kind ('valve 3 (coolant) closed',
    then '... open': 'coolant'; 'closed' is said of other valves too). ``{thing: 'words'}``; a thing with no
    such words, or the only one of its kind (its number is enough), is left out."""
    said = _said_after(texts)
    out = {}
    for thing, seen in said.items():
        kind = thing.split(" ")[0]
        others = [
            after
            for other, more in said.items()
            if other != thing and other.split(" ")[0] == kind
            for after in more
        ]
        if len(seen) < 2 or not others:
            continue
        always = set.intersection(*seen) - set.union(*others)
        if always:
            out[thing] = " ".join(sorted(always))
    return out

def called(action, names):
    """``action`` with what its numbered things are called (``described``) after it: 'open valve 3 (coolant)'
    (the agent's matcher finds the valve called so in the next task, whatever its number)."""
    things = [m.group(1).lower() + " " + m.group(2) for m in MENTION.finditer(str(action))]
    said = " ".join(names[t] for t in things if t in names)
    return f"{action} ({said})" if said else str(action)

def framed_pairs(text, names):
    """``{(frame, word)}`` for every content word of every sentence of ``text`` (numbers left out), where
    the frame is the sentence's first content word that names nothing (not in ``names``; '' when every
    word is a name): 'You hold: x, y.' -> ('hold', 'x'), ('hold', 'y'), ('hold', 'hold')."""
    out = set()
    for sentence in SENTENCE.split(str(text)):
        found = [w.lower() for w in words(sentence) if w.lower() not in STOP and not w.isdigit()]
        frame = next((w for w in found if w not in names), "")
        out.update((frame, w) for w in found)
    return out

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

def fewer(before, after, named):
    """Words of ``named`` the observation's fields (``lasting``) hold fewer times after than before: used up."""

    def count(obs):
        out = {}
        for value in lasting(obs).values():
            for w in words(value):
                if w.lower() in named:
                    bump(out, w.lower())
        return out

    had, has = count(before), count(after)
    return {w for w, n in had.items() if has.get(w, 0) < n}

def together(before, after, goal):
    """Goal words that a sentence new in ``after`` frames together, two or more of them."""
    old = {" ".join(words(x)).lower() for x in SENTENCE.split(str(before))}
    out = set()
    for sentence in SENTENCE.split(str(after)):
        found = {w.lower() for w in words(sentence)} & goal
        if len(found) >= 2 and " ".join(words(sentence)).lower() not in old:
            out |= found
    return out

def field_gains(before, after):
    """Names that came into a field of the observation (its lists and short values, ``lasting``; items of
    more than three words, such as commands, left out): a thing a list gains, the new
    value of a field that names a place."""
    old, out = lasting(before), set()
    for key, value in lasting(after).items():
        had = {w.lower() for w in words(old.get(key, ""))}
        for item in value.split(", "):
            found = [w.lower() for w in words(item)]
            if len(found) <= 3:
                out |= {w for w in found if w not in had and not w.isdigit()}
    return out - STOP

def finish_where(step, low):
    """For a step that finished its task: the goal's words the action does not name, each in its own place."""
    acted = {w.lower() for w in words(step["action"])}
    return {i: w for i, w in enumerate(low) if w not in acted}

def stand_in(step, low, frames, names, form):
    """For a step that put a thing with another word where the goal puts its thing with one of its own
    ('You put down the coin in hall.', the goal naming 'den'), ``({that goal word's index: the other
    word}, None)``, where the other is a name, the two share a frame in the episode's texts (both listed
    as exits) and the action names neither: the step would have finished the task there, and where the
    text put 'hall' is where to do it for 'den'. Where the sentence names no goal word but the action's
    one thing, the one goal word outside the task's ``form`` framed like that thing (else the one never
    shown) stands in for it ('You put down the lamp in hall.', the goal 'Bring the coin to den'):
    ``(where, (the step with 'coin' for 'lamp', 'coin'))``. The goal word stood in for is never framed
    like the thing put ('Here: lamp, key.' lists one more thing). ``({}, None)`` when none does so."""
    acted = {w.lower() for w in words(step["action"])}
    old = {" ".join(words(x)).lower() for x in SENTENCE.split(str(step["before"]))}
    for sentence in SENTENCE.split(str(step["after"])):
        said = [w.lower() for w in words(sentence)]
        things = sorted({w for w in said if w in acted and w in names and w not in low})
        own = set(said) & set(low)
        if " ".join(said) in old or not (own or len(things) == 1):
            continue
        for w in [w for w in said if w in names and w not in low and w not in acted]:
            kin = [
                g
                for g in low
                if g not in said and g not in acted and frames.get(g, set()) & frames.get(w, set())
            ]
            put = frames.get([*sorted(own), *things][0], set())  # the thing put: a place is no such thing
            kin = [g for g in kin if not frames.get(g, set()) & put]
            if not kin:
                continue
            if own:
                return {low.index(kin[0]): w}, None
            others = [
                g for g in low if g not in form and g not in said and g not in acted and g not in kin[:1]
            ]
            like = [g for g in others if frames.get(g, set()) & frames.get(things[0], set())]
            like = like or [g for g in others if not frames.get(g)]
            if len(like) == 1:
                swap = re.compile(r"(?<![A-Za-z0-9_])" + re.escape(things[0]) + r"(?![A-Za-z0-9_])", re.I)
                moved = {key: swap.sub(like[0], str(step[key])) for key in ("action", "before")}
                return {low.index(kin[0]): w}, ({**step, **moved}, like[0])
    return {}, None

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

def _framed(frame, word):
    """A situation piece: the word as the observation text frames it ('holding key'), or the word."""
    return (frame + " " + word).strip()

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

def here_words(obs):
    """The words of the observation's short text fields (where the agent is: 'shelf' of 'shelf 1')."""
    out = set()
    for value in obs.values() if isinstance(obs, dict) else []:
        if isinstance(value, str) and 0 < len(words(value)) <= 3:
            out |= {w.lower() for w in words(value) if not w.isdigit()}
    return out - STOP

def reply_of(step):
    """What the result text said, without the action's own words, the observation's values and numbers:
    'dissolves nothing happens' for 'The tannin dissolves. Nothing happens.' (the same for every reagent
    that does nothing), 'sinks bottom undissolved nothing else happens' for one that did not take."""
    own = {w.lower() for w in words(step["action"])} | value_words(step["obs_after"])
    said = [w.lower() for w in words(step["after"])]
    return " ".join(w for w in said if w not in own and w not in STOP and not w.isdigit())[:200]

def field_losses(before, after):
    """Words that left a short field of the observation (``here_words``): the state an action ended ('chilled'
    when heating made a chilled sample mild)."""
    return here_words(before) - here_words(after)

def given_back(steps, i, goal):
    """Whether goal words step ``i`` brought into a short field (``here_words``) left it at a later step of the
    same kind of action, with no score change between: a wander that reached the goal's place and walked on
    made no progress."""
    came = (here_words(steps[i]["obs_after"]) - here_words(steps[i]["obs_before"])) & goal
    if not came:
        return False
    kind = first_word(steps[i]["action"])
    for later in steps[i + 1 :]:
        if later["gain"]:
            return False
        gone = field_losses(later["obs_before"], later["obs_after"])
        if first_word(later["action"]) == kind and came & gone:
            return True
    return False

def ending_when(rec, effects):
    """For an action that ended some episodes unsolved and not others: the words of the short fields that
    held each time it ended one and never when it did not ('warm' for heating that boiled a warm sample
    over and warmed a cold one). Empty when no word tells them apart. Of those, the ones seen in the most
    situations any action was taken in (``effects``): one ending holds every word of its situation
    ('live', and the band and hum of that one task), and the condition is the broadest of them."""
    ended, safe = rec.get("end_in") or [], rec.get("safe_in") or []
    if not ended or not safe:
        return []
    held = set.intersection(*[set(x) for x in ended]) - {w for x in safe for w in x}
    everywhere = situations(effects)
    seen = {w: sum(w in x for x in everywhere) for w in held}
    return sorted(w for w in held if seen[w] == max(seen.values()))

def _idle_states(rec, everywhere):
    """The telling words of each situation an action did nothing in: its short-field words less those of
    every situation (``everywhere``) and the action's own (its thing is there whenever it is acted on). A
    situation whose short fields said nothing (a field too long to read as a state) tells nothing and is
    left out."""
    own = {w.lower() for w in words(rec.get("eg", ""))}
    return [set(x) - everywhere - own for x in rec.get("idle_here") or [] if x]

def idle_when(rec, everywhere):
    """For an action that never did anything: the words of the short fields that held each time it did
    nothing (``_idle_states``): where it did nothing ('clear' for a filter tried only on clear samples,
    which may clear a cloudy one). Empty when its situations share nothing telling: then it did nothing
    anywhere it was tried, or in states that differ (``idle_states``)."""
    held = _idle_states(rec, everywhere)
    return sorted(set.intersection(*held)) if held else []

def thing_state(text, action):
    """The words ``text`` says right after the numbered things ``action`` acts on, less the action's own:
    how its thing was ('washed' in 'You hold: mushroom 8 (washed).' for 'put mushroom 8 in pan')."""
    said = _said_after([text])
    own = {w.lower() for w in words(action)}
    things = [m.group(1).lower() + " " + m.group(2) for m in MENTION.finditer(str(action))]
    return sorted(set().union(*[x for t in things for x in said.get(t, [])]) - own)

def idle_states(rec):
    """For an action that never did anything: each way its thing was when it did nothing (``thing_state``;
    'whole' and 'washed' for a put refused while the mushroom was whole, then washed: chopped, it may go
    in), where the text said how each time; else []."""
    held = [set(x) for x in rec.get("idle_as") or []]
    return sorted(set().union(*held)) if held and all(held) else []

def idle_elsewhere(rec, everywhere, now, situations=3):
    """Whether an action did nothing only in situations unlike ``now`` (the short-field words that hold
    now): each try did nothing, in ``situations`` or more, none ended a task, and the fields held words
    each time (``idle_when``) that do not all hold now. A filter tried only on clear samples is untried
    on a cloudy one; what was tried once is not (one situation's words hold almost nowhere else)."""
    c = rec.get("counts") or {}
    where = idle_when(rec, everywhere)
    quiet = c.get("nothing", 0) >= c.get("n", 0) - 1e-6 and not c.get("fatal", 0)
    varied = len(rec.get("idle_here") or []) >= situations
    return bool(where) and quiet and varied and not set(where) <= now

def situations(effects):
    """The short-field words of each situation an action was taken in (as the memory keeps them)."""
    return [
        set(x)
        for rec in effects.values()
        for k in ("idle_here", "safe_in", "end_in")
        for x in rec.get(k) or []
    ]

def seen_everywhere(effects):
    """The short-field words that held in every situation any action was taken in (the sample's name,
    a fixed label): they tell no situation from another."""
    seen = situations(effects)
    return set.intersection(*seen) if seen else set()

def by_kind(effects):
    """The records of ``effects`` per first word of their action (its kind), those without one left out."""
    kinds = {}
    for rec in effects.values():
        head = first_word(rec.get("eg", ""))
        if head:
            kinds.setdefault(head, []).append(rec)
    return kinds

def plain_replies(effects):
    """Per first word of an action, the reply its kind most often gave when it did nothing: what doing
    nothing sounds like ('dissolves nothing happens')."""
    said = {}
    for head, recs in by_kind(effects).items():
        for rec in recs:
            for reply, n in (rec.get("replies") or {}).items():
                bump(said.setdefault(head, {}), reply, n)
    return {head: max(replies, key=replies.get) for head, replies in said.items()}

def says_nothing_new(rec, plain):
    """Whether an action that did nothing said what its kind says when nothing happens. One that answered
    otherwise reacted to something ('sinks to the bottom undissolved'): it may work in another situation,
    and is not avoided."""
    replies = rec.get("replies") or {}
    return not replies or max(replies, key=replies.get) == plain.get(first_word(rec.get("eg", "")))

def ends_tasks(rec):
    """Every time it was taken, it ended its episode unsolved (and it never advanced a task)."""
    c = rec.get("counts") or {}
    return c.get("fatal", 0) > 0 and c["fatal"] >= c.get("n", 0) - 1e-6 and not c.get("up", 0)

def leaves(obs, path=""):
    """An observation's short values by where they sit ('switches green': 'on'), mappings walked into."""
    out = {}
    for key, value in obs.items() if isinstance(obs, dict) else []:
        if isinstance(value, dict):
            out.update(leaves(value, f"{path}{key} "))
        elif isinstance(value, str | int | float | bool) and len(words(str(value))) <= 3:
            out[path + str(key)] = value
    return out

def volatile(steps):
    """The short values (``leaves``) that changed at more than half of an episode's steps, and at least twice:
    a reply, a count of steps left; not a state that an action set."""
    changed = {}
    for step in steps:
        before, after = leaves(step["obs_before"]), leaves(step["obs_after"])
        for k in set(before) | set(after):
            bump(changed, k, before.get(k) != after.get(k))
    return {k for k, n in changed.items() if n >= 2 and n > len(steps) / 2}

def note_done(rec, key, done, step, moving):
    """Add a step's action to ``done`` with the short values it changed, less the ``volatile`` ones
    (``moving``): a switch's 'on'. Mark its record ``sets`` once it changed one (it leaves a state)."""
    before, after = leaves(step["obs_before"]), leaves(step["obs_after"])
    change = {k: (before.get(k), v) for k, v in after.items() if before.get(k) != v and k not in moving}
    done.append((key, change))
    rec["sets"] = bool(rec.get("sets") or change)

def note_order(rec, key, risen, done, obs, ended, rose):
    """Keep, for a step that ended its episode unsolved (``ended``) or raised the score (``rose``), what had
    come before it in the episode: the actions whose rises of the score still held (``end_after`` /
    ``up_with``) and the other actions done (``end_prior`` / ``up_prior``), for the last four such steps.
    ``done``: (action, what it changed) so far (``note_done``); one whose changes are all back where they
    were before it was first taken (a switch flipped on and off again) counts as undone. ``needs_first``
    and ``spoilers_of`` read them."""
    now, was = leaves(obs), {}
    for k, change in done[-12:]:
        for path, (old, _) in change.items():
            was.setdefault(k, {}).setdefault(path, old)
    kept = {
        k
        for k, _ in done[-12:]
        if any(now.get(p) != old for p, old in was.get(k, {}).items()) or k not in was
    }
    for hit, held, prior in ((ended, "end_after", "end_prior"), (rose, "up_with", "up_prior")):
        if hit:
            rec[held] = [*rec.get(held, [])[-3:], sorted(set(risen) - {key})]
            rec[prior] = [*rec.get(prior, [])[-3:], sorted(kept - set(risen) - {key})]

def needs_first(rec, effects):
    """For an action that ended every episode it was taken in: the action of its kind (first word) that may
    have to come first, the one that raised the score earliest in its games (fewest rises before it) and
    whose rise did not hold at some of those endings (a switch that overloaded the panel, flipped before the
    switch that warms it). Its example form; '' when none fits, or none raised the score (then the action
    ends tasks whatever came first). It ended a task after B at most once, and then with other actions done
    before it that may have spoiled it (``spoilers_of``); a second time, or with nothing else done, refutes
    the order. Of its kind only: an action of another kind that must come first leaves it doing nothing,
    not ending the task (``primers_of``). And only while it is the one action of its kind that ended tasks
    before B: several that did are a choice among things of which one is right ('focus on' the drain, the
    bed, the orange, when only the tortoise raised the score), not an order. An action that also advanced
    a task: B is a riser whose rise held every time it advanced one and not some time it ended one (the
    mains switch that brought a warm panel live and cracked cold valves)."""
    first = _first_key(rec, effects)
    return effects[first]["eg"] if first else ""

def spoilers_of(rec, effects):
    """For an action that may need a riser B first (``needs_first``) and yet ended a task after B: the other
    actions done before each such ending and never before it advanced a task, none of which ever raised the
    score (a test contact flipped while the panel was dark, which overloads it when the mains switch brings
    it live), as (example form, whether it ``sets`` a state): one of them may have spoiled the action. One
    that left a state still so at the ending may spoil it whichever comes first; another, only before it."""
    first = _first_key(rec, effects)
    spoiled = [prior for held, prior in _endings(rec) if first and first in held]
    if not spoiled:
        return []
    safe = set().union(*[set(x) for x in rec.get("up_prior") or []])
    found = sorted(set.intersection(*spoiled) - safe - _risers(effects))
    return [(effects[k]["eg"], bool(effects[k].get("sets"))) for k in found]

def _endings(rec):
    """(rises that held, other actions done) before each of the last times the action ended a task."""
    held, prior = rec.get("end_after", [])[::-1], rec.get("end_prior", [])[::-1]  # older ones: fewer priors
    return [(set(h), set(p)) for h, p in zip(held[: len(prior)], prior, strict=True)]

def _risers(effects):
    return {key for key, r in effects.items() if (r.get("counts") or {}).get("up", 0)}

def _first_key(rec, effects):
    """``needs_first``'s action, as its key in ``effects``; '' when there is none."""
    advanced = (rec.get("counts") or {}).get("up", 0)
    if "end_after" not in rec or not (ends_tasks(rec) or (advanced and "up_with" in rec and _fatal(rec))):
        return ""
    head = first_word(rec.get("eg", ""))
    kind = {key: r for key, r in effects.items() if first_word(r.get("eg", "")) == head}

    def ended_before(r):  # the actions that had raised the score before each time r ended a task
        return set().union(*[set(x) for x in r["end_after"]]) if ends_tasks(r) and "end_after" in r else None

    held = set.intersection(*[set(x) for x in rec["up_with"]]) if advanced else set(effects)
    before = held & set.intersection(*[set(x) for x in rec["end_after"]]) | (set(effects) - held)
    risers = [
        (r["first_rise"], -(r.get("counts") or {}).get("up", 0), key)
        for key, r in kind.items()
        if r is not rec and "first_rise" in r and key not in before
    ]
    if not risers:
        return ""
    first = min(risers)[2]
    times = sum(first in set(x) for x in rec["end_after"])  # it ended a task after B anyway
    suspects = [prior - _risers(effects) for held_then, prior in _endings(rec) if first in held_then]
    refuted = not advanced and (times > 1 or len([s for s in suspects if s]) < times)
    others = [
        b for r in kind.values() if r is not rec and (b := ended_before(r)) is not None and first not in b
    ]
    return "" if others or refuted else first

def _fatal(rec):
    return bool((rec.get("counts") or {}).get("fatal"))

def fatal_heads(effects, least):
    """The leading words of actions that end a task: ``least`` or more actions beginning with the same word
    each ended every episode it was taken in, unsolved, and more of them than of the others so begun that
    never advanced a task ('focus on' when focusing on a drain, a bed and an orange each failed a task,
    focusing on an ambiguous name did nothing, and only focusing on the right thing ever helped). Their
    longest common beginning, without the thing: the next such action is likely fatal too, unless advice
    names it. 0: never."""
    if not least:
        return []
    out = []
    for _, kind in sorted(by_kind(effects).items()):
        recs = [  # (words, fatal, advanced)
            ([w.lower() for w in words(r["eg"])], ends_tasks(r), bool((r.get("counts") or {}).get("up", 0)))
            for r in kind
        ]
        ended = [said for said, fatal, _ in recs if fatal]
        idle = sum(1 for _, fatal, up in recs if not fatal and not up)
        if len(ended) < least or idle >= len(ended):
            continue
        head = ended[0]
        for said in ended[1:]:
            n = 0
            while n < min(len(head), len(said)) and head[n] == said[n]:
                n += 1
            head = head[:n]
        if 0 < len(head) < min(len(said) for said in ended):  # a beginning, not a whole action
            out.append(" ".join(head))
    return out

def ending_words(effects):
    """First words of actions that end a task: one so begun ended every episode it was taken in, unsolved,
    and every other one so begun did that too or advanced a task ('focus on' once focusing on a drain failed
    one, and only focusing on the right thing helped). A first word some action did nothing under is not one
    ('add' when adding one reagent ruined a sample and adding another did nothing), nor one whose only
    endings may have needed another action first (``needs_first``)."""
    return {
        head
        for head, recs in by_kind(effects).items()
        if any(ends_tasks(r) and not needs_first(r, effects) for r in recs)
        and all(ends_tasks(r) or (r.get("counts") or {}).get("up", 0) for r in recs)
    }

def tried_as_far(rec, goal, furthest):
    """Whether an action was tried under ``goal`` as far on as that goal's games ever got: one tried only
    before a stage its goal reached later may be the next stage's step (a switch that refused before its
    turn). Kept before stages were: tried under the goal at all; before goals were: tried."""
    at = rec.get("tried_at")
    if at is None:
        return goal in rec.get("tried_goals", [goal])
    return goal in at and at[goal] >= furthest

def undoers(effects):
    """'K …' for each kind K (first word) of action whose own retake undid the score it raised (a switch
    flipped back off): the agent's matcher passes over an action of that kind once it raised the score."""
    kinds = {
        first_word(rec["eg"]) for rec in effects.values() if (rec.get("counts") or {}).get("undid", 0) > 0
    }
    return [kind + " …" for kind in sorted(kinds) if kind]

def _goal_of(gw):
    """The goal as effects are filed under it: its words with instance numbers as '#' ('sample S-19' and
    'sample S-55' are one goal; what raised the score for one is a step of the other)."""
    return unnumbered(goal_key(gw))

def _enough(count, p):
    """More than ``min_support - 1`` episodes' worth (counts decay with the store)."""
    return count > p.get("min_support", 1) - 1

def _effect(step, names, goal):
    """What one step (``scored_steps``) did, read from its texts, fields and score alone: ``made`` (words
    that came into a field, a new thing into the things held; for text alone, what it newly frames and keeps
    framing; and goal words it shows that the text before did not), ``uses`` (words the action names that
    the text showed before it: its inputs), ``eats`` (inputs the text stopped framing as before: used up),
    ``swaps`` (frames where it replaced a word the action did not name: a new place for the old one),
    ``moved`` (the goal words it advanced: made, or framed together in a sentence the text did not have
    before, 'You put the key on the shelf'), ``advanced`` (the score rose or a goal word moved) and
    ``nothing`` (it failed, or changed no field, made nothing, no score)."""
    pb, pa = framed_pairs(step["before"], names), framed_pairs(step["after"], names)
    new = pa - pb  # kept: still framed after a following step that changed the text (not a repeated message)
    kept = new & framed_pairs(step["next"], names) if step["next"] != step["after"] else set()
    shown = {w for _, w in pb}
    acted = {w.lower() for w in words(step["action"])}
    if lasting(step["obs_after"]):  # fields that hold things and places: what came into them
        made = field_gains(step["obs_before"], step["obs_after"])
    else:  # text alone: what the text newly frames and keeps framing
        made = {w for f, w in kept if w != f}
    made |= {w for _, w in new if w in goal and w not in shown}
    frames = {}  # how the text frames each thing made: where it lasted, else where it is new
    for f, w in sorted(new - kept) + sorted(kept):
        if w in made and w != f:
            frames[w] = f
    frames_after = {f for f, _ in pa}
    lost = {(f, w) for f, w in pb - pa if f in frames_after and w != f}
    moved = (made & goal) | together(step["before"], step["after"], goal)
    still = idle([step["obs_before"], step["action"], step["obs_after"], step["error"]])
    return {
        "made": {w: frames.get(w, "") for w in sorted(made)},
        "uses": sorted((acted & shown) - made),
        "eats": sorted(
            fewer(step["obs_before"], step["obs_after"], acted) or {w for _, w in lost if w in acted} - made
        ),
        "swaps": sorted({f for f, w in lost if w not in acted and f in frames.values()}),
        "drops": sorted(field_losses(step["obs_before"], step["obs_after"])),
        "moved": moved,
        "advanced": step["gain"] > 0 or bool(moved),
        "nothing": bool(step["error"]) or (still and not made and step["gain"] <= 0 and not moved),
    }

def _goal_form(step, gw, names, moved, where=None):
    """An advancing step as a form any goal can fill: the goal words it moved (``_effect``) that the action
    names, as slots ('take {2} 2 from shelf 1'), a word naming where the agent is (a short text field) as
    ``{@}`` ('take {2} 2 from {@} 1': from wherever it is), and its situation, how the text before framed the first of
    them ('see {2}'; the goal's own sentence is no situation); None when it names none or no sentence
    frames it. With ``where`` ({goal word index: the word the text put in its place}), the situation adds
    where the text put those words (``placed``): 'carry {1} "you are in {3}"', where the action finished
    a task or would have (``stand_in``)."""
    low = [w.lower() for w in gw]
    pieces = re.split(r"([A-Za-z0-9_]+)", step["action"])
    slots = [i for i, t in enumerate(pieces) if t.lower() in moved and t.lower() in low]
    if not slots:
        return None
    first = pieces[slots[0]]
    for i in slots:
        pieces[i] = "{" + str(low.index(pieces[i].lower())) + "}"
    here = here_words(step["obs_before"])
    pieces = ["{@}" if t.lower() in here and t.lower() not in low else t for t in pieces]
    told = ". ".join(
        x for x in SENTENCE.split(str(step["before"])) if not set(low) <= {w.lower() for w in words(x)}
    )
    frame = frame_of(told, first, names)
    if not frame:
        return None
    situation = frame + " {" + str(low.index(first.lower())) + "}"
    added = [placed(told, w, names, "{" + str(i) + "}") for i, w in sorted((where or {}).items())]
    return ["".join(pieces), " ".join([situation, *[a for a in added if a][:2]])]

def _form_key(form, gw, names):
    """Where a form is filed: the goal's shape (names and slots as '*'), the action, the situation."""
    kind = goal_kind(gw, {i for i, w in enumerate(gw) if w.lower() in names} | slots_in(" ".join(form)))
    return json.dumps([kind, unnumbered(form[0]), form[1]])

def encode_effects(memory, episode, tools, p, store):
    """What each action did, from the result text and the score alone (no environment's words): per
    action (instance numbers as '#', so 'take key 2' and 'take key 1' are one), how often it was tried,
    did nothing, advanced the task, ended its episode unsolved (``fatal``), and what it made, used, used
    up and replaced (``_effect``); which actions made each word (``effect_makers``: what makes what,
    e.g. 'join x y' made 'z'); and each advancing step as a form with the goal's words as slots
    (``effect_forms``). Counts decay with the store (``recent`` N: an extra 1 - 1/N per episode, a window
    of about N episodes) and are capped."""
    m = memory.setdefault("effects", {})
    makers = memory.setdefault("effect_makers", {})
    forms = memory.setdefault("effect_forms", {})
    factor = store_factor(store)
    for rec in m.values():
        rec["counts"], rec["made"] = decay(rec["counts"], factor), decay(rec["made"], factor)
    for w in list(makers):
        makers[w] = decay(makers[w], factor)
    for rec in forms.values():
        rec["n"] = round(rec["n"] * factor, 4)
    gw = goal_words((episode.get("task") or {}).get("goal", ""))
    goal = {w.lower() for w in gw}
    count_goal(memory, "effect_goals", gw)
    this_goal = _goal_of(gw)
    names = observed_words(episode)
    steps = scored_steps(episode)
    texts = [s["before"] for s in steps] + [s["after"] for s in steps[-1:]]
    names_of, low = described(texts), [w.lower() for w in gw]
    form_words = {w for w in low if in_every_goal(memory, "effect_goals", w)}
    frames = {}  # the frames each word is shown under in the episode
    for f, w in {pair for text in texts for pair in framed_pairs(text, names)}:
        if f and f != w:
            frames.setdefault(w, set()).add(f)
    places = memory.setdefault("effect_places", [])
    listed = memory.setdefault("effect_listed", {})  # what the agent was shown at a task's start
    for label in (episode.get("task") or {}).get("actions") or []:
        shown = called(label, names_of)
        listed[unnumbered(shown)] = shown
    later = memory.setdefault("effect_later", {})  # what a step of it brought into the list
    for label in [
        a for s in episode.get("steps") or [] for a in s.get("new_actions") or [] if isinstance(a, str)
    ]:
        shown = called(label, names_of)
        later[unnumbered(shown)] = shown
    counted, stage, moving = set(), 0, volatile(steps)  # stage: how often the score rose before a step
    quiet, done, risen = [], [], []  # in this episode: what did nothing; all taken; whose rise still holds
    for i, step in enumerate(steps):
        here = sorted(here_words(step["obs_before"]))  # the situation it was taken in
        places += [w for w in here if w not in places]
        eff = _effect(step, names, goal)
        if eff["moved"] and step["gain"] <= 0 and given_back(steps, i, eff["moved"]):
            eff = {**eff, "moved": set(), "advanced": False}
        fatal = step["ended"] and not episode.get("success")  # it ended the episode, unsolved, early
        if fatal:  # then what it showed made nothing: 'You focus on the drain' ends a task, however worded
            eff = {**eff, "made": {}, "moved": set(), "advanced": step["gain"] > 0}
        action = called(step["action"], names_of)  # 'open valve 3 (coolant)': one per thing so called
        key = unnumbered(action)
        rec = m.setdefault(key, {"eg": "", "counts": {}, "made": {}, "frames": {}})
        rec["eg"] = action
        rec["tried_goals"] = sorted(set(rec.get("tried_goals", [])) | {this_goal})[:8]
        at = rec.setdefault("tried_at", {})  # per goal, the furthest stage it was tried at
        at[this_goal] = max(at.get(this_goal, 0), stage)
        rec["tried_at"] = dict(list(at.items())[-8:])
        c = rec["counts"]
        for name, hit in (("n", 1), ("nothing", eff["nothing"]), ("up", eff["advanced"]), ("fatal", fatal)):
            bump(c, name, 1 if hit else 0)
        bump(c, "gain", max(step["gain"], 0.0))
        bump(c, "pos", i / max(len(steps) - 1, 1))
        for w, f in eff["made"].items():
            bump(rec["made"], w)
            rec["frames"][w] = f or rec["frames"].get(w, "")
            bump(makers.setdefault(w, {}), key)
        rec["uses"] = eff["uses"] or rec.get("uses", [])
        rec["eats"] = sorted(set(rec.get("eats", [])) | set(eff["eats"]))[:8]
        rec["swaps"] = sorted(set(rec.get("swaps", [])) | set(eff["swaps"]))[:8]
        rec["drops"] = sorted(set(rec.get("drops", [])) | set(eff["drops"]))[:8]
        rec["made"] = capped(rec["made"], 5)
        if eff["nothing"]:  # the situations it did nothing in (what the fields named before it)
            seen = " ".join(sorted(value_words(step["obs_before"])))[:300]
            rec["idle_in"] = sorted(set(rec.get("idle_in", [])) | {seen})[:4]
            rec["idle_goals"] = sorted(set(rec.get("idle_goals", [])) | {this_goal})[:4]
            rec["idle_here"] = [*[x for x in rec.get("idle_here", []) if x != here], here][-6:]
            rec["idle_as"] = [*rec.get("idle_as", []), thing_state(step["before"], step["action"])][-6:]
            bump(rec.setdefault("replies", {}), reply_of(step))
            rec["replies"] = capped(rec["replies"], 3)
        key_in = "end_in" if fatal else "safe_in"  # the situations it ended a task in, and did not
        note_order(rec, key, risen, done, step["obs_before"], fatal, step["gain"] > 0)  # what came before it
        note_done(rec, key, done, step, moving)
        rec[key_in] = [*[x for x in rec.get(key_in, []) if x != here], here][-6:]
        if eff["advanced"]:  # the situation it advanced in: with those it did nothing in, its conditions
            seen = sorted(value_words(step["obs_before"]))[:80]
            rec["up_in"] = [*[x for x in rec.get("up_in", []) if x != seen], seen][-4:]
        after = "up_after" if eff["advanced"] else "fail_after" if eff["nothing"] or fatal else ""
        if after:  # what had quietly been done before it: with its failures, what it needs first
            rec[after] = [*rec.get(after, [])[-3:], sorted(set(quiet[-12:]) - {key})]
        if eff["nothing"] and not fatal and key not in quiet:
            quiet.append(key)
        if step["gain"] < 0 and risen:  # a rise undone: its own (a switch flipped back), else the last
            bump(c, "undid", int(key in risen))
            risen.remove(key if key in risen else risen[-1])
        if step["gain"] > 0:  # what raised the score for this very goal, in order (a sub-goal reached)
            rec["first_rise"] = min(rec.get("first_rise", stage), stage)
            risen = [k for k in risen if k != key] + [key]
            stage += 1
            ups = memory.setdefault("effect_goal_ups", {}).setdefault(this_goal, [])
            if key not in ups:
                ups.append(key)
            del ups[:-12]
        where, like, moved = {}, step, eff["moved"]  # where it finished the task or would have; ``like``:
        if step["ended"] and episode.get("success"):  # the step on the goal's thing
            where = finish_where(step, low)
        elif not (step["error"] or step["ended"] or eff["nothing"]):
            where, rebound = stand_in(step, low, frames, names, form_words)
            if rebound:
                like, moved = rebound[0], {rebound[1]}
        form = _goal_form(like, gw, names, moved, where) if eff["advanced"] or like is not step else None
        if form:
            key_f = _form_key(form, gw, names)
            rec_f = forms.setdefault(key_f, {"eg": "", "n": 0})
            if where:  # (the one without dropped things anywhere: its situation holds on the way)
                bare = _form_key(_goal_form(like, gw, names, moved), gw, names)
                rec_f["bare"] = bare if bare != key_f else ""
            rec_f["eg"], rec_f["n"] = form[0], rec_f["n"] + (key_f not in counted)  # once per episode
            counted.add(key_f)
    reached = memory.setdefault("effect_reached", {})  # per goal, the furthest stage an episode reached
    reached[this_goal] = max(reached.get(this_goal, 0), stage)
    cap = store.get("cap", 200)
    for w in list(makers):
        makers[w] = capped(makers[w], 3)
    if len(m) > cap:  # the least tried go first
        keep = sorted(m, key=lambda k: -m[k]["counts"].get("n", 0))[:cap]
        memory["effects"] = {k: m[k] for k in keep}
    memory["effect_places"] = places[-cap:]
    memory["effect_listed"] = dict(list(listed.items())[-cap:])
    memory["effect_later"] = dict(list(later.items())[-cap:])
    memory["effect_makers"] = capped_by(makers, cap, lambda v: sum(v.values()))
    memory["effect_forms"] = capped_by(forms, cap, lambda v: v["n"])
    ups = memory.get("effect_goal_ups") or {}
    memory["effect_goal_ups"] = {k: ups[k] for k in list(ups)[-cap:]}
    memory["effect_reached"] = {k: reached[k] for k in list(reached)[-cap:]}
    print("effects:", len(steps), "steps;", len(memory["effects"]), "actions,", len(makers), "words made")

def retrieve_advances(memory, task, tools, p):
    """From ``effects``: rules 'in a situation like S, A advanced the task' (each form of a step that
    raised the score or newly showed a goal word, filled with this goal's words: 'See egg: take egg 2
    from shelf 1.'), and 'Avoid: A.' for each action that never did anything (failed, or changed nothing;
    the agent's matcher lowers it) in ``p['avoid']`` situations or more (what the fields named before it;
    0: never), under this goal or under two goals or more: in fewer, it may only have come out of order
    ('Avoid: A when W.' where the short fields held W each time it did nothing and not in every situation
    seen: 'Avoid: filter when clear' leaves a cloudy sample's filter to be tried; where its situations share
    no such word but each has one, a line per word: 'Avoid: put leek in pot when whole', '… when washed'
    leave a chopped leek's put to be tried); for each action that,
    every time it was taken, ended its episode unsolved before the step limit (a wrong answer, a fatal
    move) and never advanced a task: one such ending is enough; 'Avoid: A before B.' while it may need a
    riser B first (``needs_first``; ``p['before']``), also where A advanced other tasks, and for each S that
    may have spoiled it after B (``spoilers_of``) 'Avoid: S.' (a state S left) or 'Avoid: S before A.'.
    'Once only: K ….' for each kind K of action whose own retake undid the score it raised (``undoers``).
    Actions that did nothing are not avoided while no action ever advanced a task and they are most of
    those offered at tasks' starts: then 'did nothing' cannot tell what to leave out (observing, waiting).
    Forms need ``p['min_support']`` episodes' worth of support (decayed with the store)."""
    gw = goal_words(task.get("goal", ""))
    out = []
    forms = memory.get("effect_forms") or {}
    finished_as = {rec.get("bare") for rec in forms.values()}
    for key, rec in sorted(forms.items(), key=lambda kv: -kv[1]["n"]):
        kind, _, cond = json.loads(key)
        if not same_kind(kind, gw) or key in finished_as:
            continue
        cond, action = filled(cond, gw), filled(rec["eg"], gw)
        named = [gw[i] for i in slots_in(rec["eg"]) if i < len(gw)]
        form_only = all(in_every_goal(memory, "effect_goals", w) for w in named)  # the task's form
        if _enough(rec["n"], p) and cond and action and named and not form_only:
            for place in memory.get("effect_places") or [] if "{@}" in action else [""]:
                out.append({"kind": "rule", "cond": [cond], "action": action.replace("{@}", place)})
            if '"' in cond and "{@}" not in action:  # only where it finishes: not on the way
                out.append(
                    {"kind": "avoid", "action": action + " unless " + " ".join(re.findall('"[^"]+"', cond))}
                )
    situations = p.get("avoid", 3)
    if situations:
        effects = memory.get("effects") or {}
        fatal, idle = [], []
        plain = plain_replies(effects)
        everywhere = seen_everywhere(effects)
        for rec in effects.values():
            c = rec.get("counts") or {}
            tried = c.get("n", 0)
            varied = (
                len(rec.get("idle_in", [])) >= situations
                and _idle_for(rec, gw)
                and says_nothing_new(rec, plain)
            )
            first = needs_first(rec, effects) if p.get("before", True) else ""
            if ends_tasks(rec) or (first and not ending_when(rec, effects)):
                fatal.append(rec["eg"] + (" before " + first if first else ""))
                spoiled = spoilers_of(rec, effects) if first else []  # a state it left: avoided outright
                fatal += [s + ("" if sets else " before " + rec["eg"]) for s, sets in spoiled]
            elif when := ending_when(rec, effects):
                fatal += [rec["eg"] + " when " + w for w in when]  # each word alone: any of them ends it
            elif varied and c.get("nothing", 0) >= tried - 1e-6:
                where = idle_when(rec, everywhere)
                states = [] if where else idle_states(rec)  # any of them: a line each
                idle += [rec["eg"] + " when " + w for w in states] or [
                    rec["eg"] + (" when " + " ".join(where) if where else "")
                ]
        listed = len(memory.get("effect_listed") or {})
        advanced = any((rec.get("counts") or {}).get("up", 0) for rec in effects.values())
        if not advanced and listed and len(idle) * 2 > listed:  # 'nothing' is all there is to see yet
            idle = []
        out += [{"kind": "avoid", "action": action} for action in fatal + idle]
        for head in fatal_heads(effects, p.get("fatal_kinds", 3)):
            out.append({"kind": "avoid", "action": head + " … unless advised"})
        out += [
            {"kind": "untried", "title": "Once only", "steps": once} for once in [undoers(effects)] if once
        ]
    return out

def _idle_for(rec, gw):
    """Whether what an action did nothing under holds for this goal: it did nothing while pursuing this
    very goal, or under two goals or more. Under one other goal it may only have been out of that goal's
    order (a step another goal needs first), and avoiding it would stop the walks that find its use."""
    goals = rec.get("idle_goals")
    return not goals or _goal_of(gw) in goals or len(goals) >= 2

def _ticking(steps):
    """The short values (``leaves``) that changed at every step that showed them before and after, two or
    more, taken by two kinds of action or more: a count of steps left, a clock. A reading that appears or
    goes (a panel lit, an episode ended) has not changed by that."""
    shown, changed, kinds = {}, {}, {}
    for step in steps:
        before, after = leaves(step["obs_before"]), leaves(step["obs_after"])
        for k in set(before) & set(after):
            shown[k] = shown.get(k, 0) + 1
            changed[k] = changed.get(k, 0) + (str(before[k]) != str(after[k]))
            kinds.setdefault(k, set()).add(unnumbered(step["action"]))
    return {k for k, n in shown.items() if n >= 2 and changed[k] == n and len(kinds[k]) >= 2}

def encode_setters(memory, episode, tools, p, store):
    """Per field of the observation (``leaves``, less the ``_ticking`` ones that change at every step: the
    steps left), each kind of action whose step changed it: how often (``n``), how often the
    value it left was its own number (``own``), and the value each concrete action last left it at
    (``values``). Counts decay with the store; the fields changed most often are kept, up to its cap."""
    table = memory.setdefault("setters", {})
    factor = store_factor(store)
    for kinds in table.values():
        for rec in kinds.values():
            rec["n"], rec["own"] = round(rec["n"] * factor, 4), round(rec["own"] * factor, 4)
    steps = scored_steps(episode)
    moving = _ticking(steps)
    for step in steps:
        before, after = leaves(step["obs_before"]), leaves(step["obs_after"])
        changed = [k for k in after if k in before and k not in moving and str(before[k]) != str(after[k])]
        numbers = NUMBER.findall(step["action"])
        for field in changed:
            kind = table.setdefault(field, {}).setdefault(
                unnumbered(step["action"]), {"n": 0, "own": 0, "values": {}}
            )
            kind["n"] += 1
            kind["own"] += len(numbers) == 1 and numbers[0] == str(after[field])
            kind["values"].pop(step["action"], None)  # the latest last
            kind["values"][step["action"]] = str(after[field])
            kind["values"] = dict(list(kind["values"].items())[-12:])
    kept = {f: {k: r for k, r in kinds.items() if r["n"] >= 0.05} for f, kinds in table.items()}
    memory["setters"] = capped_by(
        {f: k for f, k in kept.items() if k}, store.get("cap", 200), lambda k: sum(r["n"] for r in k.values())
    )
    print("setters:", len(memory["setters"]), "fields set by an action")

def _setter(kinds, least):
    """The kind of action that set the field most often (and at least ``least`` times), or None."""
    kind, rec = max(kinds.items(), key=lambda kv: kv[1]["n"], default=(None, None))
    return (kind, rec) if rec and rec["n"] >= least - 1e-9 else (None, None)

def _goal_number(goal, name):
    """The number the goal gives after the field's name ('channel 5' -> '5'), or ''."""
    said = [w.lower() for w in words(goal)]
    return next((said[i + 1] for i, w in enumerate(said[:-1]) if w == name and said[i + 1].isdigit()), "")

def _wanted(kind, rec, goal, name, listed):
    """The actions that set the field to what ``goal`` wants: the one seen to leave the value the goal
    names; the kind on the goal's number where every set left the action's own number; else the listed
    actions of the kind that were never seen to leave the field at another value."""
    said = {w.lower() for w in words(goal)}
    number = _goal_number(goal, name)
    if number and rec["own"] >= rec["n"] - 1e-9 and kind.count("#") == 1:
        return [kind.replace("#", number)]
    named = [a for a, v in rec["values"].items() if words(v) and {w.lower() for w in words(v)} <= said]
    if named:
        return named[-1:]
    return [a for a in listed if unnumbered(a) == kind and a not in rec["values"]]

def retrieve_setters(memory, task, tools, p):
    """For each field whose name the goal says ('band', 'floor'), a rule of the actions that set it to what
    the goal wants (``_wanted``), under the field's name: it applies while the observation shows the
    field (a reading shown only where it can be set). Fields set fewer than ``p['min_sets']`` times
    give nothing."""
    goal = task.get("goal", "")
    said = {w.lower() for w in words(goal)}
    listed = [str(a) for a in task.get("actions") or []]
    out = []
    for field, kinds in (memory.get("setters") or {}).items():
        name = field.split()[-1].lower()
        kind, rec = _setter(kinds, p.get("min_sets", 1))
        if kind is None or name not in said:
            continue
        actions = _wanted(kind, rec, goal, name, listed)
        if actions:
            # " or ": a choice, never read as a plan of steps to walk while the field is not shown
            out.append({"kind": "rule", "cond": [name], "action": " or ".join(actions)})
    return out

def stem(word):
    """A word without its plural ending, lower-case ('potatoes' -> 'potato', 'berries' -> 'berry')."""
    w = word.lower()
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith(("oes", "ses", "xes", "ches", "shes")):
        return w[:-2]
    return w[:-1] if w.endswith("s") and not w.endswith("ss") and len(w) > 3 else w

def goal_things(memory, gw):
    """The goal's words that may name what it acts on, stemmed: no number, none of every goal (its form)."""
    return {stem(w) for w in gw if not w.isdigit() and not in_every_goal(memory, "effect_goals", w)}

def names_thing(action, things):
    """Whether ``action`` names one of ``things`` (stemmed words) after its first word."""
    return any(stem(w) in things for w in words(action)[1:])

def every_instance(steps, listed):
    """Each step as every action of its kind (instance numbers aside) listed at this task's start, in their
    order ('go to shelf 1', 'go to shelf 2' for 'go to shelf 3'), else itself: the kinds are learned, the
    instances are this task's."""
    listed = [a for a in listed or [] if isinstance(a, str)]
    out = []
    for step in steps:
        same = [a for a in listed if unnumbered(a) == unnumbered(step)] or [step]
        out += [a for a in same if a not in out]
    return out

def retrieve_untried(memory, task, tools, p):
    """From ``effects``: the actions the agent was shown at the start of earlier tasks (with ``later``,
    then those a step of them brought into the list), never taken under this goal at the furthest stage
    its games reached (a stage: the score rose once more), and that never raised its score, or only ever
    did nothing in situations unlike this task's start (``idle_elsewhere``: untried here). Those naming
    the goal's things (``goal_things``) first; of each, those listed at a start first, then fewest tries
    (under any goal; none for those untried here), then in the order they were listed. None that ended a
    task, nor one that begins with the first word of actions that end a task (``ending_words``): what
    ends a task is not explored, unless it may only need another action first (``needs_first``): then it
    is offered first, with 'Avoid: A before B.', which passes it over until B is done.
    With ``sweep``, the actions listed at a start that were tried under this goal follow, fewest tries
    first, up to ``max_steps`` in all: a search whose thing lies elsewhere in each task looks everywhere
    once. Each kind is then offered as every instance of it listed at this task's start
    (``every_instance``), up to twice ``max_steps``. After them, up to three actions tried before that
    never advanced a task and answered otherwise than their kind does when nothing happens (they reacted
    to something: a condition met by then may let them work).
    A plan the agent's matcher reads after every other plan: where nothing learned names a step, the next
    action not yet tried and listed now, not the first listed (a small model's habit). Collection that
    follows it covers what the listings offer; a deployment task whose goal no collection reached starts
    where earlier tasks did not look. Needs an environment that lists its actions (the task view's
    ``actions``); three or more actions, or nothing (a shorter list is not read as a plan)."""
    gw = goal_words(task.get("goal", ""))
    this = unnumbered(goal_key(gw))
    effects = memory.get("effects") or {}
    ending = ending_words(effects)
    furthest = (memory.get("effect_reached") or {}).get(this, 0)
    advanced = set((memory.get("effect_goal_ups") or {}).get(this, []))
    listed = dict(memory.get("effect_listed") or {})
    starts = len(listed)  # those listed at a task's start come before those a step brought in
    for key, shown in (memory.get("effect_later") or {} if p.get("later") else {}).items():
        listed.setdefault(key, shown)
    things = goal_things(memory, gw) if p.get("goal_first", True) else set()
    everywhere, now = seen_everywhere(effects), here_words(task.get("observation") or {})
    ranked, first, tried = [], {}, []  # first: what an action that ended tasks may need first
    for i, (key, shown) in enumerate(listed.items()):
        rec = effects.get(key)
        first[shown] = needs_first(rec, effects) if rec else ""
        elsewhere = bool(rec) and idle_elsewhere(rec, everywhere, now)  # untried in a situation like this
        if (
            key in advanced
            or first_word(shown) in ending
            or (rec and ends_tasks(rec) and not first[shown])  # avoided (``advances``) under any goal
        ):
            continue
        tries = 0 if elsewhere else (rec or {}).get("counts", {}).get("n", 0)
        if rec and not elsewhere and tried_as_far(rec, this, furthest):
            if i < starts:  # tried under this goal: where a sweep looks again, fewest tries first
                tried.append((tries, i, shown))
            continue
        ranked.append(
            (-1 if first[shown] else 0, not names_thing(shown, things), i >= starts, tries, i, shown)
        )
    steps = [r[-1] for r in sorted(ranked)][: p.get("max_steps", 12)]
    if p.get("sweep"):
        steps += [t[-1] for t in sorted(tried)][: p.get("max_steps", 12) - len(steps)]
    steps = every_instance(steps, task.get("actions"))[: 2 * p.get("max_steps", 12)]
    plain = plain_replies(effects)
    retry = [  # what answered otherwise than doing nothing: again, after the others (a condition met since)
        rec["eg"]
        for key, rec in effects.items()
        if key in listed and key not in advanced and not ends_tasks(rec) and not says_nothing_new(rec, plain)
    ][:3]
    steps += [eg for eg in retry if eg not in steps]
    if len(steps) < 3:
        return []
    return [{"kind": "untried", "title": "Not tried yet", "steps": steps}] + [
        {"kind": "avoid", "action": shown + " before " + first[shown]} for shown in steps if first.get(shown)
    ]


def update(memory, episode, tools):
    try:
        encode_effects(memory, episode, tools, {}, STORE)
    except Exception as exc:
        print("encode part effects failed:", repr(exc)[:200])
    try:
        encode_setters(memory, episode, tools, {}, STORE)
    except Exception as exc:
        print("encode part setters failed:", repr(exc)[:200])
    try:
        encode_transitions(memory, episode, tools, {'state_key': 'power', 'neighbors_key': ''}, STORE)
    except Exception as exc:
        print("encode part transitions failed:", repr(exc)[:200])
    try:
        encode_sightings(memory, episode, tools, {'goal_only': False, 'state_key': 'power'}, STORE)
    except Exception as exc:
        print("encode part sightings failed:", repr(exc)[:200])


def recall(memory, task, tools):
    items = []
    try:
        items += [{**i, 'source': 0} for i in retrieve_route(memory, task, tools, {'state_key': 'power', 'neighbors_key': '', 'context': 'goal_items', 'towards': 'sighted'})]
    except Exception as exc:
        print("retrieve part route failed:", repr(exc)[:200])
    try:
        items += [{**i, 'source': 1} for i in retrieve_setters(memory, task, tools, {'min_sets': 1})]
    except Exception as exc:
        print("retrieve part setters failed:", repr(exc)[:200])
    try:
        items += [{**i, 'source': 2} for i in retrieve_untried(memory, task, tools, {'max_steps': 20, 'goal_first': True, 'later': True, 'sweep': True})]
    except Exception as exc:
        print("retrieve part untried failed:", repr(exc)[:200])
    try:
        items += [{**i, 'source': 3} for i in retrieve_advances(memory, task, tools, {'min_support': 1, 'avoid': 3, 'fatal_kinds': 3, 'before': True})]
    except Exception as exc:
        print("retrieve part advances failed:", repr(exc)[:200])
    return render_lines(items, {'order': 'notes,plans,rules', 'style': 'split', 'max_lines': 10})
