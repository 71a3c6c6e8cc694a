"""Reading a gold-path command as a template and objects, so it can be found in the short list.

A gold path names objects the way the simulator's parser accepts them ("focus on thermometer in
inventory", "open door to kitchen", "examine chocolate"); the list names them its own way. Both
are resolved to the simulator's object ids: a gold command *is in the list* when an entry has the
same template and the same objects. Used by tests, the benchmark and the oracle advice, never by
the list itself.
"""

from __future__ import annotations

import re

from atlas.envs.scienceworld.actions import Choice
from atlas.envs.scienceworld.scene import Scene, door_label, is_door

# One-object (or no-object) commands: (pattern, template id); verbs the parser takes as aliases
# map to the template they act as.
PATTERNS: list[tuple[re.Pattern[str], int]] = [
    (re.compile(p), t)
    for p, t in [
        (r"^look around$", 3),
        (r"^wait1$", 18),
        (r"^wait\d*$", 19),
        (r"^inventory$", 20),
        (r"^task$", 24),
        (r"^open (.+)$", 0),
        (r"^close (.+)$", 1),
        (r"^go to (.+)$", 2),
        (r"^(?:look at|examine) (.+)$", 4),
        (r"^look in (.+)$", 5),
        (r"^(?:activate|turn on) (.+)$", 6),
        (r"^(?:deactivate|turn off) (.+)$", 7),
        (r"^eat (.+)$", 8),
        (r"^focus on (.+)$", 11),
        (r"^read (.+)$", 14),
        (r"^flush (.+)$", 15),
        (r"^disconnect (.+)$", 17),
        (r"^(?:pick up|take) (.+)$", 21),
        (r"^(?:put down|drop) (.+)$", 22),
        (r"^mix (.+)$", 23),
    ]
]
# Two-object commands: (verb, separators, template id). Object names contain the separators too
# ("egg in inventory"), so every split is tried.
PAIRS: list[tuple[str, tuple[str, ...], int]] = [
    ("move ", (" to ", " in ", " into ", " on "), 9),
    ("put ", (" in ", " into ", " on "), 9),
    ("pour ", (" in ", " into "), 10),
    ("use ", (" on ",), 13),
    ("connect ", (" to ",), 16),
    ("dunk ", (" in ",), 26),
]
SUFFIX = re.compile(r"^(.+?) in (?:inventory|[a-z ]+)$")


def parse(command: str) -> list[tuple[int, list[str]]]:
    """Every ``(template, object phrases)`` reading of a command (two-object commands: one per
    place the separator could split it); empty when no template reads it."""
    text = " ".join(command.lower().split())
    for verb, seps, template in PAIRS:
        if text.startswith(verb):
            rest = text[len(verb) :]
            out = []
            for sep in seps:
                for hit in re.finditer(re.escape(sep), rest):
                    out.append((template, [rest[: hit.start()], rest[hit.end() :]]))
            if out:
                return out
    for pattern, template in PATTERNS:
        if m := pattern.match(text):
            return [(template, list(m.groups()))]
    return []


def resolve(phrase: str, scene: Scene) -> set[int]:
    """The visible objects ``phrase`` can name (several when it is ambiguous)."""
    phrase = phrase.strip().lower()
    found = {o for o, n in scene.names.items() if n.lower() == phrase}
    if not found:
        found = {o for o, rs in scene.referents.items() if phrase in (r.lower() for r in rs)}
    if not found:
        found = {
            o for o in scene.names if is_door(scene, o) and door_label(scene.names[o], scene.look) == phrase
        }
    if not found:
        found = {o for o, label in scene.labels.items() if label.lower() == phrase}
    if not found and (m := SUFFIX.match(phrase)):
        inner = resolve(m.group(1), scene)
        held = inner & scene.inventory if phrase.endswith(" in inventory") else inner
        found = held or inner
    return found


def find(command: str, choices: list[Choice], scene: Scene) -> Choice | None:
    """The entry of ``choices`` that does what ``command`` does, or None."""
    for c in choices:
        if c.command == command or c.label == command:
            return c
    for template, phrases in parse(command):
        ids = [resolve(p, scene) for p in phrases]
        if not all(ids):
            continue
        for c in choices:
            if c.template != template or len(c.objects) != len(ids):
                continue
            if all(o in want for o, want in zip(c.objects, ids, strict=True)):
                return c
    return None


__all__ = ["PAIRS", "PATTERNS", "find", "parse", "resolve"]
