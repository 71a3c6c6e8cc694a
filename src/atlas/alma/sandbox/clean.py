"""Strings that crossed the sandbox boundary, made safe for the host (see ``atlas.core.safetext``).

Every message from a worker passes ``safe_data`` when it is read (``pool.read_message``); prints,
advice, errors, warnings and tracebacks pass ``safe_text``.
"""

from __future__ import annotations

from atlas.core.safetext import REPLACEMENT, safe_data, safe_text

__all__ = ["REPLACEMENT", "safe_data", "safe_text"]
