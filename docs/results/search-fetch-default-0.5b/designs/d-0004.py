"""Memory design compiled from genome 'recombine-d-0004' (ATLAS genome v1, key 9597cd9ada53).

  encode   effects(): what each action did, read from the result text and the score alone: what it made, used, used up and replaced, whether it did nothing or advanced the task (instance numbers abstracted), which actions made each word, and when it works: what the fields held when it advanced, did nothing or ended a task
  encode   transitions(state_key='location'): the map of observed states: which action led from one state to the next, states seen nearby, and the moves each state listed
  store    {'cap': 1000, 'decay': 0.9}: keep the last N sequences (0: all); at most this many keys per counter; counts are multiplied by this before each episode adds its own
  retrieve untried(max_steps=20, goal_first=False, sweep=True): a plan after every other: the actions listed at earlier tasks' start (or brought into the list by a step), that were never taken under this goal (or only ever did nothing where the fields held what they do not hold now), none that ended a task unless it may need another action first (then after it); those on the goal's own things first, then fewest tries; where nothing learned names a step, the agent tries what it has not instead of the first listed
  retrieve recipe(depth=1, max_steps=8, min_support=2): a plan that makes what the goal names: for each goal word an action made, the actions that make its inputs first (recursively), then that action; before the steps that raised this goal's score, what makes their conditions (a field word each worked under) and the quiet steps that came before each success
  retrieve explore(): a walk from the start through every known state, then out by the nearest untried move (plan; the rules when no walk starts there), or rules toward the map's edge
  retrieve kinds(): rules for what no game showed yet: each kind of listed action on a thing (the thing as a slot: 'take {}'), on the goal's things the text frames as it frames that kind's things, or that no text framed yet ('lying here lamp: take lamp'); none of a kind that ends tasks
  render   lines(style='split', max_lines=20): rules as '<situation>: <action>', plans as one line of actions, notes as they are; a line budget shared among the retrieve parts

Edit the genome and compile again (`atlas design compile`), or edit this code like any design.
"""

import json
import re

GENOME = {'version': 1,
 'name': 'recombine-d-0004',
 'encode': [{'part': 'effects', 'params': {}},
            {'part': 'transitions', 'params': {'state_key': 'location', 'neighbors_key': ''}}],
 'store': {'recent': 0, 'cap': 1000, 'decay': 0.9},
 'retrieve': [{'part': 'untried',
               'params': {'max_steps': 20, 'goal_first': False, 'later': False, 'sweep': True}},
              {'part': 'recipe', 'params': {'depth': 1, 'max_steps': 8, 'min_support': 2}},
              {'part': 'explore', 'params': {'form': 'plan', 'max_steps': 30}},
              {'part': 'kinds', 'params': {'max_rules': 8}}],
 'render': {'part': 'lines',
            'params': {'order': 'rules,plans,notes', 'style': 'split', 'max_lines': 20}}}
STORE = {'recent': 0, 'cap': 1000, 'decay': 0.9}

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

def goal_key(gw):
    """The goal itself, as sequences are filed under it: its words, lower-case."""
    return " ".join(w.lower() for w in gw)

def goal_kind(gw, used):
    """The goal's shape: its words with the slot positions in ``used`` as '*'."""
    return " ".join("*" if i in used else w.lower() for i, w in enumerate(gw))

def slots_in(template):
    return {int(i) for i in SLOT.findall(template)}

def count_goal(memory, key, gw):
    """Count one more episode and the words of its goal under ``memory[key]``."""
    goals = memory.setdefault(key, {"episodes": 0, "words": {}})
    goals["episodes"] += 1
    for w in {w.lower() for w in gw}:
        bump(goals["words"], w)

def in_every_goal(memory, key, word, goal=()):
    """The word was in the goal of every episode counted under ``memory[key]`` (two or more, and
    the goals differ in some word, ``goal``'s words, this task's, among them): the task's form ('find',
    'take'), not a thing it names. Where every earlier goal was one goal, this one, naming a thing none
    named, tells the form from the thing."""
    goals = memory.get(key) or {}
    n, counts = goals.get("episodes", 0), goals.get("words") or {}
    varied = any(c < n for c in counts.values()) or any(w.lower() not in counts for w in goal)
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

def needs_of(rec):
    """The conditions of an action: words the observation's fields held every time it advanced a task and
    did not hold in some situation where it did nothing ('warm' for a reagent that sank undissolved while
    the sample was cold and turned it blue when warm)."""
    ups = [set(x) for x in rec.get("up_in", [])]
    idle_in = [set(x.split()) for x in rec.get("idle_in", [])]
    if not ups or not idle_in:
        return []
    held = set.intersection(*ups)
    return sorted(w for w in held if any(w not in x for x in idle_in))

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

def primers_of(rec, effects):
    """Actions that changed nothing to be seen yet came before the action every time it advanced a task, and
    not before some time it failed: a condition no field shows ('the catalyst mixes in without any visible
    change', and only after it does the next reagent take). Their example forms; none when more than two
    fit (the episodes have not told them apart)."""
    ups = [set(x) for x in rec.get("up_after", [])]
    fails = [set(x) for x in rec.get("fail_after", [])]
    if not ups or not fails:
        return []
    held = set.intersection(*ups)
    found = [effects[k]["eg"] for k in sorted(held) if k in effects and any(k not in x for x in fails)]
    return found if len(found) <= 2 else []

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

def ending_words(effects):
    """First words of actions that end a task: one so begun ended every episode it was taken in, unsolved,
    and every other one so begun did that too or advanced a task ('focus on' once focusing on a drain failed
    one, and only focusing on the right thing helped). A first word some action did nothing under is not one
    ('add' when adding one reagent ruined a sample and adding another did nothing), unless the environment
    refused that action every time (``refused``: a command it did not take there says nothing of what the
    kind does), nor one whose only endings may have needed another action first (``needs_first``)."""
    return {
        head
        for head, recs in by_kind(effects).items()
        if any(ends_tasks(r) and not needs_first(r, effects) for r in recs)
        and all(ends_tasks(r) or (r.get("counts") or {}).get("up", 0) or refused(r) for r in recs)
    }

def refused(rec):
    """The environment refused the action every time it was taken (an error reply, nothing done)."""
    c = rec.get("counts") or {}
    return c.get("n", 0) > 0 and c.get("refused", 0) >= c["n"] - 1e-6

def tried_as_far(rec, goal, furthest):
    """Whether an action was tried under ``goal`` as far on as that goal's games ever got: one tried only
    before a stage its goal reached later may be the next stage's step (a switch that refused before its
    turn). Kept before stages were: tried under the goal at all; before goals were: tried."""
    at = rec.get("tried_at")
    if at is None:
        return goal in rec.get("tried_goals", [goal])
    return goal in at and at[goal] >= furthest

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
        refused = bool(step["error"]) and not fatal  # the environment did not take it: it did nothing there
        for name, hit in (
            ("n", 1),
            ("nothing", eff["nothing"]),
            ("up", eff["advanced"]),
            ("fatal", fatal),
            ("refused", refused),
        ):
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

def _maker(memory, word, stack, p):
    """The action that most often made ``word`` (not one on ``stack``), with enough support."""
    effects = memory.get("effects") or {}
    ranked = sorted(
        (memory.get("effect_makers") or {}).get(word, {}).items(),
        key=lambda kv: (-kv[1], len(effects.get(kv[0], {}).get("uses", []))),
    )
    for key, n in ranked:
        if key in effects and key not in stack and _enough(n, p):
            return key
    return ""

def _apply(rec, have, made_by):
    """``have`` after an action: what it made added, what it used up or a field lost removed, and where it
    replaced a word in a frame (a new place), everything made in that frame before."""
    for frame in rec.get("swaps", []):
        for w in [w for w in have if made_by.get(w) == frame]:
            have.discard(w)
    have.difference_update(rec.get("eats", []))
    have.difference_update(w for w in rec.get("drops", []) if w not in rec.get("made", {}))
    for w in rec.get("made", {}):
        have.add(w)
        made_by[w] = rec.get("frames", {}).get(w, "")

def _make(memory, word, have, made_by, plan, stack, p):
    """Append to ``plan`` the actions that make ``word``: its inputs first (recursively, up to
    ``p['depth']`` levels), then its maker; nothing when it is had or no maker is known."""
    if word in have or len(stack) >= p.get("depth", 6) or len(plan) >= p.get("max_steps", 20):
        return
    key = _maker(memory, word, stack, p)
    if not key:
        return
    rec = memory["effects"][key]
    for _ in range(2):  # again for an input a later one's making used up
        for w in [*rec.get("uses", []), *needs_of(rec)]:
            _make(memory, w, have, made_by, plan, [*stack, key], p)
    if not plan or plan[-1] != rec["eg"]:
        plan.append(rec["eg"])
    _apply(rec, have, made_by)

def retrieve_recipe(memory, task, tools, p):
    """From ``effects``: a plan that makes what the goal names, inputs first. For each goal word some
    action was seen to make (in the order such steps came in episodes), the action that made it, after
    the actions that make its inputs (the words it names that the text showed before it), recursively:
    'Steps in order: get x, get y, join x y.' What the task's first text already frames
    as made is not made again; what an action used up is made again where needed. Instance numbers are
    those last seen (the agent's matcher re-binds them where one listed action fits). Before those, the
    actions that raised the score in earlier episodes of this very goal (its sub-goals), each after what
    makes its inputs: progress toward inputs the goal never names."""
    gw = goal_words(task.get("goal", ""))
    effects = memory.get("effects") or {}
    wanted = []
    for w in [w.lower() for w in gw]:
        key = _maker(memory, w, [], p)
        if key:
            c = effects[key].get("counts") or {}
            wanted.append((c.get("pos", 0.0) / max(c.get("n", 1), 1e-9), w))
    frames = {f for rec in effects.values() for f in (rec.get("frames") or {}).values() if f}
    first = framed_pairs(task.get("observation_text") or "", value_words(task.get("observation") or {}))
    have = {w for f, w in first if f in frames and w != f} | here_words(task.get("observation") or {})
    made_by, plan = {}, []
    for key in (memory.get("effect_goal_ups") or {}).get(_goal_of(gw), []):  # sub-goals of this goal
        rec = effects.get(key)
        if rec:
            for w in [*rec.get("uses", []), *needs_of(rec)]:
                _make(memory, w, have, made_by, plan, [key], p)
            plan += [eg for eg in primers_of(rec, effects) if eg not in plan]
            if not plan or plan[-1] != rec["eg"]:
                plan.append(rec["eg"])
            _apply(rec, have, made_by)
    for _, w in sorted(wanted):
        _make(memory, w, have, made_by, plan, [], p)
    plan = plan[: p.get("max_steps", 20)]
    return [{"kind": "plan", "title": "Steps in order", "steps": plan}] if plan else []

def stem(word):
    """A word without its plural ending, lower-case ('potatoes' -> 'potato', 'berries' -> 'berry')."""
    w = word.lower()
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith(("oes", "ses", "xes", "ches", "shes")):
        return w[:-2]
    return w[:-1] if w.endswith("s") and not w.endswith("ss") and len(w) > 3 else w

def thing_frames(memory, text, names):
    """``{word: {frame: count}}`` for the things named so far: how the effects saw each made thing framed
    (a frame: the first word of its sentence that names nothing, 'lying' of 'Lying here: lamp.'; not by an
    action on that very thing: 'take lamp' leaves it held, which is not where a lamp is taken from), and
    how this task's first text frames the things it names (counted above the rest)."""
    out = {}
    for rec in (memory.get("effects") or {}).values():
        own = {x.lower() for x in words(rec.get("eg", ""))}  # what it did to its own thing: an after-state
        for w, f in (rec.get("frames") or {}).items():
            if f and f != w and w not in own:
                bump(out.setdefault(w, {}), f)
    for f, w in framed_pairs(text, names):
        if f and f != w and w in names:
            bump(out.setdefault(w, {}), f, 100)
    return out

def _frame(counts):
    return max(sorted(counts), key=lambda f: counts[f]) if counts else ""

def slot_frames(memory, gw, frames):
    """Per word of the goal, the frames the words in its place in earlier goals of its length were seen
    under: 'lamp' of 'bring lamp hall' was seen lying somewhere, so 'rope' of 'Bring the rope
    to the hall' is looked for there too."""
    out = [set() for _ in gw]
    for goal in memory.get("effect_reached") or {}:
        said = goal.split(" ")
        if len(said) == len(gw):
            for i, w in enumerate(said):
                out[i] |= set(frames.get(w, {}))
    return out

def action_kinds(labels, frames):
    """``{kind: frame}``: each label with one of its things (a word after its first that has a frame) as
    '{}' ('take {}'), framed as most of its things were ('lying': a thing taken is then also held); a word
    numbered as an instance stays a thing ('take {} 2 from shelf 1'), and kinds that differ in their
    numbers only are one."""
    out, by = {}, {}
    for label in labels:
        said = words(label)
        head = said[0].lower() if said else ""
        for w in said[1:]:
            low = w.lower()
            if low in STOP or w.isdigit() or low == head or not frames.get(low):
                continue
            kind = " ".join("{}" if x == w else x for x in said)
            out.setdefault(unnumbered(kind), kind)  # 'go to {} 1' and 'go to {} 2': one kind
            for f, n in frames[low].items():
                bump(by.setdefault(unnumbered(kind), {}), f, n)
    return {kind: _frame(by[key]) for key, kind in out.items()}

def retrieve_kinds(memory, task, tools, p):
    """Rules 'F g: K g' for each kind K of listed action (this task's list and the lists earlier tasks
    started with) whose things the text frames as F, and each goal word g framed so, or never framed yet
    and in a goal's place whose words were (or no word of which was ever framed, where no earlier goal had
    it: a word earlier games sought and no text ever framed is no thing to act on); a word of every goal is
    the task's form, not a thing. None of a kind whose first word ends tasks, nor an action that ended its
    tasks or only ever did nothing. A goal word stands for the shown name it is the plural of. Where this
    task lists a kind on one goal word, the kind is not filled with the goal's other words. Up to
    ``p['max_rules']``, those on things already framed first."""
    gw = goal_words(task.get("goal", ""))
    text = task.get("observation_text") or ""
    names = value_words(task.get("observation") or {}) | set(memory.get("effect_makers") or {})
    effects = memory.get("effects") or {}
    frames = thing_frames(memory, text, names)
    labels = [*(task.get("actions") or []), *(memory.get("effect_listed") or {}).values()]
    kinds = action_kinds([str(x).split(" (")[0] for x in labels], frames)
    ending = ending_words(effects)
    places = slot_frames(memory, gw, frames)
    shown = {stem(w): w for w in sorted(names | set(frames) | {x.lower() for a in labels for x in words(a)})}
    listed_now = {unnumbered(str(a).split(" (")[0]).lower() for a in task.get("actions") or []}
    sought = set((memory.get("effect_goals") or {}).get("words") or {})  # words of earlier goals
    rules = []
    for kind, frame in kinds.items():
        if first_word(kind) in ending:
            continue
        on = [shown.get(stem(g), g) if g.lower() not in frames else g for g in gw]  # 'eggs': 'egg 3' is shown
        lists = [unnumbered(kind.replace("{}", g)).lower() in listed_now for g in on]
        for i, g in enumerate(on):
            low = g.lower()
            if (
                low in STOP
                or g.isdigit()
                or low == first_word(kind)
                or in_every_goal(memory, "effect_goals", g)
                or (any(lists) and not lists[i])  # the task lists this kind on a goal's thing: that one
            ):
                continue
            known = set(frames.get(low, {})) or places[i]
            if (known and frame not in known) or (not known and low in sought):
                continue
            action = kind.replace("{}", g)
            rec = effects.get(unnumbered(action)) or {}
            c = rec.get("counts") or {}
            if rec and (ends_tasks(rec) or (c.get("nothing", 0) >= c.get("n", 0) > 0 and not c.get("up"))):
                continue
            rules.append(
                (low not in frames, len(rules), {"kind": "rule", "cond": [f"{frame} {g}"], "action": action})
            )
    return [r for _, _, r in sorted(rules, key=lambda x: x[:2])][: p.get("max_rules", 8)]

def goal_things(memory, gw):
    """The goal's words that may name what it acts on, stemmed: no number, none of every goal (its form)."""
    return {stem(w) for w in gw if not w.isdigit() and not in_every_goal(memory, "effect_goals", w)}

def names_thing(action, things):
    """Whether ``action`` names one of ``things`` (stemmed words) after its first word."""
    return any(stem(w) in things for w in words(action)[1:])

def every_instance(steps, listed):
    """Each step as every action of its kind (instance numbers aside) listed at this task's start, else
    itself. The kinds are learned, the instances are this task's. Numbered kinds are taken a round at a
    time, in the places their steps held: the first of each, then the second of each ('go to shelf 1',
    'go to desk 4', 'go to shelf 2' for 'go to shelf 3', 'go to desk 1'), so a game that follows the plan
    tries every kind before a kind's second instance; what has no number keeps its place."""
    listed = [a for a in listed or [] if isinstance(a, str)]
    out, groups, seen = [], [], set()
    for step in steps:
        same = [a for a in listed if unnumbered(a) == unnumbered(step)] or [step]
        fresh = [a for a in same if a not in seen]
        seen.update(fresh)
        numbered = [a for a in fresh if NUMBER.search(a)]
        groups += [numbered] if numbered else []
        out += [None if a in numbered else a for a in fresh]
    rounds = iter([g[i] for i in range(max(map(len, groups), default=0)) for g in groups if i < len(g)])
    return [a if a is not None else next(rounds) for a in out]

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
        encode_transitions(memory, episode, tools, {'state_key': 'location', 'neighbors_key': ''}, STORE)
    except Exception as exc:
        print("encode part transitions failed:", repr(exc)[:200])


def recall(memory, task, tools):
    items = []
    try:
        items += [{**i, 'source': 0} for i in retrieve_untried(memory, task, tools, {'max_steps': 20, 'goal_first': False, 'later': False, 'sweep': True})]
    except Exception as exc:
        print("retrieve part untried failed:", repr(exc)[:200])
    try:
        items += [{**i, 'source': 1} for i in retrieve_recipe(memory, task, tools, {'depth': 1, 'max_steps': 8, 'min_support': 2})]
    except Exception as exc:
        print("retrieve part recipe failed:", repr(exc)[:200])
    try:
        items += [{**i, 'source': 2} for i in retrieve_explore(memory, task, tools, {'state_key': 'location', 'neighbors_key': '', 'form': 'plan', 'max_steps': 30})]
    except Exception as exc:
        print("retrieve part explore failed:", repr(exc)[:200])
    try:
        items += [{**i, 'source': 3} for i in retrieve_kinds(memory, task, tools, {'max_rules': 8})]
    except Exception as exc:
        print("retrieve part kinds failed:", repr(exc)[:200])
    return render_lines(items, {'order': 'rules,plans,notes', 'style': 'split', 'max_lines': 20})
