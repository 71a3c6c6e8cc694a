"""When an action works: what the observation's short fields held when it advanced a task, did nothing or
ended one, what was quietly done before it, what its answer said when nothing happened, and which actions
end tasks. The memory of effects (``effects.py``) keeps these per action; the functions here read them.

Design code (the sandbox's rules apply); no environment's words.
"""

from common import MENTION, STOP, _said_after, bump, first_word, value_words, words


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


def clears_record(step, taken):
    """Whether the step emptied a list of the observation that held only actions taken before it (a record
    of what was done, kept until this action consumed it: a firing, a night)."""
    before, after = step["obs_before"], step["obs_after"]
    for key, value in before.items() if isinstance(before, dict) and isinstance(after, dict) else []:
        items = [str(v).lower() for v in value] if isinstance(value, list) else []
        if items and all(v in taken for v in items) and after.get(key) == []:
            return True
    return False


def trigger_of(effects, listed):
    """Of ``listed`` (key: action as shown), the action whose answer depends on what came before it: the
    one that most often emptied a record of what was done (``clears_record``: a firing, a night), none
    that ended a task. '' when none did. An action that only answered in many ways is none: a move
    answers with each place it reaches."""
    best, out = 0, ""
    for key, shown in listed.items():
        rec = effects.get(key) or {}
        if not ends_tasks(rec) and rec.get("clears", 0) > best:
            best, out = rec["clears"], shown
    return out


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
    never advanced a task and were not refused (``refused``) ('focus on' when focusing on a drain, a bed and
    an orange each failed a task, focusing on an ambiguous name did nothing, and only focusing on the right
    thing ever helped). Their longest common beginning, without the thing: the next such action is likely
    fatal too, unless advice names it. 0: never."""
    if not least:
        return []
    out = []
    for _, kind in sorted(by_kind(effects).items()):
        recs = [  # (words, fatal, advanced or refused: no sign the kind is harmless)
            (
                [w.lower() for w in words(r["eg"])],
                ends_tasks(r),
                bool((r.get("counts") or {}).get("up", 0)) or refused(r),
            )
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


def tried_as_far(rec, goal, furthest, at_key="tried_at"):
    """Whether an action was tried under ``goal`` as far on as that goal's games ever got: one tried only
    before a stage its goal reached later may be the next stage's step (a switch that refused before its
    turn). Kept before stages were: tried under the goal at all; before goals were: tried. ``at_key``
    "judged_at": only tries whose effect had shown count (``note_judged``)."""
    at = rec.get(at_key)
    if at is None:
        return goal in rec.get("tried_goals", [goal])
    return goal in at and at[goal] >= furthest


def note_judged(effects, pending, goal, key, stage, cleared, refused):
    """Which tries showed what they did. An action whose effect shows only when a later action empties the
    record of what was done (a night, a firing) was not tried until then: ``pending`` holds the actions
    taken since the last such action (key: the stage each was taken at). When this step emptied the
    record, they and it are judged (per goal the furthest stage, ``judged_at``; count ``judged``); a
    refused step is judged at once; any other waits in ``pending``."""
    pending[key] = max(pending.get(key, 0), stage)
    for k in list(pending) if cleared else [key] if refused else []:
        rec = effects.get(k)
        if rec is not None:
            at = rec.setdefault("judged_at", {})
            at[goal] = max(at.get(goal, 0), pending[k])
            rec["judged_at"] = dict(list(at.items())[-8:])
            bump(rec["counts"], "judged")
        del pending[k]


def undoers(effects):
    """'K …' for each kind K (first word) of action whose own retake undid the score it raised (a switch
    flipped back off): the agent's matcher passes over an action of that kind once it raised the score."""
    kinds = {
        first_word(rec["eg"]) for rec in effects.values() if (rec.get("counts") or {}).get("undid", 0) > 0
    }
    return [kind + " …" for kind in sorted(kinds) if kind]
