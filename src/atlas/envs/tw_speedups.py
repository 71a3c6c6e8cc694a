"""Speed-ups for TextWorld's PDDL games (ALFWorld), installed once per process.

* TextWorld re-parses every grammar template with TatSu each time it renders feedback or an
  admissible command (most of an ALFWorld step). Parsing is a pure function of the template
  text, so we memoize it and hand out deep copies (callers mutate the symbols).
* Every load *and* reset translates the PDDL problem with fast-downward's Python translator
  (twice: plain and optimized), most of a reset. The translation is a pure function of
  (domain, problem); the result is only read afterwards, so we memoize the last few. The same
  tasks are replayed for every design in an ALMA run, so this pays off a lot.

Same outputs, several times faster. ``ATLAS_TW_PARSE_CACHE=0`` disables both.
"""

from __future__ import annotations

import os
import threading
from copy import deepcopy
from functools import lru_cache
from typing import Any

_installed = False
_lock = threading.Lock()
_parse_lock = threading.Lock()
_translate_lock = threading.Lock()


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
            with _parse_lock:  # TextWorld's TatSu parser is one shared object
                return original(text, rule_name=rule_name)

        def cached(*args: Any, **kwargs: Any) -> Any:
            if (
                len(args) == 1
                and isinstance(args[0], str)
                and set(kwargs) <= {"rule_name", "trace"}
                and not kwargs.get("trace")
            ):
                return deepcopy(parsed(args[0], kwargs.get("rule_name")))
            return original(*args, **kwargs)

        textgen._parse_and_convert = cached
        _installed = True
        return True


def install_translation_cache(maxsize: int = 64) -> bool:
    """Memoize ``fast_downward.pddl2sas`` (the PDDL → SAS translation TextWorld runs per reset)."""
    global _translation_installed
    if os.environ.get("ATLAS_TW_PARSE_CACHE", "1") == "0":
        return False
    with _lock:
        if _translation_installed:
            return True
        import fast_downward

        original = fast_downward.pddl2sas

        @lru_cache(maxsize=maxsize)
        def translated(domain: str, problem: str, verbose: bool, optimize: bool) -> Any:
            with _translate_lock:  # fast-downward's translator keeps module-level state
                return original(domain, problem, verbose=verbose, optimize=optimize)

        def cached(domain: str, problem: str, verbose: bool = False, optimize: bool = False) -> Any:
            return translated(domain, problem, bool(verbose), bool(optimize))

        fast_downward.pddl2sas = cached
        _translation_installed = True
        return True


_translation_installed = False

__all__ = ["install_parse_cache", "install_translation_cache"]
