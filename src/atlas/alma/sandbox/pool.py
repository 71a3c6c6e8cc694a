"""Host side of the sandbox: a pool that keeps worker processes warm and reuses them.

``WorkerPool`` keeps workers warm. A worker (a ``WorkerHandle``, ``atlas.alma.sandbox.process``) is
*bound* to the first key it runs for and only ever reused for that key, so one design can never leave
state (monkey-patched modules, globals) behind for another. ``DesignRunner`` uses a key of its own
(the design's hash and the runner's id): two runners of one design, e.g. two namespaces of a served
design, never share a worker either. Unbound "spare" workers are started ahead of time.

Deployment calls (``fresh=True``) go further: each runs in a worker that never ran anything and is
discarded afterwards, because a design can stash data in the attributes of the modules it may
import (``json.JSONDecoder.cache = ...``) and that would carry state past the frozen ``memory`` — from
collection into deployment, or from one deployment task to the next. The one exception is the
genome screening of a compiled genome, the parts' own code (``DesignRunner(isolated=False)``).
"""

from __future__ import annotations

import atexit
import collections
import threading
import time
import weakref
from typing import Any

from atlas.alma.sandbox.process import SandboxLimits, WorkerHandle
from atlas.errors import SandboxError, ToolRefusal

_live_pools: weakref.WeakSet[WorkerPool] = weakref.WeakSet()


@atexit.register
def _close_all_pools() -> None:  # no worker outlives the host
    for pool in list(_live_pools):
        pool.close()


class WorkerPool:
    """Warm sandbox workers, reused per design (see the module docstring). Thread-safe."""

    def __init__(
        self,
        limits: SandboxLimits | None = None,
        *,
        max_workers: int = 4,
        spares: int = 1,
        python: str | None = None,
    ) -> None:
        self.limits = limits or SandboxLimits()
        self.max_workers = max(1, max_workers)
        self.spares = max(0, spares)
        self.python = python
        self._cond = threading.Condition()
        self._idle: collections.OrderedDict[int, WorkerHandle] = collections.OrderedDict()
        self._busy: set[WorkerHandle] = set()
        self._starting = 0
        self._closed = False
        self._protections: dict[str, Any] | None = None
        self.started = 0  # workers started over the pool's life
        _live_pools.add(self)

    # -- bookkeeping ---------------------------------------------------------------------------

    def _count(self) -> int:
        return len(self._idle) + len(self._busy) + self._starting

    def _spawn(self) -> WorkerHandle:
        worker = WorkerHandle(self.limits, python=self.python)
        self.started += 1
        if self._protections is None:
            self._protections = worker.protections
        return worker

    def _spawn_spare(self) -> None:
        try:
            worker = self._spawn()
        except SandboxError:
            with self._cond:
                self._starting -= 1
                self._cond.notify_all()
            return
        with self._cond:
            self._starting -= 1
            if self._closed:
                worker.kill()
            else:
                self._idle[worker.pid] = worker
            self._cond.notify_all()

    def _top_up_spares(self) -> None:
        """Start spare workers in the background (caller holds the lock)."""
        spare = sum(1 for w in self._idle.values() if w.bound_hash is None) + self._starting
        while not self._closed and spare < self.spares and self._count() < self.max_workers:
            self._starting += 1
            spare += 1
            threading.Thread(target=self._spawn_spare, name="sandbox-spawn", daemon=True).start()

    # -- public --------------------------------------------------------------------------------

    def acquire(self, design_hash: str, timeout: float | None = None, *, fresh: bool = False) -> WorkerHandle:
        """A worker bound to ``design_hash`` (any key: the runner passes its own): an idle one that ran
        it, else a spare, else a new one.
        ``fresh``: only a worker that never ran anything (a spare or a new one)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        spawn = False
        with self._cond:
            while True:
                if self._closed:
                    raise SandboxError("worker pool is closed")
                for pid, w in list(self._idle.items()):
                    if w.retired:
                        del self._idle[pid]
                        w.close()
                match = (
                    None
                    if fresh
                    else next((w for w in self._idle.values() if w.bound_hash == design_hash), None)
                )
                match = match or next((w for w in self._idle.values() if w.bound_hash is None), None)
                if match is not None:
                    del self._idle[match.pid]
                    break
                if self._count() < self.max_workers:
                    self._starting += 1
                    spawn = True
                    break
                if self._idle:  # evict the least recently used worker of another design
                    _, old = self._idle.popitem(last=False)
                    old.close()
                    continue
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    raise SandboxError("no sandbox worker became free in time")
                self._cond.wait(remaining if remaining is not None else 1.0)
        if spawn:
            try:
                match = self._spawn()
            finally:
                with self._cond:
                    self._starting -= 1
        assert match is not None  # found idle, or spawned above
        with self._cond:
            match.bound_hash = design_hash
            self._busy.add(match)
            self._top_up_spares()
        return match

    def release(self, worker: WorkerHandle, *, discard: bool = False) -> None:
        """Return a worker after a call; retired, dead or ``discard``-ed ones are killed, not reused."""
        with self._cond:
            self._busy.discard(worker)
            if self._closed or discard or worker.retired:
                worker.close()
            else:
                self._idle[worker.pid] = worker
                self._idle.move_to_end(worker.pid)
            self._top_up_spares()
            self._cond.notify_all()

    def retire(self, design_hash: str) -> None:
        """Close the idle workers bound to ``design_hash`` (its evaluation is over)."""
        with self._cond:
            for pid, w in list(self._idle.items()):
                if w.bound_hash == design_hash:
                    del self._idle[pid]
                    w.close()
            self._top_up_spares()
            self._cond.notify_all()

    @property
    def protections(self) -> dict[str, Any]:
        """What the workers of this pool enforce (starts one worker if none has run yet)."""
        if self._protections is None:
            worker = self.acquire("__probe__")
            worker.bound_hash = None
            self.release(worker)
        assert self._protections is not None
        return self._protections

    def pids(self) -> list[int]:
        with self._cond:
            return [w.pid for w in [*self._idle.values(), *self._busy]]

    def close(self) -> None:
        with self._cond:
            self._closed = True
            workers = [*self._idle.values(), *self._busy]
            self._idle.clear()
            self._busy.clear()
            self._cond.notify_all()
        for w in workers:
            w.close()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["SandboxLimits", "ToolRefusal", "WorkerPool"]
