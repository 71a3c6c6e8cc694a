"""JSON from outside ATLAS, parsed with limits: size, nesting depth, and text that encodes.

``json.loads`` alone turns a 100k-deep file into a ``RecursionError`` and a 5,000-digit number
into a ``ValueError`` deep inside a caller; a parsed value 500 levels deep breaks the next
``json.dumps`` or pydantic validation. ``loads`` refuses all of these with one
``InvalidInputError`` that names the limit.
"""

from __future__ import annotations

import json
from typing import Any

from atlas.errors import InvalidInputError

MAX_DEPTH = 64  # nesting levels of objects/arrays in any JSON ATLAS reads from outside


def depth(value: Any, stop_after: int | None = None) -> int:
    """Nesting depth of a parsed JSON value (a scalar is 0), level by level without recursion;
    with ``stop_after`` it stops counting once the depth is over it (a hostile value is not walked
    to the bottom)."""
    deepest = 0
    level = [value] if isinstance(value, dict | list) else []
    while level and (stop_after is None or deepest <= stop_after):
        deepest += 1
        below: list[Any] = []
        for v in level:
            below += [x for x in (v.values() if isinstance(v, dict) else v) if isinstance(x, dict | list)]
        level = below
    return deepest


def check_depth(value: Any, *, max_depth: int = MAX_DEPTH, what: str = "JSON") -> Any:
    """``value`` unchanged, or InvalidInputError when it nests deeper than ``max_depth``."""
    if depth(value, stop_after=max_depth) > max_depth:
        raise InvalidInputError(f"{what}: nests deeper than {max_depth} levels; flatten it")
    return value


def loads(
    text: str | bytes, *, what: str = "JSON", max_bytes: int | None = None, max_depth: int = MAX_DEPTH
) -> Any:
    """Parse ``text`` as JSON within the limits, or raise InvalidInputError saying what is wrong."""
    if max_bytes is not None and len(text) > max_bytes:
        raise InvalidInputError(f"{what}: {len(text)} bytes, over the limit of {max_bytes}")
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidInputError(f"{what}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    try:
        value = json.loads(text)
    except RecursionError as exc:
        raise InvalidInputError(f"{what}: nests deeper than {max_depth} levels; flatten it") from exc
    except json.JSONDecodeError as exc:
        raise InvalidInputError(
            f"{what}: not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        ) from exc
    except ValueError as exc:  # e.g. an integer with more digits than Python converts
        raise InvalidInputError(f"{what}: not valid JSON ({exc})") from exc
    return check_depth(value, max_depth=max_depth, what=what)


__all__ = ["MAX_DEPTH", "check_depth", "depth", "loads"]
