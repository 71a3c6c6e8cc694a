"""The memory of preludes: what was done before an action that raised the score, stage by stage. A stage
is how often the score had risen in the game so far; the riser of a stage, the action whose step raised
the score from there; its prelude, the actions taken since the last try of a riser (what it rose after).
An action that rises only after another (B after A, and after C at the next stage) shares its credit
with what came before it, as far as a try without that did not rise.

``encode_preludes`` keeps, per goal key (the goal's words, not those every goal has, that the game's
actions named: the things it acted on) and stage, how often each action rose there and was tried there,
and how often each other action was in its prelude when it rose and when it was tried.
``retrieve_preludes`` writes one plan from every game under the key that fits the goal best: per stage, in
the order the score rose, the actions that came before the riser's rises and not before its tries that
failed, then the riser ('Steps in order: A, B, C, B.'). Each stage is read from the games that reached it, failed games among them.

Design code (the sandbox's rules apply); no environment's words: actions, stages and words are what the
agent's games took, scored and said.
"""

from common import (
    bump,
    capped_by,
    count_goal,
    goal_words,
    in_every_goal,
    scored_steps,
    store_factor,
    words,
)


def _goal_things(memory, gw):
    """The goal's words (``gw``) that may tell it from others: no number, none of every goal."""
    return sorted(
        {w.lower() for w in gw if not w.isdigit() and not in_every_goal(memory, "prelude_goals", w, gw)}
    )


def _rising_actions(steps):
    """The actions whose step raised the score without an error."""
    return {s["action"] for s in steps if s["gain"] > 0 and not s["error"]}


def _preludes(steps, risers):
    """``[(stage, action, rose, prelude)]`` for each try of a riser: the stage it was tried at (how often
    the score had risen in the game), whether it rose, and the actions taken since the last try of any
    riser (no error, no rise of their own)."""
    out, since, stage = [], [], 0
    for step in steps:
        rose = step["gain"] > 0 and not step["error"]
        if step["action"] in risers:
            out.append((str(stage), step["action"], rose, list(since)))
            since = []
        elif not step["error"] and step["action"] not in since:
            since.append(step["action"])
        stage += rose
    return out


def encode_preludes(memory, episode, tools, p, store):
    """Per goal key (the words of ``_goal_things`` the game's actions named; none, no record) and stage:
    ``rose`` and ``tried`` per riser (its rises and tries there), ``with`` and ``tried_with`` per riser and
    prelude action (counts of the action in the riser's prelude when it rose, and when it was tried),
    ``order`` per prelude action (its place in the latest prelude it rose after); ``prelude_again``, the
    risers a game saw rise twice. The risers are this game's and those memory knew under the key. Counts
    decay with the store; per key the 12 stages tried most, and the keys risen most up to its cap."""
    table = memory.setdefault("preludes", {})
    factor = store_factor(store)
    for stages in table.values():
        for rec in stages.values():
            for key in ("rose", "tried"):
                rec[key] = {a: round(n * factor, 4) for a, n in rec[key].items()}
            for key in ("with", "tried_with"):
                rec[key] = {a: {x: round(n * factor, 4) for x, n in c.items()} for a, c in rec[key].items()}
    gw = goal_words((episode.get("task") or {}).get("goal", ""))
    count_goal(memory, "prelude_goals", gw)
    things = _goal_things(memory, gw)
    steps = scored_steps(episode)
    acted = {w.lower() for s in steps for w in words(s["action"])}
    key = " ".join(w for w in things if w in acted)
    if key:
        _learn(memory, table, key, steps, store.get("cap", 200))
    print("preludes:", sum(len(s) for s in memory["preludes"].values()), "stages kept")


def _learn(memory, table, key, steps, cap):
    """Count the game's tries of risers under ``key`` (see ``encode_preludes``); the ``cap`` keys with the
    most rises are kept."""
    known = {a for rec in (table.get(key) or {}).values() for a in rec["rose"]}
    tries = _preludes(steps, _rising_actions(steps) | known)
    again = memory.setdefault("prelude_again", {})
    for action in {a for _, a, rose, _ in tries if rose}:
        if sum(1 for _, a, rose, _ in tries if rose and a == action) >= 2:
            again[action] = 1
    memory["prelude_again"] = dict(list(again.items())[-100:])
    if not tries:
        return
    stages = table.setdefault(key, {})
    for stage, action, rose, prelude in tries:
        rec = stages.setdefault(stage, {"rose": {}, "tried": {}, "with": {}, "tried_with": {}, "order": {}})
        bump(rec["tried"], action)
        for x in prelude:
            bump(rec["tried_with"].setdefault(action, {}), x)
        if rose:
            bump(rec["rose"], action)
            for i, x in enumerate(prelude):
                bump(rec["with"].setdefault(action, {}), x)
                rec["order"][x] = i
    table[key] = capped_by(stages, 12, lambda r: sum(r["tried"].values()))
    memory["preludes"] = capped_by(table, cap, lambda s: sum(sum(r["rose"].values()) for r in s.values()))


def _plan_key(table, things):
    """Of the kept keys whose words the goal all says (``things``: a key kept while few goals were seen
    may hold a word every goal has), the one with the most words, then the most rises: a game that took
    the goal's thing to another place is no plan for this one."""
    fits = [k for k in table if set(k.split()) <= set(things)]
    rises = lambda k: sum(sum(r["rose"].values()) for r in table[k].values())  # noqa: E731
    return max(fits, key=lambda k: (len(k.split()), rises(k), k), default="")


def _prelude_of(rec, riser, min_support):
    """What ``riser`` rose after: where some try of it did not rise, the actions that came before its rises
    at least ``min_support`` times with the highest share of its tries after them rising, above its share
    over all tries (a try without them did not rise); where every try rose, those that came before every
    rise. In the order they were taken."""
    rose, came = rec["rose"][riser], rec["with"].get(riser) or {}
    tried = rec["tried_with"].get(riser) or {}
    rate = rose / max(rec["tried"].get(riser, 0), 1e-9)
    if rate >= 1 - 1e-6:
        kept = [x for x, n in came.items() if n >= rose - 1e-6]
    else:
        rates = {x: n / max(tried.get(x, 0), 1e-9) for x, n in came.items() if n >= min_support - 1e-6}
        best = max(rates.values(), default=0)
        kept = [x for x, r in rates.items() if r >= best - 1e-6 and r > rate + 1e-6]
    return sorted(kept, key=lambda x: rec["order"].get(x, 0))


def retrieve_preludes(memory, task, tools, p):
    """A plan (``Steps in order``) under the key that fits the goal (``_plan_key``): per stage it rose
    from, lowest first, the prelude (``_prelude_of``) and the riser that rose there most (once, unless a
    game saw it rise twice: one action may be the riser of every stage, another a milestone of one), up to
    ``max_steps``. [] where no game under such a key raised the score."""
    table, again = memory.get("preludes") or {}, memory.get("prelude_again") or {}
    key = _plan_key(table, [w.lower() for w in goal_words(task.get("goal", "")) if not w.isdigit()])
    plan = []
    for stage in sorted(table.get(key) or {}, key=int):
        rec = table[key][stage]
        if not rec["rose"]:
            continue
        riser = max(rec["rose"], key=lambda a: (rec["rose"][a], a))
        if riser in plan and riser not in again:
            continue  # a milestone rises once in a game: reached at an earlier stage
        plan += [x for x in _prelude_of(rec, riser, p.get("min_support", 1)) if x != riser] + [riser]
    plan = plan[: p.get("max_steps", 20)]
    return [{"kind": "plan", "title": "Steps in order", "steps": plan}] if len(plan) >= 2 else []
