"""Usage accounting for a search: what the models it talks to have spent, now and between two
moments, and the total over an archive (a resumed run's earlier parts included)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from atlas.alma.evaluate.harness import add_usage
from atlas.alma.state.archive import Archive, empty_usage

USAGE_KEYS = ("prompt_tokens", "completion_tokens", "total_tokens", "calls")


def usage_of(client: Any) -> dict[str, Any]:
    """A client's usage so far as a dict (zeros when it does not count)."""
    u = getattr(client, "usage", None)
    return u.to_dict() if u is not None and hasattr(u, "to_dict") else empty_usage()


def usage_delta(after: dict[str, Any], before: dict[str, Any]) -> dict[str, Any]:
    """What was spent between two readings of ``UsageMeter.now``."""
    out = {k: after.get(k, 0) - before.get(k, 0) for k in USAGE_KEYS}
    out["cost_usd"] = round(float(after.get("cost_usd", 0.0)) - float(before.get("cost_usd", 0.0)), 6)
    return out


def archive_usage(archive: Archive) -> dict[str, Any]:
    """The usage recorded on every entry of ``archive``."""
    total = empty_usage()
    for e in archive:
        add_usage(total, e.usage)
    return total


class UsageMeter:
    """Reads the usage of a search's clients (each counted once, however many roles it plays)."""

    def __init__(self, clients: Iterable[Any]) -> None:
        seen: dict[int, Any] = {}
        for c in clients:
            if c is not None:
                seen.setdefault(id(c), c)
        self.clients = list(seen.values())

    def now(self) -> dict[str, Any]:
        total = empty_usage()
        for c in self.clients:
            add_usage(total, usage_of(c))
        return total

    def since(self, before: dict[str, Any]) -> dict[str, Any]:
        return usage_delta(self.now(), before)


__all__ = ["UsageMeter", "archive_usage", "usage_delta", "usage_of"]
