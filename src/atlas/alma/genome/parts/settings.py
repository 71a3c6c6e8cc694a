"""The memory of settings: where a panel's setting leads. A panel is a list field of the observation whose
items are short (the switches on); its setting, the items it holds. A name is a short value an
observation showed (a place, a thing: 'bin c', 'red crate'); a thing, a key of a mapping of names ('red
crate' in ``{'red crate': 'bin a'}``). A step under a setting whose new sentences named a name ('The chute
now feeds bin C.') ties the name to the setting; one whose action brought a name that is no thing into a
short field (riding the belt left a field at 'bin c') reached it there; one that ended the episode
unsolved marks its setting for the kind of action it took.

``encode_settings`` keeps, per name, the settings it was named under (how often, each sentence's count
shared among the names it says: a list of every crate tells little), the action that reached it there and
the steps there that ended an episode; per panel item, the actions that put it on and took it off; the
actions that took a thing into a short field and put it back. ``retrieve_settings`` plans for a goal: the
toggles to the setting that leads to where the goal's thing is (the value the observation's mapping gives
for it), the kind of action that went there and the one that takes the thing; then back where the goes
set out from, the toggles to the setting that leads to the place the goal names, the kind of action that
goes there and the one that puts the thing down ('Steps in order: flip switch 4, flip switch 2, ride the
belt, lift crate, return to the dock, unflip switch 2, ride the belt, set down.').

Design code (the sandbox's rules apply); no environment's words: names, things and actions are what the
observations, the texts and the agent's lists showed.
"""

from common import SENTENCE, STOP, bump, capped_by, scored_steps, store_factor, words


def _short(value):
    """Whether ``value`` is a short scalar: a number, or a text of one to three words."""
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return True
    return isinstance(value, str) and 0 < len(words(value)) <= 3


def _phrase(text):
    return " ".join(words(text)).lower()


def panel_of(obs):
    """``{field: [items as text]}`` of the observation's list fields whose items are all short."""
    out = {}
    for key, value in obs.items() if isinstance(obs, dict) else []:
        if isinstance(value, list) and all(_short(v) for v in value):
            out[key] = sorted({str(v) for v in value})
    return out


def panel_key(panel):
    return ";".join(f"{k}={','.join(v)}" for k, v in sorted(panel.items()))


def _mapped(obs):
    """``{thing: name}`` of the observation's mappings with short text values (a thing and where it is)."""
    out = {}
    for value in obs.values() if isinstance(obs, dict) else []:
        if isinstance(value, dict):
            out.update({_phrase(k): _phrase(v) for k, v in value.items() if isinstance(v, str) and _short(v)})
    return out


def _field_names(obs):
    """The names the observation's short text fields hold (a place, what is held): their readings, numbers aside."""
    return {v for v in _readings(obs).values() if not v.isdigit()}


def names_of(obs):
    """Every name an observation shows: its short text fields, list items and mappings' keys and values."""
    out = set(_field_names(obs))
    for value in obs.values() if isinstance(obs, dict) else []:
        if isinstance(value, list):
            out |= {_phrase(v) for v in value if isinstance(v, str) and _short(v)}
    for thing, name in _mapped(obs).items():
        out |= {thing, name}
    return {n for n in out if n and not n.isdigit()}


def said_in(text, names):
    """The names ``text`` says (whole words), none inside a longer one it says."""
    padded = " " + _phrase(text) + " "
    found = {n for n in names if " " + n + " " in padded}
    return {n for n in found if not any(n != m and " " + n + " " in " " + m + " " for m in found)}


def _named_in(step, names):
    """``{name: count}`` for the names the step's new sentences say (a sentence's count of one shared among
    the names it says), those the action says aside."""
    old = {_phrase(s) for s in SENTENCE.split(str(step["before"]))}
    own = said_in(step["action"], names)
    out = {}
    for sentence in SENTENCE.split(str(step["after"])):
        if _phrase(sentence) in old:
            continue
        found = said_in(sentence, names) - own
        for name in found:
            bump(out, name, 1.0 / len(found))
    return out


def _readings(obs):
    """``{field: value}`` of the observation's short text fields (a place, a guard 'shut')."""
    return {
        k: _phrase(v)
        for k, v in (obs.items() if isinstance(obs, dict) else [])
        if isinstance(v, str) and _short(v)
    }


def _toggles(table, step, before, after):
    """Keep the action that put on (took off) the one item a step changed on a panel, and what it changed
    in the short fields ('guard open' where 'guard shut' was: ``flips``)."""
    for field in set(before) & set(after):
        on, off = set(after[field]) - set(before[field]), set(before[field]) - set(after[field])
        if len(on) + len(off) == 1:
            side, item = ("on", on.pop()) if on else ("off", off.pop())
            table.setdefault(side, {}).setdefault(field, {})[item] = step["action"]
            was, now = _readings(step["obs_before"]), _readings(step["obs_after"])
            changed = {k: v for k, v in was.items() if k in now and now[k] != v}
            flips = table.setdefault("flips", {})
            for k, v in changed.items():  # an item on turns the field from v; off turns it to v
                flips[f"{k}={v}"] = f"{field}={item}" if side == "on" else f"-{field}={item}"


def _take_or_put(table, step, came, went, things):
    """Count the action that took a thing into a short field (``take``, the names that ``came``) or put one
    back (``put``, the names that ``went``)."""
    if step["error"]:
        return
    for side, moved in (("take", came), ("put", went)):
        if moved & things:
            bump(table.setdefault(side, {}), step["action"])


def _learn_names(table, episode):
    """This episode's names and things joined to those of earlier ones: ``(names, things)``."""
    seen = [(episode.get("task") or {}).get("observation") or {}]
    seen += [s.get("observation") or {} for s in episode.get("steps") or []]
    names = set(table.get("names") or []).union(*[names_of(o) for o in seen])
    things = set(table.get("things") or []).union(*[set(_mapped(o)) for o in seen])
    table["names"], table["things"] = sorted(names)[-400:], sorted(things)[-200:]
    return names, things


def _learn_listed(table, episode):
    """Every action the agent was shown (the kinds of the go actions come from them)."""
    listed = table.setdefault("listed", [])
    shown = list((episode.get("task") or {}).get("actions") or [])
    shown += [a for s in episode.get("steps") or [] for a in s.get("new_actions") or []]
    for label in shown:
        if isinstance(label, str) and label not in listed:
            listed.append(label)
    table["listed"] = listed[-200:]


def encode_settings(memory, episode, tools, p, store):
    """Per name (``_named_in``) and setting: ``n`` (shared count), ``go`` (the action whose step brought the
    name, no thing, into a short field there) and ``end`` (steps there that ended the episode unsolved); per
    setting a step ended an episode under, the action (``ended``); per panel item the actions that toggle
    it; the actions that take and put a thing; every listed action. Counts decay with the store; the names
    said most are kept, up to its cap."""
    table = memory.setdefault("settings", {})
    factor = store_factor(store)
    for spots in (table.get("led") or {}).values():
        for spot in spots.values():
            spot["n"] = round(spot["n"] * factor, 4)
    names, things = _learn_names(table, episode)
    _learn_listed(table, episode)
    led, panels = table.setdefault("led", {}), table.setdefault("panels", {})
    ended_at = table.setdefault("ended", {})
    solved = bool(episode.get("success"))
    for step in scored_steps(episode):
        before, after = panel_of(step["obs_before"]), panel_of(step["obs_after"])
        if not after:
            continue
        _toggles(table, step, before, after)
        held, holds = _field_names(step["obs_before"]), _field_names(step["obs_after"])
        _take_or_put(table, step, holds - held, held - holds, things)
        key = panel_key(after)
        panels[key] = after
        ended = step["ended"] and not solved
        if ended and before:
            panels[panel_key(before)] = before
            ended_at.pop(panel_key(before), None)
            ended_at[panel_key(before)] = step["action"]
        if before == after and not step["error"]:
            _outcome(table, step, "ended" if ended else "went")
        reached = (holds - held) - things
        said = _named_in(step, names)
        went = before == after and not step["error"] and not ended
        for name in set(said) | (reached & names if went else set()):
            spot = led.setdefault(name, {}).setdefault(key, {"n": 0, "go": "", "end": 0})
            spot["n"] = round(spot["n"] + said.get(name, 0), 4)
            spot["end"] += ended
            if name in reached and went:
                spot["go"] = step["action"]
    table["led"] = capped_by(led, store.get("cap", 200), lambda s: sum(x["n"] for x in s.values()))
    for name, spots in table["led"].items():
        table["led"][name] = capped_by(spots, 30, lambda x: x["n"] + 5 * bool(x["go"]))
    table["ended"] = dict(list(ended_at.items())[-50:])
    used = {k for spots in table["led"].values() for k in spots} | set(table["ended"])
    table["panels"] = {k: v for k, v in panels.items() if k in used}
    print("settings:", len(table["led"]), "names tied to a setting")


def _items(table, key):
    """A setting's items as ``field=item`` strings."""
    panel = (table.get("panels") or {}).get(key) or {}
    return {f"{f}={x}" for f, xs in panel.items() for x in xs}


def _head(action):
    return [w.lower() for w in words(action)[:2]]


def _outcome(table, step, how):
    """Keep the short fields' readings before an action that changed no panel item, by its first two words
    and whether it ended the episode unsolved (``ended``) or not (``went``): the latest twenty of each."""
    seen = table.setdefault(how, {}) if how == "went" else table.setdefault("ended_in", {})
    kind = " ".join(_head(step["action"]))
    seen[kind] = [*(seen.get(kind) or []), _readings(step["obs_before"])][-20:]


def _guards(table, go):
    """The panel items (``-item``: an item to take off) that turn a reading away from one held before steps of
    ``go``'s kind that ended an episode far more often (by half of all) than before those that did not
    ('guard shut' before the crashes, the switch that opened it): what going needs first."""
    kind = " ".join(_head(go))
    ended = (table.get("ended_in") or {}).get(kind) or []
    went = (table.get("went") or {}).get(kind) or []
    counts, safe = {}, {}
    for readings, into in [(r, counts) for r in ended] + [(r, safe) for r in went]:
        for k, v in readings.items():
            bump(into, f"{k}={v}")
    flips = table.get("flips") or {}
    share = {r: n / len(ended) - safe.get(r, 0) / max(len(went), 1) for r, n in counts.items()}
    return {flips[r] for r, d in share.items() if d > 0.5 and r in flips}


def _needs(table, go):
    """The items every setting an action like ``go`` (its first two words) reached a name under held, and
    some setting such an action ended an episode under did not: what must be on before going (a guard)."""
    reached = [
        _items(table, k)
        for spots in table["led"].values()
        for k, s in spots.items()
        if s["go"] and _head(s["go"]) == _head(go)
    ]
    if not reached:
        return set()
    ended = [_items(table, k) for k, a in (table.get("ended") or {}).items() if _head(a) == _head(go)]
    return {x for x in set.intersection(*reached) if any(x not in e for e in ended)}


def _goes(table, home):
    """``{go action: count}`` of every action that reached a name, none of ``home`` (where tasks start)."""
    out = {}
    for name, spots in table["led"].items():
        for s in spots.values():
            if s["go"] and name not in home:
                bump(out, s["go"])
    return out


def _spot_for(table, name, now, home=()):
    """The setting to reach ``name`` from the items ``now`` and the action that goes there: of the settings
    a go action reached it under and no step there ended an episode, the nearest (fewest toggles), then the
    most said; else the one it was said under most for what was said there (its count squared over
    ``_said_under``: said there often, and more than the rest), with what going needs (``_needs``) and the action
    that went anywhere but ``home`` most. ``(None, '')`` when it was never said under a setting."""
    spots = {k: s for k, s in (table["led"].get(name) or {}).items() if not s["end"] and k in table["panels"]}
    gone = [k for k, s in spots.items() if s["go"]]
    if gone:
        key = min(gone, key=lambda k: (len(_items(table, k) ^ now), -spots[k]["n"]))
        return _items(table, key), spots[key]["go"]
    if not spots:
        return None, ""
    go = _most(_goes(table, home)) or _most({a: 1 for a in (table.get("ended") or {}).values()})
    said = _said_under(table)
    key = max(spots, key=lambda k: spots[k]["n"] ** 2 / max(said.get(k, 0), 1e-9))
    want = _items(table, key) | (_needs(table, go) if go else set())
    for item in _guards(table, go) if go else ():
        want = want - {item[1:]} if item.startswith("-") else want | {item}
    return want, go


def _said_under(table):
    """``{setting: count}`` of everything said under each setting: a name said there as often as every
    other (a list of them all, rewritten at each step) tells less of where the setting leads than one said
    there alone."""
    out = {}
    for spots in table["led"].values():
        for key, spot in spots.items():
            bump(out, key, spot["n"])
    return out


def _toggle_steps(table, now, want):
    """The actions that turn the panel from the items ``now`` to ``want``."""
    out = []
    for side, items in (("on", sorted(want - now)), ("off", sorted(now - want))):
        for item in items:
            field, _, x = item.partition("=")
            action = ((table.get(side) or {}).get(field) or {}).get(x)
            if action:
                out.append(action)
    return out


def _kind(table, action, holding=False):
    """The words every listed action that begins like ``action`` (its first two words) shares from the start
    ('ride the belt' of 'ride the belt empty' and 'ride the belt with the red crate'): the agent's matcher
    takes the one listed action that begins so. The action itself when no other begins so; its first two
    words where it is taken ``holding`` a thing, as no game showed it (its last words may say what is held).
    'go to' of 'go to the hall' and 'go to window 2' names no listed action: the step is passed over (kept
    as taken, 'go to the hall', the way back to where an office plug-in's tasks start cost its LLM-free probe
    0.03 to 0.05 on three families, and changed nothing on five other environments)."""
    said = words(action)
    common = said
    for other in [words(a) for a in table.get("listed") or [] if _head(a) == _head(action)]:
        n = 0
        while n < min(len(common), len(other)) and common[n].lower() == other[n].lower():
            n += 1
        common = common[:n]
    content = [i for i, w in enumerate(said) if w.lower() not in STOP]
    if holding and common == said and len(content) > 2:
        common = said[: content[1] + 1]
    return " ".join(common) if len(common) >= 2 else action


def _most(counts):
    return max(counts, key=lambda a: counts[a]) if counts else ""


def _home(table, obs, holding):
    """The kind of action that went back to where a task starts (a name of the start's short fields that a
    go action reached): where the goes set out from."""
    goes = [
        s
        for name in sorted(_field_names(obs))
        for s in (table["led"].get(name) or {}).values()
        if s["go"] and not s["end"]
    ]
    return _kind(table, max(goes, key=lambda s: s["n"])["go"], holding) if goes else ""


def _places(table, goal, obs):
    """``(thing, [places])``: the goal's thing (the longest thing the observation maps that the goal says)
    with the name it maps it to, then the name the goal says first (no part of the thing), each where it
    was said under a setting."""
    led, mapped = table["led"], _mapped(obs)
    thing = max(said_in(goal, set(mapped)), key=len, default="")
    places = [mapped[thing]] if thing and mapped[thing] in led else []
    padded = " " + _phrase(goal) + " "
    said = sorted(said_in(goal, set(led)) - {thing, *places}, key=lambda n: padded.find(" " + n + " "))
    return thing, places + [n for n in said if n not in thing][:1]


def retrieve_settings(memory, task, tools, p):
    """A plan (``Steps in order``): for each place of ``_places``, the toggles to its setting
    (``_spot_for``) and the kind of action that goes there (``_kind``); after the first, the action that
    takes a thing, and before the second, the one that went back where the goes set out from (``_home``);
    last, the action that puts a thing down, where the goal has a mapped thing. [] when no name the goal
    says is tied to a setting, or where the goal's thing is leads nowhere known."""
    table = memory.get("settings") or {}
    if not table.get("led"):
        return []
    obs = task.get("observation") or {}
    thing, places = _places(table, task.get("goal", ""), obs)
    if thing and _mapped(obs)[thing] not in table["led"]:
        return []  # no known way to where the goal's thing is: the goal's place alone carries nothing there
    now = {f"{f}={x}" for f, xs in panel_of(obs).items() for x in xs}
    holding = bool(thing and table.get("take"))
    home, plan = _home(table, obs, holding), []
    for i, place in enumerate(places):
        want, go = _spot_for(table, place, now, _field_names(obs))
        if want is None:
            continue
        if i and home:
            plan.append(home)
        plan += _toggle_steps(table, now, want)
        now = want
        if go:
            plan.append(_kind(table, go, holding=bool(i) and holding))
        if thing and not i and len(places) > 1 and table.get("take"):
            plan.append(_most(table["take"]))
    if thing and plan and table.get("put"):
        plan.append(_most(table["put"]))
    plan = plan[: p.get("max_steps", 20)]
    return [{"kind": "plan", "title": "Steps in order", "steps": plan}] if plan else []
