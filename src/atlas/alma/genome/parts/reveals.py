"""The memory of what showed new things: an action taken without going anywhere whose step put things in
view that the episode had not shown before (opening a closed box lists what is in it), with how its
thing was before the step ('closed').

``encode_reveals`` keeps, per action (instance numbers as '#'), how often it was taken without going
anywhere, how often such a step showed new things (new words in the actions it brought into the list, or
numbered things no text or action had named before), and how its thing was before (``thing_state``; else the
sentence of the text that named it). ``retrieve_reveals`` writes '<thing> <how it was>: <action>.' for
each action that showed new things in at least half its tries: where what the goal names is out of
sight, what puts things in view ('Box closed: open box 2.'). The agent's matcher applies it
where the observation says so and re-binds the numbers to the listed action of its kind.

Design code (the sandbox's rules apply); no environment's words: a move is a step after which a short
field holds what the action named, a new thing is a word or numbered thing the episode had not shown.
"""

from common import MENTION, STOP, capped_by, scored_steps, store_factor, unnumbered, words
from conditions import thing_state
from rises import said_before


def _listed_words(texts):
    """The words actions name after their first (what they act on, not what they do)."""
    return {w.lower() for t in texts for w in words(t)[1:] if not w.isdigit()}


def _numbered(text):
    return {m.group(1).lower() + " " + m.group(2) for m in MENTION.finditer(str(text))}


def went(step):
    """Whether the step took the agent somewhere: a short text field of the observation changed to a
    value the action names ('shelf 2' after 'go to shelf 2')."""
    before, after = step["obs_before"], step["obs_after"]
    named = {w.lower() for w in words(step["action"])}
    for key, value in after.items() if isinstance(after, dict) else []:
        said = {w.lower() for w in words(value)} if isinstance(value, str) else set()
        if said and len(said) <= 3 and value != (before or {}).get(key) and said <= named:
            return True
    return False


def how_it_was(step):
    """The rule's situation: the kind of each numbered thing the action names with what the text before
    said of it ('box closed'), else the sentence that named it (numbers left out, eight words at
    most); '' where neither says anything."""
    state = [w for w in thing_state(step["before"], step["action"]) if w not in STOP]
    kinds = [m.group(1).lower() for m in MENTION.finditer(step["action"])]
    if state and kinds:
        return " ".join([*dict.fromkeys(kinds), *state])
    said = said_before(step).split()[:8]
    while said and said[-1].lower() in STOP:  # a cut sentence ends on a word, not on 'in a'
        said.pop()
    return " ".join(said)


def encode_reveals(memory, episode, tools, p, store):
    """Per action (instance numbers as '#'): ``n``, steps taken without going anywhere (``went``);
    ``shown``, those that put new things in view (words that no listed action had named after its
    first, or numbered things no text or action had); ``when``, how its thing was before each
    (``how_it_was``, the latest three); ``eg``, the latest such action. A step that ended its episode
    unsolved shows nothing. Counts decay with the store; the most tried are kept, up to its cap."""
    table = memory.setdefault("reveals", {})
    factor = store_factor(store)
    for rec in table.values():
        rec["n"], rec["shown"] = round(rec["n"] * factor, 4), round(rec["shown"] * factor, 4)
    task = episode.get("task") or {}
    offered_actions = [a for a in task.get("actions") or [] if isinstance(a, str)]
    offered = _listed_words(offered_actions)
    named = _numbered(" ".join([task.get("observation_text") or "", *offered_actions]))
    taken = [s for s in episode.get("steps") or [] if str((s.get("action") or {}).get("text") or "")]
    solved = bool(episode.get("success"))
    for step, raw in zip(scored_steps(episode), taken, strict=False):
        added = [a for a in raw.get("new_actions") or [] if isinstance(a, str)]
        listed, shown = _listed_words(added), _numbered(" ".join([step["after"], *added]))
        new = (listed - offered - _listed_words([step["action"]]) - STOP) | (shown - named)
        offered, named = offered | listed, named | shown
        if step["error"] or went(step):
            continue
        rec = table.setdefault(unnumbered(step["action"]), {"n": 0, "shown": 0, "when": [], "eg": ""})
        rec["n"] += 1
        if new and not (step["ended"] and not solved):
            when = how_it_was(step)
            rec["shown"], rec["eg"] = rec["shown"] + 1, step["action"]
            rec["when"] = [*[w for w in rec["when"] if w != when], when][-3:] if when else rec["when"]
    kept = {k: r for k, r in table.items() if r["n"] >= 0.05}
    memory["reveals"] = capped_by(kept, store.get("cap", 200), lambda r: r["n"])
    print("reveals:", sum(1 for r in memory["reveals"].values() if r["shown"]), "actions showed new things")


def retrieve_reveals(memory, task, tools, p):
    """A rule '<how its thing was>: <action>.' for each action that showed new things ``p['min_shown']``
    times or more and in at least half its tries (``encode_reveals``), most shown first, up to
    ``p['max_rules']``."""
    out = []
    table = [r for r in (memory.get("reveals") or {}).values() if r.get("shown") and r.get("eg")]
    for rec in sorted(table, key=lambda r: -r["shown"]):
        if rec["shown"] >= p.get("min_shown", 1) - 1e-6 and rec["shown"] * 2 >= rec.get("n", 0):
            out += [
                {"kind": "rule", "cond": [w], "action": rec["eg"]} for w in reversed(rec.get("when") or [])
            ]
    return out[: p.get("max_rules", 8)]
