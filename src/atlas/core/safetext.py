"""Text from untrusted sources (designs, run folders, models), made safe to store and show.

A design controls every string it sends: tool arguments, prints, advice, error text, memory. Two
kinds of damage are repaired here, at the one place messages enter the host:

- ``safe_data``: text that cannot be stored or encoded — lone surrogates (``"\\ud800"``, which UTF-8
  refuses) become U+FFFD and NUL characters are dropped — in every string and dict key of a value.
  Used for data the design keeps (memory, tool arguments), so nothing else changes.
- ``safe_text``: text shown to people and models (prints, advice, errors): the same, plus control
  characters other than newline and tab, terminal escape sequences and bidirectional overrides
  become U+FFFD, so a print cannot rewrite a terminal line or hide text in a log or prompt.
"""

from __future__ import annotations

import re
from typing import Any

REPLACEMENT = "\ufffd"
_UNSAFE_DATA = re.compile("[\ud800-\udfff]|\x00")
_UNSAFE_TEXT = re.compile("[\ud800-\udfff\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _data_str(s: str) -> str:
    return _UNSAFE_DATA.sub(lambda m: "" if m.group() == "\x00" else REPLACEMENT, s)


def safe_text(value: Any) -> str:
    """``value`` as a str that encodes to UTF-8 and holds no control or escape characters
    (newlines and tabs are kept)."""
    return _UNSAFE_TEXT.sub(REPLACEMENT, value if isinstance(value, str) else str(value))


def safe_data(value: Any) -> Any:
    """A copy of a JSON value whose every string and key encodes to UTF-8 and holds no NUL
    (iterative, so any depth is safe; containers with nothing to repair are still rebuilt)."""
    if isinstance(value, str):
        return _data_str(value)
    if not isinstance(value, dict | list):
        return value
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any]] = [(value, root, 0)]  # (source, parent container, key in parent)
    while stack:
        src, parent, key = stack.pop()
        if isinstance(src, dict):
            out: Any = {}
            for k, v in src.items():
                k2 = _data_str(k) if isinstance(k, str) else k
                out[k2] = None
                stack.append((v, out, k2))
        elif isinstance(src, list):
            out = [None] * len(src)
            stack.extend((v, out, i) for i, v in enumerate(src))
        elif isinstance(src, str):
            out = _data_str(src)
        else:
            out = src
        parent[key] = out
    return root[0]


__all__ = ["REPLACEMENT", "safe_data", "safe_text"]
