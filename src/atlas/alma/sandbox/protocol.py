"""JSON-lines messages between the host and a sandbox worker (stdlib only: the worker imports it).

One message per line, UTF-8 JSON objects with an ``op`` field.

host → worker
  ``init``        {limits, read_paths}                         first line, before lock-down
  ``call``        {id, hash, source|None, function, memory, arg, return_memory}
  ``tool_result`` {ok, result | error, fatal}
  ``exit``        {}
worker → host
  ``ready``       {pid, protections}                            after lock-down
  ``need_source`` {id, hash}                                    the worker has not compiled ``hash``
  ``tool``        {name, args}                                  a design called a tool
  ``done``        {id, ok, value, memory, prints, ...}          the call finished (ok or design error)

Everything the worker sends is untrusted (a design that escaped the Python layer could write
anything): the host validates every field it uses and caps line length; ``decode`` also refuses
NaN/Infinity and nesting deeper than ``MAX_DEPTH`` (deep values would crash recursive code on the host).
"""

from __future__ import annotations

import json
from typing import Any

PROTOCOL_VERSION = 1

HOST_OPS = frozenset({"init", "call", "tool_result", "exit"})
WORKER_OPS = frozenset({"ready", "need_source", "tool", "done"})

#: Deepest nesting of lists/dicts a design value (memory, tool arguments) may have.
MAX_VALUE_DEPTH = 50
#: Deepest nesting of a whole message (a value sits a few levels below the top).
MAX_DEPTH = MAX_VALUE_DEPTH + 10


class ProtocolError(Exception):
    """A line is not a valid protocol message."""


def encode(message: dict[str, Any]) -> bytes:
    """One message as a JSON line. NaN/Infinity are refused: they are not JSON. ASCII-escaped, so
    any str (even one with lone surrogates) can be sent."""
    return (
        json.dumps(message, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode("ascii") + b"\n"
    )


def too_deep(value: Any, limit: int) -> bool:
    """True if lists/dicts in ``value`` nest more than ``limit`` levels (iterative: any depth is safe)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        elif not isinstance(item, list | tuple):
            continue
        if depth > limit:
            return True
        stack.extend((v, depth + 1) for v in item if isinstance(v, dict | list | tuple))
    return False


def json_problem(
    value: Any, path: str = "memory", depth: int = 1, open_: set[int] | None = None
) -> str | None:
    """Where ``value`` stops being plain JSON (``memory['seen']: a set ...``), or None. Stricter than
    ``json.dumps``: non-str keys (which JSON would silently turn into strings), cycles and nesting
    deeper than ``MAX_VALUE_DEPTH`` are problems too."""
    if value is None or isinstance(value, bool | int | str):
        return None
    if isinstance(value, float):
        return (
            None
            if value == value and value not in (float("inf"), float("-inf"))
            else f"{path}: {value!r} is not JSON"
        )
    if not isinstance(value, list | tuple | dict):
        return f"{path}: a {type(value).__name__} is not JSON-serializable"
    open_ = set() if open_ is None else open_
    if id(value) in open_:
        return f"{path}: refers back to a list/dict that contains it (a cycle); store a copy or a key instead"
    if depth > MAX_VALUE_DEPTH:
        return f"{path}: nested more than {MAX_VALUE_DEPTH} levels deep; flatten it"
    open_.add(id(value))
    try:
        if isinstance(value, dict):
            for k, v in value.items():
                if not isinstance(k, str):
                    return (
                        f"{path}: key {k!r} is a {type(k).__name__}, JSON keys must be strings (use str(key))"
                    )
                p = json_problem(v, f"{path}[{k!r}]", depth + 1, open_)
                if p:
                    return p
        else:
            for i, v in enumerate(value):
                p = json_problem(v, f"{path}[{i}]", depth + 1, open_)
                if p:
                    return p
    finally:
        open_.discard(id(value))
    return None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def decode(line: bytes, allowed_ops: frozenset[str]) -> dict[str, Any]:
    """Parse one line; raise ProtocolError unless it is a JSON object with a known ``op``, without
    NaN/Infinity and nested at most ``MAX_DEPTH`` levels."""
    try:
        message = json.loads(line, parse_constant=_refuse_constant)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise ProtocolError(f"not JSON ({type(exc).__name__}): {line[:120]!r}") from exc
    if not isinstance(message, dict) or message.get("op") not in allowed_ops:
        raise ProtocolError(f"unexpected message: {line[:120]!r}")
    if too_deep(message, MAX_DEPTH):
        raise ProtocolError(f"message nested more than {MAX_DEPTH} levels deep: {line[:120]!r}")
    return message


__all__ = [
    "HOST_OPS",
    "MAX_DEPTH",
    "MAX_VALUE_DEPTH",
    "PROTOCOL_VERSION",
    "WORKER_OPS",
    "ProtocolError",
    "decode",
    "encode",
    "json_problem",
    "too_deep",
]
