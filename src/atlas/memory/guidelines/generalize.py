"""Stage 5a, generalization: strip task-specific entities from descriptions and tips.

``RuleGeneralizer`` (default, free) replaces emails, URLs, uuids/hex ids, paths, quoted names,
numbers and ids such as ``room_B`` with their category. ``LLMGeneralizer`` rewrites descriptions
the way a person would ("Retrieve Spotify password for john.doe@email.com" → "Retrieve service
account credentials") and is followed by the rule pass as a safety net."""

from __future__ import annotations

import re
from typing import Any, Protocol, runtime_checkable

from atlas.memory.guidelines.prompts import stage_messages
from atlas.memory.guidelines.schemas import Generalized, bounded

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
_ARTICLE_FIX = re.compile(r"\b(the|a|an) (an?) ", re.I)


def _article(m: re.Match[str]) -> str:
    word = m.group(1)
    return ("an " if word[0].lower() in "aeiou" else "a ") + word.lower()


class RuleGeneralizer:
    """Regex entity stripping; deterministic and cheap. ``strip_proper_nouns`` also removes
    capitalized words inside a sentence (off by default: it also hits tool names)."""

    def __init__(self, strip_proper_nouns: bool = False) -> None:
        self.strip_proper_nouns = strip_proper_nouns

    def generalize_text(self, text: str) -> str:
        out = text
        for rx, repl in _SUBS:
            out = rx.sub(repl, out)
        out = re.sub(r"\b([A-Za-z]+)#", _article, out)
        if self.strip_proper_nouns:
            out = re.sub(r"(?<=[a-z,] )[A-Z][a-z]+\b", "a service", out)
        out = _ARTICLE_FIX.sub(lambda m: m.group(2) + " ", out)
        return re.sub(r"\s{2,}", " ", out).strip()

    async def generalize(self, texts: list[str]) -> list[str]:
        return [self.generalize_text(t) for t in texts]


@runtime_checkable
class Generalizer(Protocol):
    async def generalize(self, texts: list[str]) -> list[str]: ...


class LLMGeneralizer:
    """One LLM call rewrites all descriptions; the rule pass then removes anything left."""

    def __init__(self, llm: Any, rules: RuleGeneralizer | None = None) -> None:
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


__all__ = ["Generalizer", "LLMGeneralizer", "RuleGeneralizer"]
