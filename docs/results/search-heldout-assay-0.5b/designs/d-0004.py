"""Memory design compiled from genome 'recombine-d-0004' (ATLAS genome v1, key 7ec0398b8c89).

  encode   effects(): what each action did, read from the result text and the score alone: what it made, used, used up and replaced, whether it did nothing or advanced the task (instance numbers abstracted), and which actions made each word
  encode   sequences(successes_only=False, max_actions=10): the action sequences of episodes, goal words as slots, per goal shape and exact goal (or only the actions that changed something)
  store    {'decay': 0.7}: keep the last N sequences (0: all); at most this many keys per counter; counts are multiplied by this before each episode adds its own
  retrieve replay(): a kept action sequence of a goal of the same shape (or of this very goal), with this goal's words
  retrieve untried(max_steps=6): a plan after every other: the actions listed at earlier tasks' start that were never taken under this goal, fewest tries first; where nothing learned names a step, the agent tries what it has not instead of the first listed
  render   lines(order='plans,rules,notes'): rules as '<situation>: <action>', plans as one line of actions, notes as they are; a line budget shared among the retrieve parts

Edit the genome and compile again (`atlas design compile`), or edit this code like any design.
"""

import json
import re

GENOME = {'version': 1,
 'name': 'recombine-d-0004',
 'encode': [{'part': 'effects', 'params': {}},
            {'part': 'sequences',
             'params': {'successes_only': False, 'max_actions': 10, 'idle': 'keep'}}],
 'store': {'recent': 0, 'cap': 200, 'decay': 0.7},
 'retrieve': [{'part': 'replay', 'params': {'match': 'shape', 'prefer': 'latest', 'form': 'plan'}},
              {'part': 'untried', 'params': {'max_steps': 6}}],
 'render': {'part': 'lines',
            'params': {'order': 'plans,rules,notes', 'style': 'joined', 'max_lines': 60}}}
STORE = {'recent': 0, 'cap': 200, 'decay': 0.7}

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

def bump(counts, key, by=1):
    counts[key] = counts.get(key, 0) + by

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
    new = pa - pb
    # what lasted: still framed so after a following step that changed the text (a repeated message is not)
    kept = new & framed_pairs(step["next"], names) if step["next"] != step["after"] else set()
    shown = {w for _, w in pb}
    acted = {w.lower() for w in words(step["action"])}
    if lasting(step["obs_after"]):  # fields that hold things and places: what came into them
        made = _field_gains(step["obs_before"], step["obs_after"])
    else:  # text alone: what the text newly frames and keeps framing
        made = {w for f, w in kept if w != f}
    made |= {w for _, w in new if w in goal and w not in shown}
    frames = {}  # how the text frames each thing made: where it lasted, else where it is new
    for f, w in sorted(new - kept) + sorted(kept):
        if w in made and w != f:
            frames[w] = f
    frames_after = {f for f, _ in pa}
    lost = {(f, w) for f, w in pb - pa if f in frames_after and w != f}
    moved = (made & goal) | _together(step["before"], step["after"], goal)
    still = idle([step["obs_before"], step["action"], step["obs_after"], step["error"]])
    return {
        "made": {w: frames.get(w, "") for w in sorted(made)},
        "uses": sorted((acted & shown) - made),
        "eats": sorted(
            _fewer(step["obs_before"], step["obs_after"], acted) or {w for _, w in lost if w in acted} - made
        ),
        "swaps": sorted({f for f, w in lost if w not in acted and f in frames.values()}),
        "moved": moved,
        "advanced": step["gain"] > 0 or bool(moved),
        "nothing": bool(step["error"]) or (still and not made and step["gain"] <= 0 and not moved),
    }

def _fewer(before, after, named):
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

def _together(before, after, goal):
    """Goal words that a sentence new in ``after`` frames together, two or more of them."""
    old = {" ".join(words(x)).lower() for x in SENTENCE.split(str(before))}
    out = set()
    for sentence in SENTENCE.split(str(after)):
        found = {w.lower() for w in words(sentence)} & goal
        if len(found) >= 2 and " ".join(words(sentence)).lower() not in old:
            out |= found
    return out

def _field_gains(before, after):
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

def _here(obs):
    """The words of the observation's short text fields (where the agent is: 'shelf' of 'shelf 1')."""
    out = set()
    for value in obs.values() if isinstance(obs, dict) else []:
        if isinstance(value, str) and 0 < len(words(value)) <= 3:
            out |= {w.lower() for w in words(value) if not w.isdigit()}
    return out - STOP

def _goal_form(step, gw, names, moved):
    """An advancing step as a form any goal can fill: the goal words it moved (``_effect``) that the action
    names, as slots ('take {2} 2 from shelf 1'), a word naming where the agent is (a short text field) as
    ``{@}`` ('take {2} 2 from {@} 1': from wherever it is), and its situation, how the text before framed the first of
    them ('see {2}'; the goal's own sentence is no situation); None when it names none or no sentence
    frames it."""
    low = [w.lower() for w in gw]
    pieces = re.split(r"([A-Za-z0-9_]+)", step["action"])
    slots = [i for i, t in enumerate(pieces) if t.lower() in moved and t.lower() in low]
    if not slots:
        return None
    first = pieces[slots[0]]
    for i in slots:
        pieces[i] = "{" + str(low.index(pieces[i].lower())) + "}"
    here = _here(step["obs_before"])
    pieces = ["{@}" if t.lower() in here and t.lower() not in low else t for t in pieces]
    told = [x for x in SENTENCE.split(str(step["before"])) if not set(low) <= {w.lower() for w in words(x)}]
    frame = frame_of(". ".join(told), first, names)
    return ["".join(pieces), frame + " {" + str(low.index(first.lower())) + "}"] if frame else None

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
    factor = store.get("decay", 1.0) * (1 - 1 / store["recent"] if store.get("recent", 0) > 0 else 1.0)
    for rec in m.values():
        rec["counts"], rec["made"] = decay(rec["counts"], factor), decay(rec["made"], factor)
    for w in list(makers):
        makers[w] = decay(makers[w], factor)
    for rec in forms.values():
        rec["n"] = round(rec["n"] * factor, 4)
    gw = goal_words((episode.get("task") or {}).get("goal", ""))
    goal = {w.lower() for w in gw}
    count_goal(memory, "effect_goals", gw)
    this_goal = goal_key(gw)
    names = observed_words(episode)
    steps = scored_steps(episode)
    names_of = described([s["before"] for s in steps] + [s["after"] for s in steps[-1:]])
    places = memory.setdefault("effect_places", [])
    listed = memory.setdefault("effect_listed", {})  # what the agent was shown at a task's start
    for label in (episode.get("task") or {}).get("actions") or []:
        shown = called(label, names_of)
        listed[unnumbered(shown)] = shown
    counted, stage = set(), 0  # stage: how many times the score rose before this step
    for i, step in enumerate(steps):
        for w in sorted(_here(step["obs_before"])):
            if w not in places:
                places.append(w)
        eff = _effect(step, names, goal)
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
        rec["made"] = capped(rec["made"], 5)
        if eff["nothing"]:  # the situations it did nothing in (what the fields named before it)
            seen = " ".join(sorted(value_words(step["obs_before"])))[:300]
            rec["idle_in"] = sorted(set(rec.get("idle_in", [])) | {seen})[:4]
            rec["idle_goals"] = sorted(set(rec.get("idle_goals", [])) | {this_goal})[:4]
        if step["gain"] > 0:  # what raised the score for this very goal, in order (a sub-goal reached)
            stage += 1
            ups = memory.setdefault("effect_goal_ups", {}).setdefault(this_goal, [])
            if key not in ups:
                ups.append(key)
            del ups[:-12]
        form = _goal_form(step, gw, names, eff["moved"]) if eff["advanced"] else None
        if form:
            kind = goal_kind(gw, {i for i, w in enumerate(gw) if w.lower() in names} | slots_in(form[0]))
            key_f = json.dumps([kind, unnumbered(form[0]), form[1]])
            rec_f = forms.setdefault(key_f, {"eg": "", "n": 0})
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
    memory["effect_makers"] = capped_by(makers, cap, lambda v: sum(v.values()))
    memory["effect_forms"] = capped_by(forms, cap, lambda v: v["n"])
    ups = memory.get("effect_goal_ups") or {}
    memory["effect_goal_ups"] = {k: ups[k] for k in list(ups)[-cap:]}
    memory["effect_reached"] = {k: reached[k] for k in list(reached)[-cap:]}
    print("effects:", len(steps), "steps;", len(memory["effects"]), "actions,", len(makers), "words made")

def _fatal(rec):
    """Every time it was taken, it ended its episode unsolved (and it never advanced a task)."""
    c = rec.get("counts") or {}
    return c.get("fatal", 0) > 0 and c["fatal"] >= c.get("n", 0) - 1e-6 and not c.get("up", 0)

def retrieve_untried(memory, task, tools, p):
    """From ``effects``: the actions the agent was shown at the start of earlier tasks and never took under
    this goal at the furthest stage its games reached (a stage: the score rose once more), and that never
    raised its score; fewest tries (under any goal) first, then in the order they were listed. None that begins
    with the first word of an action that ended every episode it was taken in, unsolved: what ends a task
    is not explored ('focus on' once focusing on a drain failed one). A plan the agent's matcher reads
    after every other plan: where nothing learned names a step, the next action not yet tried, not the
    first listed (a small model's habit). Collection that follows it covers what the listing offers; a
    deployment task whose goal no collection reached starts where earlier tasks did not look. Needs an
    environment that lists its actions (the task view's ``actions``); three or more actions, or nothing
    (a shorter list is not read as a plan)."""
    this = goal_key(goal_words(task.get("goal", "")))
    effects = memory.get("effects") or {}
    ending = {_head(rec.get("eg", "")) for rec in effects.values() if _fatal(rec)} - {""}
    furthest = (memory.get("effect_reached") or {}).get(this, 0)
    advanced = set((memory.get("effect_goal_ups") or {}).get(this, []))
    ranked = []
    for i, (key, shown) in enumerate((memory.get("effect_listed") or {}).items()):
        rec = effects.get(key)
        if key in advanced or _head(shown) in ending or (rec and _tried(rec, this, furthest)):
            continue
        ranked.append(((rec or {}).get("counts", {}).get("n", 0), i, shown))
    steps = [shown for _, _, shown in sorted(ranked)][: p.get("max_steps", 12)]
    return [{"kind": "untried", "title": "Not tried yet", "steps": steps}] if len(steps) >= 3 else []

def _tried(rec, goal, furthest):
    """Whether an action was tried under ``goal`` as far on as that goal's games ever got: one tried only
    before a stage its goal reached later may be the next stage's step (a switch that refused before its
    turn). Kept before stages were: tried under the goal at all; before goals were: tried."""
    at = rec.get("tried_at")
    if at is None:
        return goal in rec.get("tried_goals", [goal])
    return goal in at and at[goal] >= furthest

def _head(text):
    """The first word of ``text``, lower-case ('' for none)."""
    said = words(text)
    return said[0].lower() if said else ""


def update(memory, episode, tools):
    try:
        encode_effects(memory, episode, tools, {}, STORE)
    except Exception as exc:
        print("encode part effects failed:", repr(exc)[:200])
    try:
        encode_sequences(memory, episode, tools, {'successes_only': False, 'max_actions': 10, 'idle': 'keep'}, STORE)
    except Exception as exc:
        print("encode part sequences failed:", repr(exc)[:200])


def recall(memory, task, tools):
    items = []
    try:
        items += [{**i, 'source': 0} for i in retrieve_replay(memory, task, tools, {'successes_only': False,
 'max_actions': 10,
 'idle': 'keep',
 'match': 'shape',
 'prefer': 'latest',
 'form': 'plan'})]
    except Exception as exc:
        print("retrieve part replay failed:", repr(exc)[:200])
    try:
        items += [{**i, 'source': 1} for i in retrieve_untried(memory, task, tools, {'max_steps': 6})]
    except Exception as exc:
        print("retrieve part untried failed:", repr(exc)[:200])
    return render_lines(items, {'order': 'plans,rules,notes', 'style': 'joined', 'max_lines': 60})
