"""Opt-in on-disk response cache: one JSON file per sha256(model, messages, parameters).

Written atomically (temp file + rename) so a crashed run never leaves a half-written entry, and
readable by a later run to replay the same calls without a model. A cache directory is data anyone
with write access may have touched, so every entry is sealed (``atlas.infra.cache_seal``): it
records the key of its file name (the hash of the request it answers) and the SHA-256 of its
content, and it is served only when it is a plain file within ``MAX_ENTRY_BYTES`` whose hashes match
and whose completion has the right shape, no longer than the request's ``max_tokens`` could make
(and never over ``MAX_REPLY_CHARS``). Anything else is a miss with a one-line warning naming the
file (the model is asked again and the entry replaced), never a crash and never the agent's turn;
``refused`` counts them. An entry written before entries were sealed is a miss too, said once per
cache. Writes never go through a linked shard folder.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import tempfile
import threading
from pathlib import Path
from typing import Any

from atlas.errors import InvalidInputError
from atlas.infra.cache_seal import Unsealed, seal, unseal
from atlas.infra.llm.backend import LLMRequest, completion_from_dict, completion_to_dict
from atlas.infra.safe_read import read_json
from atlas.protocols.llm import Completion

log = logging.getLogger(__name__)
MAX_ENTRY_BYTES = 1_000_000  # one cached reply (the longest real one is a few kB)
MAX_REPLY_CHARS = 200_000  # a reply's text, whatever max_tokens the request gave


def cache_key(model: str, request: LLMRequest) -> str:
    """Stable sha256 hex digest of what determines the reply."""
    payload = {"model": model, "messages": request.messages, "params": request.params()}
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseCache:
    """A directory of ``<key[:2]>/<key>.json`` completion records.

    ``greedy_only``: only calls at temperature 0 are cached (deterministic replay: a sampled reply
    must stay a fresh sample, so those are neither served nor stored)."""

    def __init__(self, directory: str | Path, *, greedy_only: bool = False) -> None:
        self.directory = Path(directory).expanduser()
        self.greedy_only = greedy_only
        self.refused = 0  # entries found but not served (edited, corrupt, unsealed, oversized)
        self._said_unsealed = False
        self._lock = threading.Lock()

    def accepts(self, request: LLMRequest) -> bool:
        """Whether this cache serves and stores ``request``."""
        return not self.greedy_only or request.temperature == 0

    def path_for(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str, request: LLMRequest | None = None) -> Completion | None:
        """The cached completion (``cached=True``), or None on a miss or an entry that is not valid
        (logged; the next put replaces it). ``request`` bounds the reply's length by its max_tokens."""
        path = self.path_for(key)
        if not path.exists() and not path.is_symlink():
            return None
        try:
            data = read_json(path, max_bytes=MAX_ENTRY_BYTES, what="cache entry")
            value = unseal(data, key)
            problem = _entry_problem(value, request)
            if problem is None:
                return completion_from_dict(value["completion"], cached=True)
        except Unsealed as exc:
            with self._lock:
                self.refused += 1
                said, self._said_unsealed = self._said_unsealed, True
            if not said:  # an older cache holds many such entries: one line for all of them
                log.warning(
                    "ignoring the response cache entry %s: %s (entries of that format in %s are asked "
                    "again and replaced, without a line each)",
                    path,
                    exc,
                    self.directory,
                )
            return None
        except (InvalidInputError, ValueError, TypeError, KeyError) as exc:
            problem = str(exc)
        with self._lock:
            self.refused += 1
        log.warning("ignoring the response cache entry %s: %s", path, problem)
        return None

    def put(self, key: str, completion: Completion, *, request: dict[str, Any] | None = None) -> Path | None:
        """Store ``completion`` under ``key``; None (logged) when its shard folder is a link or not
        a folder: a cache never writes outside its directory."""
        path = self.path_for(key)
        shard = path.parent
        if shard.is_symlink() or (shard.exists() and not shard.is_dir()):
            log.warning("not writing to the response cache: %s is not a plain folder", shard)
            return None
        shard.mkdir(parents=True, exist_ok=True)
        record = seal(key, {"completion": completion_to_dict(completion), "request": request})
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(record, f, ensure_ascii=False, default=str)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return path


def _entry_problem(data: Any, request: LLMRequest | None) -> str | None:
    """Why the unsealed ``data`` is not a usable completion record (None when it is)."""
    if not isinstance(data, dict) or not isinstance(data.get("completion"), dict):
        return "not a cache record (no 'completion' object)"
    c = data["completion"]
    if not isinstance(c.get("text", ""), str | None):
        return "its text is not a string"
    calls = c.get("tool_calls") or []
    if not isinstance(calls, list) or not all(
        isinstance(t, dict) and isinstance(t.get("name"), str) and isinstance(t.get("arguments") or {}, dict)
        for t in calls
    ):
        return "its tool calls are not a list of {name, arguments} objects"
    usage = c.get("usage") or {}
    if not isinstance(usage, dict) or not all(
        isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) and v >= 0
        for v in usage.values()
    ):
        return "its usage is not a set of non-negative numbers"
    if request is not None and request.max_tokens and len(c.get("text") or "") > 64 * request.max_tokens:
        return f"its reply is longer than {request.max_tokens} tokens could be"
    if len(c.get("text") or "") > MAX_REPLY_CHARS:
        return f"its reply is longer than {MAX_REPLY_CHARS} characters"
    return None


__all__ = ["MAX_ENTRY_BYTES", "MAX_REPLY_CHARS", "ResponseCache", "cache_key"]
