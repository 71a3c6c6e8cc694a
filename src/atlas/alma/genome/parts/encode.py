"""Encode parts: what an episode becomes in memory. Each ``encode_<part>(memory, episode, tools, p, store)``
keeps its data under ``memory[<part>]``; ``p`` are the part's parameters and ``store`` the genome's
store policy (``recent``: keep the last N items, 0 = all; ``cap``: at most this many keys;
``decay``: counts multiply by it before each episode adds its own).
"""

import json
import re

from common import (
    STOP,
    bump,
    capped,
    count_goal,
    decay,
    frame_of,
    goal_key,
    goal_kind,
    goal_words,
    idle,
    in_every_goal,
    items_of,
    lasting,
    observed_words,
    recent,
    scored_steps,
    situation,
    slots_in,
    slotted,
    state_of,
    steps_of,
    texts_of,
    value_text,
    value_words,
    words,
)


def _futile(step, scored):
    """Whether a step (``steps_of``; ``scored`` its ``scored_steps`` entry) did no part of the task: it
    changed nothing lasting (``idle``), raised no score and ended nothing ('examine key')."""
    return idle(step) and scored["gain"] <= 0 and not scored["ended"]


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
    the thing's word was in the observation before the action and not in the previous state's, the
    action made an item naming it appear (``_offers_more``: 'drop key' listed, 'key' held), and the word
    is still there after the next change of state. Where the episode never left the state again, an
    action whose every word the goal spells ('take' of 'find the X and take it') counts without that.
    The template names the thing ``{item}`` (and goal words as slots); the frame is how the text showed
    it before ('objects here'). In the episode's first state, which has no previous one, the word must
    not be one that ``everywhere`` (past episodes) always had. A word of the task's ``form`` (every goal
    has it: 'take') is never the thing: listed beside other things after the move, 'take' of 'take key'
    looked carried. In the first state the item must also appear in a field that did not name the word
    (``_offers_more``): with no previous state to show the thing was not always there, a thing every
    observation names (what the task is about) would look carried by any action that lists another."""
    steps, texts = steps_of(episode), texts_of(episode)
    out = []
    for i, (before, action, after, error) in enumerate(steps):
        here = state_of(before, key)
        if error or not here or state_of(after, key) not in ("", here):
            continue
        earlier = [b for b, _, _, _ in steps[:i] if state_of(b, key) not in ("", here)]
        later = [a for _, _, a, _ in steps[i:] if state_of(a, key) not in ("", here)]
        if not (earlier or everywhere is not None):
            continue
        was_there = value_words(earlier[-1]) if earlier else set(everywhere)
        moved = value_words(later[0]) if later else None
        for w in sorted({t.lower() for t in words(action)} & value_words(before)):
            if w.isdigit() or w in was_there or w in form:
                continue
            pieces = re.split(r"([A-Za-z0-9_]+)", action)
            template = "".join("{item}" if t.lower() == w else slotted(t, gw) or t for t in pieces)
            if not _offers_more(before, after, w, action, elsewhere=not earlier):
                continue  # it did nothing to the thing ('examine orb' before the take that carried it)
            if (w not in moved) if moved is not None else not _spelled(template):
                continue  # the episode ended here: nothing shows whether the thing went along
            frame = frame_of(texts[i][0], w, names)
            learned = [template, slotted(frame, gw) or frame]
            if learned not in out:
                out.append(learned)
    return out


def _spelled(template):
    """Whether a template has no word of its own: the thing and the goal's words only ('{2} {item}')."""
    return not {w.lower() for w in words(re.sub(r"\{[^}]*\}", " ", template))} - STOP


def _naming(obs, word):
    """``(field, item)`` for each item of ``obs`` that names ``word``: of its lists and mappings, and its
    short names (see ``lasting``)."""
    out = set()
    for k, v in obs.items() if isinstance(obs, dict) else []:
        short = isinstance(v, str) and 0 < len(words(v)) <= 3
        for item in items_of(v) if isinstance(v, list | dict) else [v] if short else []:
            if word in {t.lower() for t in words(value_text(item))}:
                out.add((k, str(item)))
    return out


def _offers_more(before, after, word, action, elsewhere=False):
    """Whether an action made a listed item naming ``word`` appear, other than the action itself
    ('drop key' listed after 'take key', or 'key' in a list of things held); with ``elsewhere``, only
    in a field that named no such item before (held, no longer lying here): another action offered for
    the same thing ('turn dial to 3' listed after 'turn dial to 2') is no sign that it went anywhere
    with the agent."""
    was = {field for field, _ in _naming(before, word)} if elsewhere else set()
    new = _naming(after, word) - _naming(before, word)
    return any(item != action and field not in was for field, item in new)


def encode_goal_actions(memory, episode, tools, p, store):
    """Actions that name words of the goal, as templates (``<verb> {1}``: word 1 of the goal) under the
    goal's shape, with the state they were taken in when that state is a goal word too, and how the
    observation text framed the named word before the action (``holding`` in 'You are holding: key'); the
    state an action names otherwise becomes ``{here}`` (the action then applies in any state). How
    the text frames the word after an action taken anywhere is kept too (``goal_action_after``: what
    holding it looks like). Actions that change the state are left to ``transitions``, and those that
    changed nothing lasting (``idle``), raised no score and ended nothing did no part of the task. Only
    successful episodes when ``p['successes_only']``; otherwise a failed episode teaches the action that
    made a goal word carried (its frame then seen in two states) and the one that ended carrying it,
    which applies in the state the goal names. How many goals named each word: ``goal_action_goals``;
    how many episodes taught each shape: ``goal_action_episodes``.
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
    for step, (seen, then), scored in zip(
        steps_of(episode), texts_of(episode), scored_steps(episode), strict=True
    ):
        before, action, after, error = step
        here = state_of(before, key)
        if here and here not in places:
            places.append(here)
        moved = key and state_of(after, key) and state_of(after, key) != here
        # moves are the map's job; a step that did no part of the task is no goal action
        template = "" if error or moved or _futile(step, scored) else slotted(action, gw)
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
    if found:  # episodes that taught this shape: a template can have no more support than that
        taught = memory.setdefault("goal_action_episodes", {})
        taught[kind] = taught.get(kind, 0) + 1
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
    if learned:  # a form can have no more support than the episodes that taught any
        memory["carry_form_episodes"] = memory.get("carry_form_episodes", 0) + 1
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
    that changed the observation for good (a failed episode then keeps the progress it made), with
    ``'straight'`` without the walks that came back to where they had been (``_straight``); the most
    recent ``store['recent']`` kept."""
    m = memory.setdefault("sequences", [])
    if p.get("successes_only", True) and not episode.get("success"):
        return
    gw = goal_words((episode.get("task") or {}).get("goal", ""))
    drop = p.get("idle", "keep") == "drop"
    names = observed_words(episode)
    kept = [
        (s, t, g)
        for s, t, g in zip(steps_of(episode), texts_of(episode), scored_steps(episode), strict=True)
        if not s[3] and not (drop and idle(s))
    ]
    if p.get("idle") == "straight":
        kept = _straight(kept)
    kept = kept[: p.get("max_actions", 30)]
    templates = [slotted(s[1], gw) or s[1] for s, _, _ in kept]
    situations = [situation(s, t, names) for s, t, _ in kept]
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
            "futile": [_futile(s, g) for s, _, g in kept],
            "score": episode.get("score", 0.0),
            "success": bool(episode.get("success")),
        }
    )
    memory["sequences"] = recent(m, store.get("recent", 0))[-store.get("cap", 200) :]
    print("sequences:", len(memory["sequences"]), "kept")


def _straight(kept):
    """The steps (``(step, texts, scored)``) without the walks that came back to a lasting observation
    (``lasting``) they had left, with no score raised and nothing ended on the way: the way a wandering
    success went, made direct ('go north, go south' and 'examine key' go; 'take key' stays)."""
    path, at = [], {}  # at: a lasting observation -> how many steps of ``path`` led to it
    if kept:
        at[json.dumps(lasting(kept[0][0][0]), sort_keys=True)] = 0
    for step, texts, scored in kept:
        path.append((step, texts, scored))
        key = json.dumps(lasting(step[2]), sort_keys=True)
        if scored["gain"] > 0 or scored["ended"]:
            at = {}  # the way here did part of the task: none of it is erased
        elif key in at:
            del path[at[key] :]
            at = {k: n for k, n in at.items() if n <= len(path)}
        at[key] = len(path)
    return path


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


INSIGHT_INSTRUCTION = (
    "Extract 1 to 3 short, transferable insights from this episode. If it succeeded, say which "
    "strategy worked; if it failed, say what went wrong and how to avoid it. Reply as JSON: "
    '{"insights": [{"title": "...", "content": "..."}]}'
)


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


def encode_insights(memory, episode, tools, p, store):
    """ReasoningBank-style: the model (``analyze``, JSON) names 1-3 insights from the episode, stored in
    the vector collection 'insights' as strategy (success) or pitfall (failure)."""
    kind = "strategy" if episode.get("success") else "pitfall"
    text = "\n".join(
        [
            "Goal: " + episode["task"].get("goal", ""),
            "Outcome: " + ("success" if episode.get("success") else "failure"),
            *_episode_lines(episode, 30, True),
        ]
    )
    try:
        reply = tools.analyze(text, INSIGHT_INSTRUCTION, "json")
    except Exception as exc:
        print("analyze failed:", exc)
        reply = {}
    items = reply.get("insights", []) if isinstance(reply, dict) else []
    stored = 0
    for item in items[:3]:
        if not isinstance(item, dict):
            continue
        title = str(item.get("title", "")).strip()
        content = str(item.get("content", "")).strip()
        if not content:
            continue
        tools.store_obs(title + ": " + content, {"kind": kind}, "insights")
        stored += 1
    memory["items"] = memory.get("items", 0) + stored
    memory["insight_episodes"] = memory.get("insight_episodes", 0) + 1
    print("stored", stored, kind, "insights")


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


def encode_graph_edges(memory, episode, tools, p, store):
    """Edges between state field ``p['state_key']`` and each name in list field ``p['neighbors_key']``
    into the graph store, and how often each name of list field ``p['items_key']`` was seen per state."""
    edges = []
    sightings = memory.setdefault("map_sightings", {})
    first = (episode.get("task") or {}).get("observation") or {}
    for obs in [first] + [(s.get("observation") or {}) for s in episode.get("steps", [])]:
        here = obs.get(p.get("state_key", ""))
        if not isinstance(here, str) or not here:
            continue
        for other in obs.get(p.get("neighbors_key", "")) or []:
            if isinstance(other, str) and other and other != here:
                edges.append([here, other])
        for obj in obs.get(p.get("items_key", "")) or []:
            counts = sightings.setdefault(str(obj), {})
            counts[here] = counts.get(here, 0) + 1
    if edges:
        tools.graph_update(edges)
    memory["map_episodes"] = memory.get("map_episodes", 0) + 1
    print("map update:", len(edges), "edges,", len(sightings), "objects tracked")
