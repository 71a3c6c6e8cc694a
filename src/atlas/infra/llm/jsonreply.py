"""Pull a JSON value out of a model reply: fenced blocks, prose around it, light repairs.

Small models wrap JSON in ```json fences, add a sentence before it, leave trailing commas, use
single quotes or Python literals (True/None), forget quotes around keys or stop before the last
brace. ``parse_json_reply`` tries the candidates in order and repairs each before giving up with
LLMResponseError (whose ``raw`` is the reply), so callers can re-ask the model with the error.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from atlas.errors import LLMResponseError

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_-]*)[ \t]*\n?(.*?)(?:```|\Z)", re.DOTALL)
_PY_LITERALS = {"True": "true", "False": "false", "None": "null"}
_CLOSERS = {"{": "}", "[": "]"}


def _balanced_spans(text: str) -> list[str]:
    """Top-level ``{...}`` / ``[...]`` substrings (string-aware), plus an unclosed tail if any."""
    spans: list[str] = []
    depth = 0
    start = -1
    quote = ""
    escaped = False
    for i, ch in enumerate(text):
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = ""
            continue
        if ch in "\"'" and depth > 0:
            quote = ch
        elif ch in "{[":
            if depth == 0:
                start = i
            depth += 1
        elif ch in "}]" and depth > 0:
            depth -= 1
            if depth == 0:
                spans.append(text[start : i + 1])
    if depth > 0 and start >= 0:
        spans.append(text[start:])  # truncated reply: repair will try to close it
    return spans


def _candidates(text: str) -> list[str]:
    out: list[str] = []
    for lang, body in _FENCE.findall(text):
        if lang.lower() in ("", "json", "json5", "javascript", "js", "python", "py"):
            out.append(body.strip())
    out.append(text.strip())
    out.extend(_balanced_spans(text))
    # Longest first among the brace spans: a reply with an outer object beats its inner parts.
    seen: set[str] = set()
    unique = []
    for c in out:
        if c and c not in seen:
            seen.add(c)
            unique.append(c)
    return unique


def repair_json(text: str) -> str:
    """Light, string-aware repairs: single-quoted strings, Python literals, bare keys, comments,
    trailing commas, and missing closing brackets at the end."""
    out: list[str] = []
    stack: list[str] = []
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch in "\"'":
            j = i + 1
            buf: list[str] = []
            while j < n and text[j] != ch:
                if text[j] == "\\" and j + 1 < n:
                    nxt = text[j + 1]
                    # \' is not a JSON escape; a bare ' needs none inside "..."
                    buf.append("'" if nxt == "'" else "\\" + nxt)
                    j += 2
                    continue
                if text[j] == '"':
                    buf.append('\\"')
                elif text[j] == "\n":
                    buf.append("\\n")
                else:
                    buf.append(text[j])
                j += 1
            out.append('"' + "".join(buf) + '"')
            i = j + 1
            continue
        if ch == "/" and text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
            continue
        if ch == "#":
            while i < n and text[i] != "\n":
                i += 1
            continue
        if ch in "{[":
            stack.append(_CLOSERS[ch])
        elif ch in "}]":
            if stack:
                stack.pop()
            # drop a trailing comma before the closer
            k = len(out) - 1
            while k >= 0 and out[k].isspace():
                k -= 1
            if k >= 0 and out[k] == ",":
                del out[k]
        elif ch.isalpha() or ch == "_":
            j = i
            while j < n and (text[j].isalnum() or text[j] in "_-"):
                j += 1
            word = text[i:j]
            k = j
            while k < n and text[k] in " \t":
                k += 1
            if word in _PY_LITERALS:
                out.append(_PY_LITERALS[word])
            elif k < n and text[k] == ":" and stack and stack[-1] == "}":
                out.append(json.dumps(word))
            else:
                out.append(word)
            i = j
            continue
        out.append(ch)
        i += 1
    result = "".join(out).rstrip()
    if stack:
        result = result.rstrip(",") + "".join(reversed(stack))
    return result


def _loads(candidate: str) -> tuple[bool, Any]:
    try:
        return True, json.loads(candidate)
    except ValueError:
        pass
    try:
        return True, json.loads(repair_json(candidate))
    except ValueError:
        pass
    try:
        value = ast.literal_eval(candidate)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False, None
    if isinstance(value, dict | list):
        return True, value
    return False, None


def parse_json_reply(text: str) -> Any:
    """Extract the JSON value a model meant to send; raise LLMResponseError when there is none.

    Order: ```json fences, the whole reply, then each balanced ``{...}``/``[...]`` in the prose.
    Objects and arrays are preferred over bare scalars found in prose.
    """
    if not isinstance(text, str) or not text.strip():
        raise LLMResponseError(
            "the reply is empty; expected JSON", raw=text if isinstance(text, str) else None
        )
    scalar: tuple[bool, Any] = (False, None)
    for candidate in _candidates(text):
        ok, value = _loads(candidate)
        if ok and isinstance(value, dict | list):
            return value
        if ok and not scalar[0] and candidate == text.strip():
            scalar = (True, value)
    if scalar[0]:
        return scalar[1]
    snippet = text.strip()[:200]
    raise LLMResponseError(f"the reply contains no parsable JSON: {snippet!r}", raw=text)


__all__ = ["parse_json_reply", "repair_json"]
