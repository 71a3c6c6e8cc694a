"""Run coroutines from synchronous code, whether or not an event loop is already running."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

_pool = concurrent.futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="atlas-sync")


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion and return its result.

    Without a running loop this is ``asyncio.run``; inside one (a notebook, an async agent)
    the coroutine runs on a fresh loop in a worker thread so the caller's loop is never re-entered.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    return _pool.submit(asyncio.run, coro).result()
