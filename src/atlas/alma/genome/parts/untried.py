"""What was not tried yet: a plan of the listed actions no game took under this goal, the goal's own
things first. Read from ``effects``: the actions listed at earlier tasks' start, and those a step brought
into the list later ('chop tomato 2' once a tomato is held).

Design code (the sandbox's rules apply); no environment's words: a goal's thing is a word of the goal
that not every goal has.
"""

from common import NUMBER, first_word, goal_key, goal_words, in_every_goal, unnumbered, words
from conditions import (
    by_kind,
    ending_words,
    ends_tasks,
    here_words,
    idle_elsewhere,
    needs_first,
    plain_replies,
    says_nothing_new,
    seen_everywhere,
    tried_as_far,
    trigger_of,
)
from kinds import stem


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


def swapped(way, here):
    """``(old, new)``: the words ``way`` and ``here`` (two actions of one kind) differ in, a span of one or
    two words in the same place ('yard', 'field' for 'open gate to yard', 'open gate to field');
    None where they differ otherwise."""
    a, b = way.split(), here.split()
    if not a or len(a) != len(b) or a[0].lower() != b[0].lower():
        return None
    diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x.lower() != y.lower()]
    if not diff or diff[-1] - diff[0] + 1 > 2:
        return None
    return " ".join(a[diff[0] : diff[-1] + 1]), " ".join(b[diff[0] : diff[-1] + 1])


def rebound_later(ways, later, own):
    """``{action: way}``: what a step is expected to bring into the list at this task's start, re-bound to
    its things: 'open gate to yard' listed 'go to yard' before, so 'open gate to field', listed
    here, will list 'go to field'. Learned from ``effect_way`` (each action a step listed, by that step's
    action) and ``effect_later`` (those actions as listed); none already listed here."""
    here = {unnumbered(a) for a in own}
    out = {}
    for key, way in ways.items():
        shown = " " + later.get(key, key) + " "
        for action in own:
            pair = swapped(way, action)
            if not pair or " " + pair[0] + " " not in shown:
                continue
            made = shown.replace(" " + pair[0] + " ", " " + pair[1] + " ").strip()
            if unnumbered(made) not in here:
                out.setdefault(made, action)
    return out


def _with_ways(steps, ways, here):
    """Each try not listed at this task's start (``here``: its actions, numbers as '#') written after its way,
    the action whose step listed it before ('go to the shed then take the rake'; ``effect_way``), unless
    that way is one of the tries."""
    out = []
    for step in steps:
        way = ways.get(unnumbered(step), "")
        listed_here = unnumbered(step) in here
        out.append(step if listed_here or not way or way in steps else way + " then " + step)
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
    is offered first, with 'Avoid: A before B.', which passes it over until B is done. With
    ``unseen_last``, of those naming the goal's things and of the rest, those of a kind no game took (their
    first word) come last: what such an action does is unknown, and where a wrong one ends the task (a
    focus, a submit) it is no safe try.
    With ``later``, also what a step of this task's start is expected to list, re-bound from what one of
    its kind listed before (``rebound_later``: 'go to field' after 'open gate to field', as 'go to
    yard' after 'open gate to yard'), right after that step.
    With ``sweep``, the actions listed at a start that were tried under this goal follow, fewest tries
    first, up to ``max_steps`` in all: a search whose thing lies elsewhere in each task looks everywhere
    once. Each kind is then offered as every instance of it listed at this task's start
    (``every_instance``), up to twice ``max_steps``. After them, up to three actions tried before that
    never advanced a task and answered otherwise than their kind does when nothing happens (they reacted
    to something: a condition met by then may let them work).
    With ``trigger``, each try is to be followed by the action whose answer depends on what came before it
    (``trigger_of``: it emptied the observation's list of what was done): 'Not tried yet, each then wait:
    water x, mist x'; and a try counts only once that action followed it (``note_judged``: till then its
    effect had not shown). Where the score rises only on that action, after the right try, a game that
    follows it shows which try made the rise (what ``preludes`` learns from), where all tries before one
    trigger would bury the right one among wrong ones that undo it.
    A plan the agent's matcher reads after every other plan: where nothing learned names a step, the next
    action not yet tried and listed now, not the first listed (a small model's habit). Collection that
    follows it covers what the listings offer; a deployment task whose goal no collection reached starts
    where earlier tasks did not look. With ``ways``, a try not listed at this task's start is written after
    the action whose step listed it before (``_with_ways``): where no try is listed where the agent stands,
    the matcher takes the way to one. Needs an environment that lists its actions (the task view's
    ``actions``); three or more actions, or nothing (a shorter list is not read as a plan)."""
    gw = goal_words(task.get("goal", ""))
    this = unnumbered(goal_key(gw))
    effects = memory.get("effects") or {}
    ending = ending_words(effects)
    furthest = (memory.get("effect_reached") or {}).get(this, 0)
    advanced = set((memory.get("effect_goal_ups") or {}).get(this, []))
    learned = memory.get("effect_listed") or {}
    own = [a for a in task.get("actions") or [] if isinstance(a, str)] if learned else []  # this task's first
    listed = {unnumbered(a): learned.get(unnumbered(a), a) for a in own}
    listed.update((k, a) for k, a in learned.items() if k not in listed)
    starts = len(listed)  # those listed at a task's start come before those a step brought in
    ways = memory.get("effect_way") or {}
    later = (memory.get("effect_later") or {}) if p.get("later") else {}
    rebound = rebound_later(ways, later, own) if p.get("later") else {}
    for key, shown in later.items():
        listed.setdefault(key, shown)
    things = goal_things(memory, gw) if p.get("goal_first", True) else set()
    played = set(by_kind(effects)) if p.get("unseen_last", True) else None
    everywhere, now = seen_everywhere(effects), here_words(task.get("observation") or {})
    trigger = trigger_of(effects, listed) if p.get("trigger") else ""
    at_key, n_key = ("judged_at", "judged") if trigger else ("tried_at", "n")  # tried: its effect shown
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
        tries = 0 if elsewhere else (rec or {}).get("counts", {}).get(n_key, 0)
        if rec and not elsewhere and tried_as_far(rec, this, furthest, at_key):
            if i < starts:  # tried under this goal: where a sweep looks again, fewest tries first
                tried.append((tries, i, shown))
            continue
        unseen = played is not None and first_word(shown) not in played
        ranked.append(
            (-1 if first[shown] else 0, not names_thing(shown, things), unseen, i >= starts, tries, i, shown)
        )
    steps = [r[-1] for r in sorted(ranked)][: p.get("max_steps", 12)]
    if p.get("sweep"):
        steps += [t[-1] for t in sorted(tried)][: p.get("max_steps", 12) - len(steps)]
    steps = every_instance(steps, task.get("actions"))[: 2 * p.get("max_steps", 12)]
    steps = [s for step in steps for s in [step, *(m for m, w in rebound.items() if w == step)]]
    steps = list(dict.fromkeys(steps))
    plain = plain_replies(effects)
    retry = [  # what answered otherwise than doing nothing: again, after the others (a condition met since)
        rec["eg"]
        for key, rec in effects.items()
        if key in listed and key not in advanced and not ends_tasks(rec) and not says_nothing_new(rec, plain)
    ][:3]
    steps += [eg for eg in retry if eg not in steps]
    if len(steps) < 3:
        return []
    steps = [s for s in steps if s != trigger]  # one try, then the action that shows what it did
    if p.get("ways"):
        steps = _with_ways(steps, ways, {unnumbered(a) for a in own})
    title = "Not tried yet, each then " + trigger if trigger else "Not tried yet"
    return [{"kind": "untried", "title": title, "steps": steps}] + [
        {"kind": "avoid", "action": shown + " before " + first[shown]} for shown in steps if first.get(shown)
    ]
