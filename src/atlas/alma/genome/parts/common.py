"""Helpers that compiled genomes carry: words of a goal, steps of an episode, goal-word templates.

Design code (the sandbox's rules: allowed imports only, no dunders, memory plain JSON). Nothing here
names an environment: everything comes from the goal text, the observation fields and the actions
as the agent's list writes them (``action.text``).
"""

import re

WORD = re.compile(r"[A-Za-z0-9_]+")
SLOT = re.compile(r"\{(\d+)\}")
# The words every sentence has: never a situation, a thing or a goal's word. The one list the parts and
# the task agent's advice matcher share (``atlas.agent.advice_match`` reads it from this file).
STOP_WORDS = (
    "a", "an", "the", "to", "in", "on", "of", "and", "or", "at", "is", "are", "am", "you", "your", "it",
    "its", "this", "that", "with", "for", "from", "then", "as", "be", "by", "do", "does", "not", "if",
    "into", "now", "when", "while", "there", "here's", "i", "some", "any", "all",
)  # fmt: skip
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


def recent(items, n):
    """The last ``n`` items (all when n <= 0)."""
    return items[-n:] if n > 0 else items


def decay(counts, factor):
    """Multiply every count by ``factor`` (1.0: no decay), dropping those that fall near 0."""
    if factor >= 1.0:
        return counts
    return {k: round(v * factor, 4) for k, v in counts.items() if v * factor >= 0.05}


NUMBER = re.compile(r"(?<![A-Za-z0-9_{])\d+(?![A-Za-z0-9_}])")  # not a slot: {2}


def unnumbered(text):
    """``text`` with its instance numbers as '#' ('take key 2 from shelf 1' -> 'take key # from shelf #'):
    the same action on another instance of the same things."""
    return NUMBER.sub("#", str(text))


MENTION = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s+(\d+)(?![A-Za-z0-9_])")  # a numbered thing: 'valve 3'


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
