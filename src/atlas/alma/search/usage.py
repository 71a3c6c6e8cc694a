"""Usage accounting for a search: what the models it talks to have spent, now and between two
moments, and the total over an archive (a resumed run's earlier parts included)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from atlas.alma.evaluate.harness import add_usage
from atlas.alma.state.archive import Archive, empty_usage
from atlas.protocols.llm import LLM, CountsCacheHits, CountsUsage, ReusesResults

USAGE_KEYS = ("prompt_tokens", "completion_tokens", "total_tokens", "calls")


def usage_of(client: object) -> dict[str, Any]:
    """A client's usage so far as a dict (zeros when it does not count)."""
    u = client.usage if isinstance(client, CountsUsage) else None
    return u.to_dict() if u is not None and hasattr(u, "to_dict") else empty_usage()


def savings(archive: Archive, llm: object, executor: object) -> dict[str, int]:
    """What a search did not pay for: episodes staged evaluation skipped, replayed model calls, retries."""
    return {
        "episodes_saved": archive.episodes_saved(),
        "replayed_calls": cache_hits(llm) + cache_hits(executor),
        "retries": len(getattr(executor, "retries", [])),
    }


def cache_report(archive: Archive, llm: object, executor: object) -> dict[str, Any]:
    """What the run's caches did, for its trace: the no-memory baseline's entry (``hit``, ``miss``,
    ``refused`` or ``off``), task-model replies replayed, and cache entries refused as not matching
    their hashes or shape (each also a warning line naming its file)."""
    cache = getattr(llm, "cache", None)
    return {
        "baseline": (archive.baseline or {}).get(
            "cache", "hit" if (archive.baseline or {}).get("cached") else "off"
        ),
        "replay": cache is not None,
        "replayed_calls": cache_hits(llm) + cache_hits(executor),
        "refused": int(getattr(cache, "refused", 0) or 0)
        + (1 if (archive.baseline or {}).get("cache") == "refused" else 0),
    }


def cache_places(baseline_cache: Path | None, llm: object) -> dict[str, str | None]:
    """Where the run's caches are (None: not used), for the trace's ``run.start``."""
    replay = getattr(getattr(llm, "cache", None), "directory", None)
    return {
        "baseline": str(baseline_cache) if baseline_cache else None,
        "replay": str(replay) if replay else None,
    }


def savings_line(saved: dict[str, int], caches: dict[str, Any]) -> str:
    """The run's last progress line: what staged evaluation and the caches saved (and refused)."""
    return (
        f"saved     {saved['episodes_saved']} deployment episodes by staged evaluation, "
        f"{saved['replayed_calls']} task-model calls replayed from the cache"
        + (f", {caches['refused']} cache entries refused" if caches["refused"] else "")
    )


def cache_hits(client: object) -> int:
    """The replies a client served from its cache (0 when it does not count them)."""
    return int((client.cache_hits if isinstance(client, CountsCacheHits) else 0) or 0)


def reusable_results(client: LLM) -> bool:
    """Whether results measured with a client can be reused by its model's name (a model known by name
    only: yes; a client whose behaviour is in code: no; a client that does not say: yes)."""
    return client.reusable_results if isinstance(client, ReusesResults) else True


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
    """Reads the usage of a search's clients (each counted once, however many roles it plays) and of
    whatever else spends on its behalf with a ``usage`` (the workers of a cluster executor)."""

    def __init__(self, clients: Iterable[LLM | None]) -> None:
        self.clients: list[object] = []
        for c in clients:
            self.add(c)

    def add(self, source: object) -> None:
        """Count ``source`` too (once; None and sources without ``usage`` add nothing)."""
        if source is not None and all(source is not c for c in self.clients):
            self.clients.append(source)

    def now(self) -> dict[str, Any]:
        total = empty_usage()
        for c in self.clients:
            add_usage(total, usage_of(c))
        return total

    def since(self, before: dict[str, Any]) -> dict[str, Any]:
        return usage_delta(self.now(), before)


__all__ = [
    "UsageMeter",
    "archive_usage",
    "cache_hits",
    "cache_places",
    "cache_report",
    "reusable_results",
    "savings",
    "savings_line",
    "usage_delta",
    "usage_of",
]
