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
anything): the host validates every field it uses and caps line length.
"""

from __future__ import annotations

import json
from typing import Any

PROTOCOL_VERSION = 1

HOST_OPS = frozenset({"init", "call", "tool_result", "exit"})
WORKER_OPS = frozenset({"ready", "need_source", "tool", "done"})


class ProtocolError(Exception):
    """A line is not a valid protocol message."""


def encode(message: dict[str, Any]) -> bytes:
    """One message as a JSON line. NaN/Infinity are refused: they are not JSON. ASCII-escaped, so
    any str (even one with lone surrogates) can be sent."""
    return json.dumps(message, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode("ascii") + b"\n"


def decode(line: bytes, allowed_ops: frozenset[str]) -> dict[str, Any]:
    """Parse one line; raise ProtocolError unless it is a JSON object with a known ``op``."""
    try:
        message = json.loads(line)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ProtocolError(f"not JSON: {line[:120]!r}") from exc
    if not isinstance(message, dict) or message.get("op") not in allowed_ops:
        raise ProtocolError(f"unexpected message: {line[:120]!r}")
    return message


__all__ = ["HOST_OPS", "PROTOCOL_VERSION", "WORKER_OPS", "ProtocolError", "decode", "encode"]
