"""One ScienceWorld simulator process (a JVM behind py4j), and a pool that reuses them.

Starting a simulator takes seconds, so an idle one is kept in a process-wide pool and handed to
the next episode (``SIMULATORS.take`` / ``give``). Every call into the JVM runs with a timeout: a
simulator that hangs past it, or whose process died, is killed and the call raises
``SimulatorDied`` — the caller records the episode as failed (or retries it) and the run goes on.
Every process started here is killed at interpreter exit, so no ``java`` is left behind.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import contextlib
import shutil
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

from atlas.errors import ConfigError, EnvError

T = TypeVar("T")

#: Seconds a single call into the simulator may take before its process is killed.
STEP_TIMEOUT_S = 60.0
#: Seconds a simulator may take to start and load its first task.
START_TIMEOUT_S = 120.0
JAVA_HINT = (
    "ScienceWorld's simulator runs on Java, and no `java` is on PATH. Install a Java runtime "
    "(Debian/Ubuntu: apt-get install openjdk-17-jre-headless) and try again."
)
EXTRA_HINT = "the ScienceWorld environment needs: pip install 'atlas-memory[scienceworld]'"


class JavaMissingError(ConfigError):
    """No Java runtime: ScienceWorld's simulator cannot start."""


class SimulatorDied(EnvError):
    """The simulator process died or stopped answering; it has been killed."""


def check_runtime() -> None:
    """Raise a ``ConfigError`` naming what is missing (the package or a Java runtime)."""
    try:
        import scienceworld  # noqa: F401
    except ImportError as exc:
        raise ConfigError(EXTRA_HINT) from exc
    if shutil.which("java") is None:
        raise JavaMissingError(JAVA_HINT)


_LIVE: weakref.WeakSet[Simulator] = weakref.WeakSet()


class Simulator:
    """A running ScienceWorld JVM. ``call(fn, timeout)`` runs ``fn(server)`` against its py4j
    ``PythonInterface`` with a timeout; ``kill()`` ends the process (idempotent)."""

    def __init__(self, start_timeout: float = START_TIMEOUT_S) -> None:
        check_runtime()
        from scienceworld import ScienceWorldEnv

        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="scienceworld")
        self._dead: str | None = None
        self._proc: Any = None
        future = self._pool.submit(ScienceWorldEnv, "", None, 10_000)
        try:
            self._env = future.result(timeout=start_timeout)
        except concurrent.futures.TimeoutError as exc:
            self._pool.shutdown(wait=False, cancel_futures=True)
            raise SimulatorDied(
                f"the ScienceWorld simulator did not start within {start_timeout:.0f} s"
            ) from exc
        except Exception as exc:  # py4j / JVM start failures
            self._pool.shutdown(wait=False, cancel_futures=True)
            raise SimulatorDied(f"the ScienceWorld simulator failed to start: {exc}") from exc
        self._proc = self._env._gateway.java_process
        self.server = self._env.server
        self.loaded: tuple[str, int] | None = None  # the (task, variation) last loaded
        _LIVE.add(self)

    @property
    def pid(self) -> int | None:
        return getattr(self._proc, "pid", None)

    @property
    def alive(self) -> bool:
        return self._dead is None and self._proc is not None and self._proc.poll() is None

    def call(self, fn: Callable[[Any], T], timeout: float = STEP_TIMEOUT_S) -> T:
        """``fn(server)`` in the simulator's worker thread; SimulatorDied if it dies or hangs."""
        if not self.alive:
            raise SimulatorDied(
                f"the ScienceWorld simulator is not running ({self._dead or 'process ended'})"
            )
        future = self._pool.submit(fn, self.server)
        try:
            return future.result(timeout=timeout)
        except concurrent.futures.TimeoutError as exc:
            self.kill(f"a call took longer than {timeout:g} s")
            raise SimulatorDied(
                f"the ScienceWorld simulator hung (no answer in {timeout:g} s); killed"
            ) from exc
        except Exception as exc:
            if self._proc.poll() is not None:
                self.kill("the process ended")
                raise SimulatorDied("the ScienceWorld simulator process died") from exc
            from py4j.protocol import Py4JError

            if isinstance(exc, Py4JError) and not isinstance(exc, _java_error()):
                self.kill(f"py4j lost the connection: {exc}")
                raise SimulatorDied(f"the ScienceWorld simulator stopped answering: {exc}") from exc
            raise

    def kill(self, reason: str = "closed") -> None:
        """End the JVM (terminate, then kill) and the gateway; safe to call twice."""
        if self._dead is None:
            self._dead = reason
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.kill()
            with contextlib.suppress(Exception):
                proc.wait(timeout=10)
        env = getattr(self, "_env", None)
        if env is not None:
            env.close = lambda: None  # its __del__ would talk to the dead JVM
            _disconnect(env._gateway._gateway_client)
        self._pool.shutdown(wait=False, cancel_futures=True)


def _java_error() -> type[BaseException]:
    from py4j.protocol import Py4JJavaError

    return Py4JJavaError


def _disconnect(client: Any) -> None:
    """Mark py4j's client of a killed JVM as disconnected and close its sockets. Without this the
    finalizer of every Java object still held would dial the dead JVM and log a "Connection
    refused" traceback at ERROR (py4j skips the call once the client is not connected)."""
    client.is_connected = False
    with contextlib.suppress(Exception):
        client.close()


class SimulatorPool:
    """Idle simulators, reused across episodes (a simulator takes seconds to start). Thread-safe."""

    def __init__(self, limit: int = 4) -> None:
        self.limit = limit
        self._idle: list[Simulator] = []
        self._lock = threading.Lock()

    def take(self) -> Simulator:
        with self._lock:
            while self._idle:
                sim = self._idle.pop()
                if sim.alive:
                    return sim
        return Simulator()

    def give(self, sim: Simulator) -> None:
        if not sim.alive:
            return
        with self._lock:
            if len(self._idle) < self.limit:
                self._idle.append(sim)
                return
        sim.kill()

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for sim in idle:
            sim.kill()


SIMULATORS = SimulatorPool()


def live_pids() -> list[int]:
    """Process ids of the simulators this process started that still run (tests check none is left)."""
    return [p for s in list(_LIVE) if s.alive and (p := s.pid) is not None]


@atexit.register
def _kill_all() -> None:
    SIMULATORS.close()
    for sim in list(_LIVE):
        sim.kill("interpreter exit")


def wait_gone(pid: int, timeout: float = 10.0) -> bool:
    """True once process ``pid`` no longer runs (or is a zombie)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().split(")")[-1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.1)
    return False


__all__ = [
    "EXTRA_HINT",
    "JAVA_HINT",
    "SIMULATORS",
    "START_TIMEOUT_S",
    "STEP_TIMEOUT_S",
    "JavaMissingError",
    "Simulator",
    "SimulatorDied",
    "SimulatorPool",
    "check_runtime",
    "live_pids",
    "wait_gone",
]
