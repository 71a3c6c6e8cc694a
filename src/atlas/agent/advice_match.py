"""Which listed actions the memory's advice recommends *now*: a lexical match of advice lines
against the current observation.

Why: a 0.5B–1.5B model given "In room_D carrying the scroll: move_to room_B" chooses the advised
action in about half the situations (measured: teacher-forced decision accuracy 0.45 for the
0.5B model with the full answer in its notes), however the notes are framed. It can copy; it
cannot reliably match a situation to a rule. This module does the matching: each advice line
that names a listed action is a rule, the rest of the line is its condition, and the lines whose
condition best matches the observation (words and adjacent word pairs, earlier observation words
weighing a little more) lend their actions a bonus that the agent adds to the model's scores.
Advice that names no listed action, or whose conditions match nothing, changes nothing; without
advice the agent is unchanged. How well a design's advice can be used thus depends on it being
written as "<situation in the observation's words>: <action as listed>" — which the design
contract tells the MetaAgent.
"""

from __future__ import annotations

import ast
import functools
import itertools
import math
import re
from collections.abc import Collection
from pathlib import Path
from typing import NamedTuple

from atlas.envs.base import words as _tokens
from atlas.envs.policies import goal_words

# The stop words: one list, shared with the genome's memory parts. It lives in their (sandboxed, design-code)
# helper file, which is read here as data (this layer imports nothing of ``atlas.alma``).
_STOP_SOURCE = Path(__file__).resolve().parents[1] / "alma" / "genome" / "parts" / "common.py"


def shared_stop_words(source: Path = _STOP_SOURCE) -> frozenset[str]:
    """The ``STOP_WORDS`` tuple of the memory parts' helper file, read with ``ast`` (never executed)."""
    tree = ast.parse(source.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "STOP_WORDS" for t in node.targets
        ):
            return frozenset(ast.literal_eval(node.value))
    raise RuntimeError(f"{source} defines no STOP_WORDS")


_COMMON = shared_stop_words()


def _content(tokens: list[str]) -> list[str]:
    return [t for t in tokens if t not in _COMMON]


# A rule applies only when at least this share of its condition holds: "In room_C when you carry the
# scroll" does not apply to room_C with empty hands (it would pull a searching agent to the goal room).
MIN_MATCH = 0.5

_SENTENCE = re.compile(r"[.!?;\n]+(?:\s|$)")


def _features(text: str) -> set[object]:
    """Content words and unordered pairs of neighbouring content words within a sentence
    ("carry nothing" ≠ "carry scroll")."""
    features: set[object] = set()
    for sentence in _SENTENCE.split(text):
        words = _content(_tokens(sentence))
        features.update(words)
        features.update(frozenset(p) for p in itertools.pairwise(words) if p[0] != p[1])
    return features


def advice_lines(advice: str) -> list[str]:
    """The advice's lines (a one-line advice is cut into its sentences)."""
    lines = [line.strip(" -*\t") for line in advice.splitlines() if line.strip(" -*\t")]
    if len(lines) == 1:
        lines = [s.strip() for s in re.split(r"(?<=[.!?;])\s+", lines[0]) if s.strip()]
    return lines


def _phrase(text: str) -> str:
    """Tokens joined by single spaces, padded: a label is named where its phrase occurs whole."""
    return " " + " ".join(_tokens(text)) + " "


def _is_plan(steps: list[str]) -> bool:
    """A plan is a list of short commands (two thirds of its steps six words or fewer), not a few long rules."""
    return len(steps) >= 2 and sum(len(_tokens(step)) <= 6 for step in steps) * 3 >= len(steps) * 2


_FAILED = frozenset({"fail", "failed", "failure", "avoid"})
# What not to do: "Avoid: <action>." (anywhere) or "Do not <action> when <situation>." (there): the named
# listed action is lowered by how well the situation matches (1 when there is none).
_AVOID = re.compile(r"^\W*(?:avoid|do not|don't|dont)\b\W*", re.IGNORECASE)
_WHEN = re.compile(r"\bwhen\b", re.IGNORECASE)
_UNLESS = re.compile(r"\s+unless\s+(?=[\"\u201c])", re.IGNORECASE)  # 'unless "you are in hall"'
# "Avoid: <action> before <other>.": lowered until an action done is the other (it may need that first).
_BEFORE = re.compile(r"\s\bbefore\b\s", re.IGNORECASE)
# "Avoid: focus on … unless advised.": the actions that begin with the words before the ellipsis (an advised
# one keeps its match: the penalty and the match add up).
_ANY = re.compile(r"…|\.\.\.")
# A plan by its title, read as one from its first step ("Steps in order: gather ore, combine coal ore.").
ORDERED = "steps in order"
# A list of actions to try ("Not tried yet: add tannin, add urea, heat."): each is a try. One whose try
# raised the score has done what it does, and taking it again is no longer a try: where that is a reagent
# that already reacted, the second dose ruined the sample (a small model copies the list again once it has
# walked it). A move that only changed where the agent is raises no score, so it may be taken again.
TRY_ONCE = "not tried yet"
# "Not tried yet, each then wait a day: water x, mist x." (tries whose effect shows only once another action
# is taken: a night, a firing): after a try of the list, that action; then the next try.
_EACH_THEN = re.compile(r"^\W*not tried yet\W+each then\s+([^:]+):", re.IGNORECASE)
# "Not tried yet: go to the cashier then pay the fee, ...": a try listed before only after its way was taken.
# Where no try not yet taken is listed here, the agent takes the way to the first whose way is listed, at
# most this many times in an episode: on a permit-office plug-in the 0.5B spent 11 to 22 of its 25 steps
# walking between windows once no try was listed where it stood.
_WAY = re.compile(r"\s+then\s+", re.IGNORECASE)
WAY_TRIES = 2
# "Once only: flip …." (a memory that saw a switch flipped back undo what it did): each listed action so begun
# is passed over, like a try, once its step raised the score.
ONCE = "once only"
# What a spent try is lowered by: far below any match, so it is taken only where nothing else is listed. One
# (3 nats for the agent) left the 0.5B model flipping a mains switch back off on most tasks of a wiring.
SPENT = 10.0
# Nats the task agent adds to each action the advice names, times its match (``TaskAgent(advice_weight=)``).
# With 3 the 0.5B model followed none of a full answer where its habits were surer (log-probabilities -0.6
# against -5.5); 10 did no worse than 3 wherever both were played (docs/results/eval-*-advice-weight).
ADVICE_WEIGHT = 10.0
# What the agent added before: a run folder whose settings do not record the weight resumes with it.
ADVICE_WEIGHT_BEFORE = 3.0
_NUMBER = re.compile(r"(?<![a-z0-9_])\d+(?![a-z0-9_])")


def _is_avoid(line: str) -> bool:
    return bool(_AVOID.match(line))


def _is_once(line: str) -> bool:
    return line.lower().startswith(ONCE)


def _is_try_list(line: str) -> bool:
    return line.lower().startswith(TRY_ONCE)


def _blind(phrase: str) -> str:
    """A phrase with its instance numbers as '#': 'take key 2 from shelf 1' is 'take key # from shelf #'."""
    return _NUMBER.sub("#", phrase)


def blind_action(action: str) -> str:
    """An action's words with its numbers as '#': 'turn steel 4' and 'turn steel 2' act on the same thing."""
    return _blind(_phrase(action)).strip()


# What a thing is called besides its number, as a memory writes it after the action: 'open valve 3 (coolant)'.
_DESCRIBED = re.compile(r"\(([^()]*)\)[\s.,;!]*$")
_MENTION = re.compile(r"([a-z_][a-z0-9_]*)\s+(\d+)(?![a-z0-9_])")
_PIECE = re.compile(r"[.!?;\n]+")


def _description(text: str) -> set[str]:
    """The content words of a trailing '(...)' of an advised action: what its thing is called."""
    found = _DESCRIBED.search(text)
    return set(_content(_tokens(found.group(1)))) if found else set()


def _things(text: str) -> list[str]:
    """The numbered things ``text`` names, as 'valve 3'."""
    return [f"{a} {b}" for a, b in _MENTION.findall(" ".join(_tokens(text)))]


@functools.lru_cache(maxsize=64)  # read for every advice line of a turn
def _called(observation: str) -> dict[str, frozenset[str]]:
    """What the observation calls each numbered thing besides its number: the content words it says after
    the thing, up to the next numbered thing or the end of the sentence, that it says after no other thing
    of the kind ('coolant' in 'valve 3 (coolant) closed; valve 1 (steam) closed'; not 'closed')."""
    said: dict[str, set[str]] = {}
    for piece in _PIECE.split(observation.lower()):
        found = list(_MENTION.finditer(piece))
        for i, m in enumerate(found):
            end = found[i + 1].start() if i + 1 < len(found) else len(piece)
            words = {w for w in _content(_tokens(piece[m.end() : end])) if not w.isdigit()}
            said.setdefault(f"{m.group(1)} {m.group(2)}", set()).update(words)
    return {
        thing: frozenset(
            words.difference(*(w for t, w in said.items() if t != thing and t.split()[0] == thing.split()[0]))
        )
        for thing, words in said.items()
    }


def _by_description(raw: str, phrases: dict[str, str], observation: str) -> list[str] | None:
    """The one listed action that does what ``raw`` (an advised action with a description, 'open valve 3
    (coolant)') does to the thing the observation now calls so ('open valve 1' where it says 'valve 1
    (coolant)'): the numbers of one task are not those of the next, what things are called is. [] when the
    thing so called is here but no listed action does that to it (a valve already open lists no 'open');
    None when the observation calls nothing so (no description, or words that name nothing here): the
    number decides."""
    wanted = _description(raw)
    if not wanted or not observation:
        return None
    stripped = _DESCRIBED.sub("", raw)
    kinds = {thing.split()[0] for thing in _things(stripped)}
    named = {t for t, words in _called(observation).items() if t.split()[0] in kinds and wanted & words}
    if not named:
        return None
    blind = _blind(_phrase(stripped))
    fits = [label for label, p in phrases.items() if _blind(p) != p and _blind(p) in blind]
    hits = [label for label in fits if named & set(_things(label))]
    return hits if len(hits) == 1 else []


def _named(
    raw: str, phrases: dict[str, str], *, unique: bool = True, observation: str = "", begun: bool = False
) -> tuple[list[str], bool]:
    """The listed action ``raw`` (advice text) names by what its thing is called (``_by_description``), and
    True; else the labels whose phrase it names whole, and False; else, re-bound, the labels it names with
    other instance numbers ('take key 2 from shelf 1' for the listed 'take key 1 from shelf 3') and True:
    with ``unique``, only where exactly one listed action fits. With ``begun`` (a plan's step), last, the one
    listed action that begins with all of ``raw``'s words ('drive down the yard' for the listed 'drive down
    the yard with the coal truck'), and False."""
    described = _by_description(raw, phrases, observation)
    if described is not None:
        return described, bool(described)
    text = _phrase(raw)
    hits = [label for label, p in phrases.items() if p in text]
    if hits:
        return hits, False
    blind = _blind(text)
    loose = [label for label, p in phrases.items() if _blind(p) != p and _blind(p) in blind]
    if len(loose) == 1 or (loose and not unique):
        return loose, True
    started = [label for label, p in phrases.items() if begun and _begins(p, text)]
    return (started, False) if len(started) == 1 else ([], False)


def _begins(phrase: str, step: str) -> bool:
    """Whether ``phrase`` begins with every word of the plan step ``step``, two words or more."""
    return len(step.split()) >= 2 and phrase.startswith(step)


def _label_pattern(label: str, rebound: bool) -> str:
    """A regex of the label's words (any instance numbers where it was ``rebound``)."""
    pieces = [r"\d+" if rebound and t.isdigit() else re.escape(t) for t in _tokens(label)]
    return r"(?<![\w])" + r"\W+".join(pieces) + r"(?![\w])"


def _without(text: str, label: str, rebound: bool) -> str:
    """``text`` without the label's words (any instance numbers where it was ``rebound``)."""
    return re.sub(_label_pattern(label, rebound), " ", text, flags=re.IGNORECASE)


def _a_choice(line: str, hits: list[str]) -> bool:
    """Whether ``line`` names its actions as a choice: two or more of one kind on other numbers ('band: turn
    dial 2, turn dial 5'), some of them maybe not listed now."""
    kinds = {blind_action(h) for h in hits}
    return len(kinds) == 1 and len(re.findall(_label_pattern(hits[0], True), line, flags=re.IGNORECASE)) >= 2


def _plans(advice: str) -> list[tuple[list[str], str]]:
    """``(steps, line)`` for each plan in the advice: every line that lists three or more short steps
    separated by commas or semicolons ("Search plan: move_to room_B, move_to room_D, move_to room_C."),
    or any number under the title ``ORDERED`` or ``TRY_ONCE`` (however long each step: 'feed the ember lily
    with fish emulsion' is one), else the whole advice when its lines are a plan (a
    walkthrough, one command per line). A line that is a plan itself is never one step of another: short
    rules above a search plan ("candle: take candle.") made the advice look like a plan whose last step
    named every move of the search at once. What to avoid is never a step."""
    lines = [line for line in advice_lines(advice) if not _is_avoid(line) and not _is_once(line)]
    out = []
    for before, line in zip(["", *lines], lines, strict=False):
        if line.lower().startswith(ORDERED) or _is_try_list(line):  # titled: its steps are commands
            steps = _titled_steps(line)
            if steps:
                out.append((steps, line))
            continue
        if _FAILED & set(_tokens(before + " " + line)):
            continue  # a failed attempt's moves ("Outcome: failure / Actions: ...") are not a plan to follow
        steps = [part.strip() for part in re.split(r"[;,]", line) if part.strip()]
        if len(steps) >= 3 and _is_plan(steps):
            out.append((steps, line))
    if not out and _is_plan(lines):
        return [(lines, "")]
    return out


def _titled_steps(line: str) -> list[str]:
    """The steps of a titled list ("Steps in order: a, b; c."): what follows the title, cut at commas; of a
    ``TRY_ONCE`` list, the tries without their ways (``_ways``)."""
    steps = _written_steps(line)
    return [_WAY.split(s, maxsplit=1)[-1] for s in steps] if _is_try_list(line) else steps


def _written_steps(line: str) -> list[str]:
    """What follows a titled list's title, cut at commas and semicolons, as written."""
    return [part.strip(" .") for part in re.split(r"[;,]", line.partition(":")[2]) if part.strip(" .")]


def _ways(line: str) -> dict[str, str]:
    """``{try: way}`` for each try of a ``TRY_ONCE`` line written with its way ('go to the cashier then pay
    the fee': the action whose step listed the try before)."""
    parts = [_WAY.split(step, maxsplit=1) for step in _written_steps(line)]
    return {p[1]: p[0] for p in parts if len(p) == 2}


def _way_to_a_try(
    line: str,
    tries: list[str],
    done: list[str],
    phrases: dict[str, str],
    observation: str,
    avoided: Collection[str],
) -> tuple[str, str] | None:
    """Where no try of ``line`` not yet taken (``tries``) is listed here, the way to the first whose way is
    (``_ways``): that listed action and its text. None for a way lowered now or taken ``WAY_TRIES`` times
    already (one that did not list its try here is not walked back and forth)."""
    ways = _ways(line)
    for attempt in tries:
        way = ways.get(attempt)
        if not way or _named(attempt, phrases, observation=observation, begun=True)[0]:
            continue  # no way known, or listed here and lowered now
        named, _ = _named(way, phrases, observation=observation, begun=True)
        if named:
            label = max(named, key=lambda label: len(_tokens(label)))
            walked = sum(_phrase(action) == _phrase(label) for action in done)
            if label not in avoided and walked < WAY_TRIES:
                return label, way
    return None


def _plan_step(
    advice: str, done: list[str], labels: list[str], observation: str = "", avoided: Collection[str] = ()
) -> tuple[str, str] | None:
    """The next step of the advice's plan (an ordered list of actions, e.g. a walkthrough) and its text: the
    first listed action named after the last step already done, found by walking the done actions through
    the plan (a step done with other instance numbers counts where no step names it exactly: the one
    describing the same thing, else the first that fits; not where its number is a setting, ``_a_setting``).
    A ``TRY_ONCE`` list's steps are tries in any order: the first not yet taken, one that an avoid line
    lowers now (``avoided``) passed over for the next and taken once it is no longer lowered; where its
    title says 'each then <action>', that action right after each try; where none not yet taken is listed,
    the way to one (``_way_to_a_try``)."""
    phrases = {label: _phrase(label) for label in labels if _tokens(label)}
    called = _called(observation) if observation else {}
    for steps, line in _plans(advice):
        tries = _is_try_list(line)
        at = 0
        for action in done:
            phrase = _phrase(action)
            said = frozenset().union(*(called.get(t, frozenset()) for t in _things(action)))
            fits = [
                j + 1
                for j in range(at, len(steps))
                if (_blind(phrase) in _blind(_phrase(steps[j])) or _begins(phrase, _phrase(steps[j])))
                and not _a_setting(steps[j], action, phrases, called)
            ]
            alike = [j for j in fits if said & _description(steps[j - 1])]
            exact = next(
                (j + 1 for j in range(at, len(steps)) if phrase in _phrase(steps[j]) and not alike), None
            )
            at = exact if exact is not None else next(iter(alike or fits), at)
        then = _EACH_THEN.match(line)
        if then and done and any(_phrase(done[-1]) in _phrase(s) for s in steps):  # a try: then its trigger
            named, _ = _named(then.group(1), phrases, observation=observation, begun=True)
            if named:
                return max(named, key=lambda label: len(_tokens(label))), then.group(1)
        if (
            tries
        ):  # a try list's steps in any order: each not yet taken (one passed over while avoided comes back)
            taken = [_phrase(action) for action in done]
            steps, at = [s for s in steps if not any(t in _phrase(s) for t in taken)], 0
        for step in steps[at:]:
            named, _ = _named(step, phrases, observation=observation, begun=True)
            if named:  # the longest: 'take key 2' names 'take key' too
                label = max(named, key=lambda label: len(_tokens(label)))
                if not (tries and label in avoided):
                    return label, step
        if tries and (way := _way_to_a_try(line, steps, done, phrases, observation, avoided)):
            return way
    return None


def _a_setting(step: str, action: str, phrases: dict[str, str], called: dict[str, frozenset[str]]) -> bool:
    """Whether the done ``action`` is the plan's ``step`` at another number that is a setting, not another
    instance: the step names a listed action as written, and the text names neither's numbered thing
    ('plug jack 2' is not the plan's 'plug jack 4' where the jacks are sockets of one panel; 'go to cabinet
    3' is the plan's 'go to cabinet 1' once the text shows cabinet 3)."""
    if _phrase(action) in _phrase(step):
        return False
    hits, rebound = _named(step, phrases)
    return bool(hits) and not rebound and not {*_things(step), *_things(action)} & set(called)


def _search_yields(advice: str, goal: str, labels: list[str], avoided: Collection[str] = ()) -> bool:
    """Whether the advice's plans are a search (no step names a word of the goal) and a listed action
    the advice does not lower (``avoided``) names one on what it acts on (after its first word, its
    kind): the thing the goal names is in reach, so the search's next move would walk away from it. A
    goal's verb is no thing in reach: 'focus on bed' does not make a search yield to a goal that says
    'focus on the animal' (on ScienceWorld every listed focus did, and the advice went unread in every
    room). A plan that acts on the goal itself (a walkthrough, a replayed success) never yields, nor does
    one where memory lowers every goal-named action (a goal ending in 'leave the office with it', where
    leaving first ended every game unsolved)."""
    wanted = goal_words(goal)
    if any(wanted & set(_tokens(step)) for plan, _ in _plans(advice) for step in plan):
        return False
    return any(wanted & set(_tokens(label)[1:]) for label in labels if label not in avoided)


def next_planned(advice: str, done: list[str], labels: list[str]) -> dict[str, float]:
    """``{label: 1.0}`` for the next planned step of a plan-shaped advice (see ``_plan_step``)."""
    step = _plan_step(advice, done, labels)
    return {step[0]: 1.0} if step else {}


class Match(NamedTuple):
    """What the advice says for now: ``actions`` (``{label: match}``; negative for an action to avoid), the
    ``lines`` that say it, and
    whether a search plan ``yielded`` (its next step would lead away from a listed action naming the
    goal: see ``match_advice``)."""

    actions: dict[str, float]
    lines: list[str]
    yielded: bool = False


def advice_now(
    advice: str,
    observation: str,
    labels: list[str],
    done: list[str] | None = None,
    goal: str = "",
    advanced: Collection[str] = (),
) -> tuple[dict[str, float], list[str]]:
    """``({label: match}, lines)``: see ``match_advice``."""
    match = match_advice(advice, observation, labels, done, goal, advanced)
    return match.actions, match.lines


def match_advice(
    advice: str,
    observation: str,
    labels: list[str],
    done: list[str] | None = None,
    goal: str = "",
    advanced: Collection[str] = (),
) -> Match:
    """The listed actions named by the advice lines whose condition best
    matches ``observation`` (match in [MIN_MATCH, 1]; only the best-matching lines count, ties all do;
    a line whose condition quotes a phrase the observation does not show word for word does not apply),
    and those lines. When no line's condition holds by at least ``MIN_MATCH``, the advice is read as a
    plan: the next planned step after the actions ``done`` so far — unless the plan is a search (none of
    its steps names a word of ``goal``) and a listed action names one (a search does not pull the agent
    away from what its goal names: the match says it ``yielded``, and the agent chooses there as it
    would without advice). Empty when the advice names no listed action. Avoid lines ("Avoid: <action>.",
    "Do not <action> when <situation>.") add a negative value for the actions they name where they hold
    (``_avoid``), whatever else applies; so do the steps of a ``TRY_ONCE`` list that are among the actions
    done whose step raised the score (``advanced``; ``_tried_once``), and the listed actions of the kind of
    a choice already made (``_chosen``: one of them raised the score and its rise holds; another would
    set the same thing again). An agent adds the values to its own scores."""
    if not advice.strip() or not labels:
        return Match({}, [])
    seen = _content(_tokens(observation))
    first: dict[str, int] = {}
    for i, word in enumerate(seen):
        first.setdefault(word, i)
    weight: dict[object, float] = {w: 1.0 - 0.25 * i / max(len(seen), 1) for w, i in first.items()}
    weight.update({f: 1.0 for f in _features(observation) if isinstance(f, frozenset)})
    phrases = {label: _phrase(label) for label in labels if _tokens(label)}
    rules: list[tuple[str, list[str], float]] = []
    avoided: dict[str, float] = {}
    unadvised: dict[
        str, float
    ] = {}  # lowered unless the advice names them ('Avoid: focus on … unless advised')
    avoid_lines: list[str] = []
    for line in advice_lines(advice):
        if _is_avoid(line) or _is_once(line) or _is_try_list(line) or line.lower().startswith(ORDERED):
            continue  # a plan's (or a try list's) untaken steps are no situation that holds
        hits, rebound = _named(line, phrases, observation=observation)
        if not hits:
            continue
        if _chosen(line, hits, advanced, observation):  # made: another of its kind would take it back
            kind = blind_action(hits[0])
            for label in phrases:
                if label not in advanced and blind_action(label) == kind:
                    avoided[label] = min(avoided.get(label, 0.0), -SPENT)
            continue
        condition_text = line
        choice = _a_choice(line, hits)
        for label in hits:  # the condition is the line without the actions it names (a choice's unlisted too)
            condition_text = _without(condition_text, label, rebound or choice)
        condition = _condition(condition_text, observation)
        if condition:
            # a condition of quoted phrases only, each shown word for word, holds whole wherever they stand
            exact = _QUOTED.search(condition_text) and not _features(_QUOTED.sub(" ", condition_text))
            rules.append((line, hits, 1.0 if exact else _fit(condition, weight)))
    for line in advice_lines(advice):
        if _is_avoid(line):
            _avoid(
                line,
                phrases,
                weight,
                unadvised if _ANY.search(line) else avoided,
                avoid_lines,
                observation,
                done or [],
            )
    _tried_once(advice, phrases, advanced, avoided, observation)
    best = max((m for _, _, m in rules), default=0.0)
    if best < MIN_MATCH:
        step = _plan_step(advice, done or [], labels, observation, avoided)
        if step is None:
            return Match(_with(avoided, {}, unadvised), avoid_lines)
        if goal and _search_yields(advice, goal, labels, avoided):
            lowered = _with(avoided, {}, unadvised)
            return Match(lowered, avoid_lines, yielded=not lowered)
        return Match(_with(avoided, {step[0]: 1.0}, unadvised), [step[1], *avoid_lines])
    named: dict[str, float] = {}
    lines: list[str] = []
    for line, hits, match in rules:
        if match >= best - 1e-9:
            lines.append(line)
            for label in hits:
                named[label] = match
    return Match(_with(avoided, named, unadvised), lines + avoid_lines)


def _chosen(line: str, hits: list[str], advanced: Collection[str], observation: str) -> bool:
    """Whether ``line`` offers a choice among one kind of action on other numbers ('band: turn dial 2, turn
    dial 5') and one of them raised the score in this episode, its rise still holding: the choice is made."""
    if not advanced:
        return False
    made = _named(line, {a: _phrase(a) for a in advanced}, observation=observation)[0]
    return _a_choice(line, hits) and any(blind_action(a) == blind_action(hits[0]) for a in made)


# A quoted phrase in a condition ('carry coin "you are in room_F": put_down coin.') must be shown word for word.
_QUOTED = re.compile(r'["\u201c]([^"\u201c\u201d]+)["\u201d]')


def _condition(text: str, observation: str) -> set[object] | None:
    """The features of a condition (``_features``), scored by how many the observation shows; None when
    a phrase it quotes is not in the observation word for word (then the line does not apply). The
    quoted words are features only where the condition has no others."""
    quoted = [_phrase(q) for q in _QUOTED.findall(text) if _tokens(q)]
    if quoted and not all(q in _phrase(observation) for q in quoted):
        return None
    return _features(_QUOTED.sub(" ", text)) or _features(" ".join(quoted))


def _fit(condition: set[object], weight: dict[object, float]) -> float:
    # fsum: exactly rounded, so the order of the set (which changes per process with string hashing)
    # cannot change the last digits, which go into the model call's cache key
    return math.fsum(weight.get(f, 0.0) for f in condition) / len(condition)


def _avoid(
    line: str,
    phrases: dict[str, str],
    weight: dict[object, float],
    out: dict[str, float],
    lines: list[str],
    observation: str = "",
    done: list[str] | None = None,
) -> None:
    """Lower (in ``out``) each listed action an avoid line names: by 1 without a situation, else by how well
    its situation ('when ...') matches, where it holds by ``MIN_MATCH``; one named 'before' another action
    only until an action ``done`` is that other. An action named with other instance numbers is lowered in
    every instance listed (what did nothing on one did nothing on its like); a line whose action ends in an
    ellipsis names every listed action that begins with the words before it; 'Avoid: A unless "P".' holds
    where the quoted phrase P is not shown, and lowers A by ``SPENT``."""
    body = _AVOID.sub("", line)
    parts = _WHEN.split(body, maxsplit=1)
    action, situation = parts[0], parts[1] if len(parts) > 1 else ""
    action, *unless = _UNLESS.split(action, maxsplit=1)
    if unless and _condition(unless[0], observation) is not None:
        return  # 'Avoid: A unless "P".': not where P is shown
    action, *first = _BEFORE.split(action.strip(" ."), maxsplit=1)
    if first and _blind(_phrase(first[0])) in {_blind(_phrase(d)) for d in done or []}:
        return
    if _ANY.search(action):  # 'Avoid: focus on … unless advised': every listed action that begins so
        hits = _so_begun(action, phrases)
    else:
        hits, _ = _named(action, phrases, unique=False, observation=observation)
    condition = _condition(situation, observation) if situation.strip() else set()
    match = _fit(condition, weight) if condition else 1.0 if condition is not None else 0.0
    if not hits or match < MIN_MATCH:
        return
    lines.append(line)
    lowered = SPENT if unless else match  # a quoted place it finishes in is exact: elsewhere it is a waste
    for label in hits:
        out[label] = min(out.get(label, 0.0), -lowered)


def _so_begun(text: str, phrases: dict[str, str]) -> list[str]:
    """The listed actions that begin with the words before the ellipsis of ``text`` ('focus on …'), longer."""
    head = _phrase(_ANY.split(text, maxsplit=1)[0])
    return [label for label, p in phrases.items() if p.startswith(head) and p != head] if head.strip() else []


def _tried_once(
    advice: str, phrases: dict[str, str], advanced: Collection[str], out: dict[str, float], observation: str
) -> None:
    """Lower by ``SPENT`` (in ``out``) each listed action in ``advanced`` that a ``TRY_ONCE`` line names, or
    that a ``ONCE`` line names or names the kind of ('flip …' or 'flip ...': every listed action that
    begins so)."""
    if not advanced:
        return
    for line in advice_lines(advice):
        if not _is_try_list(line) and not _is_once(line):
            continue
        for step in _titled_steps(line):
            hits = _named(step, phrases, observation=observation)[0]
            for label in hits + (_so_begun(step + " …", phrases) if _is_once(line) else []):
                if label in advanced:
                    out[label] = min(out.get(label, 0.0), -SPENT)


def _with(
    avoided: dict[str, float], advised: dict[str, float], unadvised: dict[str, float] | None = None
) -> dict[str, float]:
    """The advised actions' matches plus the avoided ones' (negative) penalties, and the penalties of
    ``unadvised`` for the actions not advised."""
    out = dict(advised)
    for label, penalty in avoided.items():
        out[label] = round(out.get(label, 0.0) + penalty, 12)
    for label, penalty in (unadvised or {}).items():
        if label not in advised:
            out[label] = min(out.get(label, 0.0), penalty)
    return out


def advised_actions(
    advice: str,
    observation: str,
    labels: list[str],
    done: list[str] | None = None,
    goal: str = "",
    advanced: Collection[str] = (),
) -> dict[str, float]:
    """The actions part of ``advice_now``."""
    return advice_now(advice, observation, labels, done, goal, advanced)[0]


__all__ = [
    "MIN_MATCH",
    "ONCE",
    "ORDERED",
    "SPENT",
    "TRY_ONCE",
    "Match",
    "advice_lines",
    "advice_now",
    "advised_actions",
    "blind_action",
    "match_advice",
    "next_planned",
    "shared_stop_words",
]
