"""A provider's request-rate limit: every call to a model waits for its slot.

``Spacing(per_minute)`` hands out slots ``60 / per_minute`` seconds apart (the first at once); it is
thread-safe, and it works unchanged as a Ray actor shared by a cluster's workers, so the limit holds
across all of them. ``RateLimitedLLM`` puts any ``LLM`` behind a pacer (anything with ``delay()``,
and ``adelay()`` for the async path).
"""

from __future__ import annotations

import asyncio
import functools
import threading
import time
from typing import Any, Protocol

from atlas.errors import ConfigError
from atlas.protocols.llm import LLM, Completion


class Pacer(Protocol):
    """Reserves the next request's slot and says how long to wait for it."""

    def delay(self) -> float: ...
    async def adelay(self) -> float: ...


class Spacing:
    """At most ``per_minute`` requests a minute, evenly spaced."""

    def __init__(self, per_minute: float) -> None:
        if not per_minute or per_minute <= 0:
            raise ConfigError(
                f"a request-rate limit must be a positive number per minute, got {per_minute!r}"
            )
        self.interval = 60.0 / float(per_minute)
        self._next = 0.0
        self._lock = threading.Lock()

    def delay(self) -> float:
        with self._lock:
            now = time.monotonic()
            slot = max(now, self._next)
            self._next = slot + self.interval
            return slot - now

    async def adelay(self) -> float:
        return self.delay()


class RateLimitedLLM:
    """``inner`` behind ``pacer``: each ``acomplete``/``complete`` first waits for its slot. Other
    attributes (``model``, ``usage``, capabilities) are the inner model's."""

    def __init__(self, inner: LLM, pacer: Pacer) -> None:
        self.inner = inner
        self.model = inner.model
        self.pacer = pacer

        async def acomplete(messages: list[dict[str, Any]], **kwargs: Any) -> Completion:
            await asyncio.sleep(await pacer.adelay())
            return await inner.acomplete(messages, **kwargs)

        # The agent reads acomplete's signature (which keywords the model takes): show the model's own.
        self.acomplete = functools.wraps(inner.acomplete)(acomplete)

    def complete(self, messages: list[dict[str, Any]], **kwargs: Any) -> Completion:
        time.sleep(self.pacer.delay())
        return self.inner.complete(messages, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


__all__ = ["Pacer", "RateLimitedLLM", "Spacing"]
