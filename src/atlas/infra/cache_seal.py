"""Sealed cache entries: a cache file ATLAS trusts in a search carries, beside its value, the hash of
what it answers (its key: a hash of the inputs that decide the value) and the SHA-256 of its own
content. Reading one back checks both, so an entry edited by hand (scores zeroed, an action
changed, text injected), copied under another key or cut short is refused, and its value is
computed again, never trusted into a result.

The hashes detect edits and corruption, not a forger who recomputes them: whoever can write the
cache folder can also delete it. A file written before entries were sealed has no hashes: it is
refused the same way (``Unsealed``), with its own reason, never silently trusted.

    record = seal(key, value)            # what a cache writes (JSON)
    value = unseal(record, key)          # the value, or CacheEntryRefused saying why
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from atlas.errors import InvalidInputError

SEAL_FORMAT = "atlas-cache-entry/1"


class CacheEntryRefused(InvalidInputError):
    """A cache entry that does not match what produced it (or is not a sealed entry at all)."""


class Unsealed(CacheEntryRefused):
    """A cache entry written without hashes (by an older version): a miss, never trusted."""


def content_hash(value: Any) -> str:
    """SHA-256 of the canonical JSON of ``value`` (sorted keys, ASCII, no spaces)."""
    blob = json.dumps(value, sort_keys=True, ensure_ascii=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("ascii")).hexdigest()


def seal(key: str, value: Any) -> dict[str, Any]:
    """The record a cache stores for ``value``, the answer to ``key``."""
    return {"format": SEAL_FORMAT, "key": key, "content_sha256": content_hash(value), "value": value}


def unseal(record: Any, key: str) -> Any:
    """The value of a sealed ``record`` read for ``key``; ``CacheEntryRefused`` (``Unsealed`` for a
    record written before entries were sealed) saying why it cannot be trusted."""
    if not isinstance(record, dict) or record.get("format") != SEAL_FORMAT:
        raise Unsealed("written without content hashes (an older cache format), so not trusted")
    if record.get("key") != key:
        raise CacheEntryRefused("it answers another key than the one asked for")
    if "value" not in record or record.get("content_sha256") != content_hash(record["value"]):
        raise CacheEntryRefused(
            "its content does not match its hash (edited or corrupted after it was written)"
        )
    return record["value"]


__all__ = ["SEAL_FORMAT", "CacheEntryRefused", "Unsealed", "content_hash", "seal", "unseal"]
