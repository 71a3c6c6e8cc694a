"""Opt-in speed-up for TextWorld's PDDL text generation (used by ALFWorld games).

TextWorld re-parses every grammar template with TatSu each time it renders feedback or an
admissible command (≈0.1–0.2 s per ALFWorld step, most of a reset). Parsing is a pure function
of the template text, so we memoize it and hand out deep copies (callers mutate the symbols).
Same output, several times faster. Installed once per process by the ALFWorld environment;
``ATLAS_TW_PARSE_CACHE=0`` disables it.
"""

from __future__ import annotations

import os
import threading
from copy import deepcopy
from functools import lru_cache
from typing import Any

_installed = False
_lock = threading.Lock()


def install_parse_cache(maxsize: int = 8192) -> bool:
    """Memoize ``textworld.envs.pddl.textgen._parse_and_convert``; returns True if active."""
    global _installed
    if os.environ.get("ATLAS_TW_PARSE_CACHE", "1") == "0":
        return False
    with _lock:
        if _installed:
            return True
        import textworld.envs.pddl.textgen as textgen

        original = textgen._parse_and_convert

        @lru_cache(maxsize=maxsize)
        def parsed(text: str, rule_name: str | None) -> Any:
            return original(text, rule_name=rule_name)

        def cached(*args: Any, **kwargs: Any) -> Any:
            if len(args) == 1 and isinstance(args[0], str) and set(kwargs) <= {"rule_name", "trace"} \
                    and not kwargs.get("trace"):
                return deepcopy(parsed(args[0], kwargs.get("rule_name")))
            return original(*args, **kwargs)

        textgen._parse_and_convert = cached
        _installed = True
        return True


__all__ = ["install_parse_cache"]
