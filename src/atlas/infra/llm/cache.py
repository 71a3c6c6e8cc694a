"""Opt-in on-disk response cache: one JSON file per sha256(model, messages, parameters).

Written atomically (temp file + rename) so a crashed run never leaves a half-written entry, and
readable by a later run to replay the same calls without a model.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from atlas.infra.llm.backend import LLMRequest, completion_from_dict, completion_to_dict
from atlas.protocols.llm import Completion


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

    def accepts(self, request: LLMRequest) -> bool:
        """Whether this cache serves and stores ``request``."""
        return not self.greedy_only or request.temperature == 0

    def path_for(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> Completion | None:
        """The cached completion (``cached=True``), or None on a miss or an unreadable entry."""
        path = self.path_for(key)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            # A damaged entry is a miss; the next put replaces it.
            return None
        return completion_from_dict(data["completion"], cached=True)

    def put(self, key: str, completion: Completion, *, request: dict[str, Any] | None = None) -> Path:
        path = self.path_for(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        record = {"key": key, "completion": completion_to_dict(completion), "request": request}
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(record, f, ensure_ascii=False, default=str)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return path


__all__ = ["ResponseCache", "cache_key"]
