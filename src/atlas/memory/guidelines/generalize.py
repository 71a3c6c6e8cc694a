"""Stage 5a, generalization: strip task-specific entities from descriptions and tips.

``RuleGeneralizer`` (free) replaces emails, URLs, uuids/hex ids, personal paths (under a home or a
temporary folder), quoted names, ticket numbers ("PROJ-123", "#42"), numbers and ids such as
``room_B`` with their category (``generalize_text``, applied to tips too). What a coding tip is
about is never rewritten: a backticked span (``make test``), a quoted command or file name, a flag
(``--dry-run``), a path inside a project or a system path (``src/shop/cart.py``,
``/etc/nginx/nginx.conf``), a package with its version constraint (``numpy<2.0``) and a version
("Python 3.12") stay as written; only a ticket number inside them becomes ``<ticket>``.
Descriptions — task and subtask keys and the queries compared with them (``generalize_description``)
— also lose names and objects: days, months and times; capitalized names inside a sentence (a name
used as a modifier is dropped, "Spotify password" → "password"; one standing alone becomes "a name",
possessives "someone's"); the single-word object of a carrying verb ("bring the key to" →
"bring an object to"); and the payload of the task — what it is about, titled, reporting, asking for
("post in the forum titled Best boots" → "post in the forum"). ``LLMGeneralizer`` (the bank's default when it has an LLM) rewrites
descriptions the way a person would ("Retrieve Spotify password for john.doe@email.com" → "Retrieve
service account credentials") and is followed by the rule pass as a safety net."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from atlas.memory.guidelines.prompts import stage_messages
from atlas.memory.guidelines.schemas import Generalized, bounded

if TYPE_CHECKING:
    from atlas.infra.llm.client import LLMClient

_SUBS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\b[\w.+-]+@[\w-]+(\.[\w-]+)+\b"), "an email address"),
    (re.compile(r"\bhttps?://\S+"), "a URL"),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I), "an id"),
    (re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{8,}\b", re.I), "an id"),
    (re.compile(r"(?<![\w/])(?:/[\w.-]+){2,}/?"), "a file path"),
    (re.compile(r"\"[^\"]{1,60}\"|'[^'\s][^']{0,58}'|`[^`]{1,60}`|“[^”]{1,60}”"), "a named item"),
    # ids with an underscore and a short suffix: room_B, obj_12, user_3a → "a room", "an obj", ...
    (re.compile(r"\b([A-Za-z]+)[_-](?:[A-Z]{1,2}|\d+[A-Za-z]?|[A-Za-z]\d+)\b"), r"\1#"),
    (re.compile(r"\$?\b\d+(?:[.,:]\d+)*\b%?"), "N"),
]
# a ticket of one task: JIRA-style keys and GitHub-style numbers ("PROJ-1234", "#42")
_TICKET = re.compile(r"\b[A-Z][A-Z0-9]{1,9}-\d+\b|(?<![\w&#])#\d+\b")
# what a coding tip is about, kept as written (see the module docstring)
_CODE_SPAN = re.compile(r"`[^`\n]{1,200}`")
_QUOTED = re.compile(r"\"([^\"\n]{1,60})\"|'([^'\s][^'\n]{0,58})'|“([^”\n]{1,60})”")
_VERSION_SPEC = re.compile(
    r"(?<![\w/.-])[A-Za-z][\w.-]*(?:\[[\w,-]+\])?(?:===?|>=|<=|~=|!=|<|>|\^|@)v?\d[\w.*+-]*"
)
_VERSION = re.compile(r"(?<=[A-Za-z] )v?\d+\.\d+(?:\.\d+)*\b")
_FLAG = re.compile(r"(?<![\w-])--?[A-Za-z][\w-]*(?:=[^\s,;)`'\"]+)?")
_PATH = re.compile(r"(?<![\w/~.@-])(?:~|\.{1,2})?/?(?:[\w.@+-]+/)+[\w.@+-]*")
# paths of one person or one run: abstracted ("a file path"), unlike a project's or the system's
_PERSONAL = re.compile(r"^(?:/home/|/Users/|/tmp/|/var/folders/|/private/|/var/tmp/)")
_EXTENSION = re.compile(r"\.[A-Za-z][\w]{0,7}$")
COMMAND_WORDS = frozenset(
    [
        "make",
        "npm",
        "npx",
        "pnpm",
        "yarn",
        "pip",
        "pip3",
        "pipx",
        "uv",
        "uvx",
        "poetry",
        "pytest",
        "python",
        "python3",
        "tox",
        "nox",
        "cargo",
        "go",
        "rustc",
        "rustup",
        "gcc",
        "cmake",
        "docker",
        "podman",
        "kubectl",
        "git",
        "gh",
        "node",
        "deno",
        "bun",
        "bundle",
        "rake",
        "rails",
        "gradle",
        "./gradlew",
        "mvn",
        "dotnet",
        "ruff",
        "mypy",
        "black",
        "isort",
        "flake8",
        "pylint",
        "eslint",
        "prettier",
        "tsc",
        "jest",
        "vitest",
        "just",
        "bash",
        "sh",
        "sudo",
        "apt",
        "apt-get",
        "brew",
        "systemctl",
        "nginx",
        "terraform",
        "helm",
        "ansible",
        "php",
        "composer",
        "swift",
        "conda",
        "mamba",
        "pre-commit",
        "alembic",
        "django-admin",
        "manage.py",
    ]
)
_ARTICLE_FIX = re.compile(r"\b(the|a|an) (an?) ", re.I)

_DAYS = r"(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day"
_MONTHS = r"(?:January|February|March|April|May|June|July|August|September|October|November|December)"
_WHEN: list[tuple[re.Pattern[str], str]] = [
    (re.compile(rf"\b{_MONTHS}(?: \d{{1,2}}(?:st|nd|rd|th)?\b)?"), "a date"),
    (re.compile(rf"\b{_DAYS}\b"), "a day"),
    (re.compile(r"\b\d{1,2}(?::\d\d)? ?(?:am|pm)\b", re.I), "a time"),
]
# lowercase words after a name that show it is not a modifier of a noun ("in London this week")
_NOT_NOUN = {
    "and",
    "or",
    "but",
    "to",
    "in",
    "on",
    "at",
    "for",
    "from",
    "with",
    "by",
    "of",
    "this",
    "that",
    "these",
    "those",
    "the",
    "a",
    "an",
    "next",
    "last",
    "today",
    "tonight",
    "tomorrow",
    "yesterday",
    "is",
    "are",
    "was",
    "were",
    "be",
    "has",
    "have",
    "had",
    "will",
    "would",
    "can",
    "could",
    "should",
    "using",
    "via",
    "into",
    "onto",
}
# a capitalized word (or run of them) inside a sentence: after a lowercase word, a comma or a digit
_PROPER = re.compile(
    r"(?:\b(?P<art>[Aa]n?|[Tt]he) )?(?<=[a-z0-9,)] )(?P<name>[A-Z][\w&.-]+(?: [A-Z][\w&.-]+)*)"
    r"(?P<poss>'s\b)?(?P<next> [a-z]\w*)?"
)
_CARRY = re.compile(
    r"\b(?P<verb>bring|take|carry|move|deliver|fetch|get|put|place|drop|hand)"
    r" (?:the|a|an|some|that|this) [a-z]+(?= (?:to|into|onto|in|on|from)\b)",
    re.I,
)


# the payload of a task: what it is about, what a post/issue/message says, what to look for in it
# ("... in the forum titled Best boots for wet trails", "... an issue reporting a broken link", "reviews
# that mention battery life"). It names the content, not the kind of task, and dominates the embedding.
_PAYLOAD = re.compile(
    r"(?<=\w)(?:,)? (?:about|regarding|concerning|titled|entitled|called|named|saying|reporting|"
    r"asking (?:for|about|to)|that (?:mentions?|says?|talks? about|complains? about)|mentioning|"
    r"with the (?:subject|title|text|message))\b[^.;!?]*?"
    r"(?=[.;!?,]|$| (?:and|then|but) | (?:in|on|to|from|into|onto|at|with) (?:the|a|an|my|our|your|their|its)\b)",
    re.I,
)


def _with_article(art: str, word: str) -> str:
    """``art`` (a / an / the, any case) fitted to the word that now follows it."""
    if art.lower() == "the":
        return art
    an = word.lstrip()[:1].lower() in set("aeiou")
    return (art[0] + "n") if an else art[0]


def _proper(m: re.Match[str]) -> str:
    art, nxt = m.group("art"), m.group("next") or ""
    if m.group("poss"):
        return "someone's" + nxt
    if nxt and nxt.strip() not in _NOT_NOUN:
        return (_with_article(art, nxt) + nxt) if art else nxt.lstrip()  # a modifier: drop the name
    return ("the name" if art and art.lower() == "the" else "a name") + nxt


def _article(m: re.Match[str]) -> str:
    word = m.group(1)
    return ("an " if word[0].lower() in "aeiou" else "a ") + word.lower()


_HELD = re.compile("[\ue000-\uf8ff]")


def _code_like(text: str) -> bool:
    """A quoted span that names a command, a file, a flag or a version rather than a thing."""
    words = text.split()
    if not words:
        return False
    if words[0] in COMMAND_WORDS or text.startswith("-") or "::" in text or "()" in text:
        return True
    if _VERSION_SPEC.search(text) or any(c in text for c in "/\\=$"):
        return True
    return len(words) == 1 and bool(_EXTENSION.search(text) or "." in text.strip("."))


def _keep_path(path: str) -> bool:
    if path.startswith(("/", "~")):
        return not _PERSONAL.match(path) and path.count("/") >= 2
    return path.startswith(".") or path.endswith("/") or bool(_EXTENSION.search(path))


def _protect(text: str) -> tuple[str, list[str]]:
    """``text`` with each span that must stay as written replaced by a private-use character (no
    rule matches one), and the spans in order, for ``_restore``."""
    kept: list[str] = []
    text = _HELD.sub("", text)  # a private-use character in the input would read as a held span

    def hold(span: str) -> str:
        kept.append(span)
        return chr(0xE000 + len(kept) - 1)

    def ticket_inside(m: re.Match[str]) -> str:
        return hold(_TICKET.sub("<ticket>", m.group(0)))

    out = _CODE_SPAN.sub(ticket_inside, text)
    out = _QUOTED.sub(
        lambda m: ticket_inside(m) if _code_like(next(g for g in m.groups() if g)) else m.group(0), out
    )
    out = _TICKET.sub("a ticket", out)
    out = _VERSION_SPEC.sub(lambda m: hold(m.group(0)), out)
    out = _PATH.sub(lambda m: hold(m.group(0)) if _keep_path(m.group(0)) else m.group(0), out)
    out = _FLAG.sub(lambda m: hold(m.group(0)), out)
    out = _VERSION.sub(lambda m: hold(m.group(0)), out)
    return out, kept


def _restore(text: str, kept: list[str]) -> str:
    if not kept:
        return text
    return _HELD.sub(
        lambda m: kept[ord(m.group(0)) - 0xE000] if ord(m.group(0)) - 0xE000 < len(kept) else m.group(0), text
    )


class RuleGeneralizer:
    """Regex entity stripping; deterministic and cheap. ``generalize_text`` (tips) keeps words;
    ``generalize_description`` (keys and queries) also strips names and objects unless
    ``strip_proper_nouns`` / ``strip_objects`` are off."""

    def __init__(
        self, strip_proper_nouns: bool = True, strip_objects: bool = True, strip_payload: bool = True
    ) -> None:
        self.strip_proper_nouns = strip_proper_nouns
        self.strip_objects = strip_objects
        self.strip_payload = strip_payload

    def generalize_text(self, text: str) -> str:
        """Tips: ids, emails, URLs, personal paths, quoted names, tickets and numbers are replaced;
        commands, flags, project and system paths, packages and versions are kept."""
        masked, kept = _protect(text)
        return _restore(self._entities(masked), kept)

    def _entities(self, text: str) -> str:
        out = text
        for rx, repl in _SUBS:
            out = rx.sub(repl, out)
        out = re.sub(r"\b([A-Za-z]+)#", _article, out)
        out = _ARTICLE_FIX.sub(lambda m: m.group(2) + " ", out)
        return re.sub(r"\s{2,}", " ", out).strip()

    def generalize_description(self, text: str) -> str:
        out, kept = _protect(text)
        if self.strip_payload:
            out = _PAYLOAD.sub("", out)
        if self.strip_proper_nouns:
            for rx, repl in _WHEN:
                out = rx.sub(repl, out)
        out = self._entities(out)
        if self.strip_proper_nouns:
            out = _PROPER.sub(_proper, out)
        if self.strip_objects:
            out = _CARRY.sub(lambda m: f"{m.group('verb')} an object", out)
        return _restore(re.sub(r"\s{2,}", " ", out).strip(), kept)

    async def generalize(self, texts: list[str]) -> list[str]:
        return [self.generalize_description(t) for t in texts]


@runtime_checkable
class Generalizer(Protocol):
    async def generalize(self, texts: list[str]) -> list[str]: ...


class LLMGeneralizer:
    """One LLM call rewrites all descriptions; the rule pass then removes anything left."""

    def __init__(self, llm: LLMClient, rules: RuleGeneralizer | None = None) -> None:
        self.llm = llm
        self.rules = rules or RuleGeneralizer()

    async def generalize(self, texts: list[str]) -> list[str]:
        if not texts:
            return []
        items = "\n".join(f"{i}. {t}" for i, t in enumerate(texts))
        reply = await self.llm.astructured(
            stage_messages("generalize", items=items, n=len(texts)), bounded(Generalized, n_items=len(texts))
        )
        return await self.rules.generalize(list(reply.descriptions))


__all__ = ["COMMAND_WORDS", "Generalizer", "LLMGeneralizer", "RuleGeneralizer"]
