"""Host side of one sandbox worker: its limits, its process and the call conversation.

A ``WorkerHandle`` is one locked-down child (``worker.py``) in its own process group. ``run_call``
sends a call, serves the design's tool calls through a host callback, and enforces the limits
the child cannot enforce on itself: the wall-clock timeout (tool work included, model waits excluded), the tool-call
cap, the size of every message. A timeout or a flood ends with SIGKILL of the whole process group
— a timeout that only stops waiting would leave a process burning CPU. ``WorkerPool``
(``atlas.alma.sandbox.pool``) keeps them warm.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from atlas.alma.sandbox import protocol
from atlas.alma.sandbox.clean import safe_data, safe_text
from atlas.errors import SandboxError, ToolRefusal

WORKER_FILE = Path(__file__).with_name("worker.py")


@dataclass(frozen=True)
class SandboxLimits:
    """Limits of one design call (and of the worker process that runs it).

    ``timeout_s`` is the wall-clock time of one call, the host's work on its tool calls (embedding,
    search, graph) included; only time waiting on a language model (summarize/analyze, bounded by the
    tools' LLM budgets) is left out. ``max_call_s`` caps the whole call, model time included. ``cpu_budget_s`` is the RLIMIT_CPU of a worker's whole life (a backstop; the
    pool retires a worker before a call could hit it).
    """

    timeout_s: float = 10.0
    max_call_s: float = 120.0
    memory_mb: int = 512
    cpu_budget_s: int = 120
    max_tool_calls: int = 200
    max_print_chars: int = 20_000
    max_return_chars: int = 8_000
    max_memory_bytes: int = 2_000_000
    max_tool_args_bytes: int = 1_000_000
    startup_timeout_s: float = 30.0
    max_calls_per_worker: int = 1_000
    disable_layers: tuple[str, ...] = ()  # "landlock" / "seccomp": tests of the degraded mode only

    @property
    def max_message_bytes(self) -> int:
        return max(2 * self.max_memory_bytes + 4 * self.max_print_chars, self.max_tool_args_bytes) + 1_000_000

    def worker_limits(self) -> dict[str, Any]:
        return {
            "memory_mb": self.memory_mb,
            "cpu_budget_s": self.cpu_budget_s,
            "max_print_chars": self.max_print_chars,
            "max_return_chars": self.max_return_chars,
            "max_memory_bytes": self.max_memory_bytes,
            "max_tool_args_bytes": self.max_tool_args_bytes,
        }

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def default_read_paths() -> list[str]:
    """What a worker may read after lock-down: the interpreter's stdlib and lib-dynload (lazy codec
    and extension imports) — not site-packages, not the project, not /etc or /tmp."""
    stdlib = os.path.dirname(os.__file__)
    paths = {stdlib, os.path.join(stdlib, "lib-dynload")}
    paths.update(p for p in sys.path if p.endswith("lib-dynload"))
    return sorted(p for p in paths if os.path.isdir(p))


class WorkerDied(Exception):
    """The worker exited (crash, rlimit signal, escape attempt)."""


class WorkerTimeout(Exception):
    """No complete message before the deadline."""


@dataclass
class CallOutcome:
    """What one sandboxed call produced. ``error_kind`` is None when the design ran cleanly."""

    value: str | None = None
    memory: dict[str, Any] | None = None
    prints: list[str] = field(default_factory=list)
    prints_dropped: int = 0
    error: str | None = None
    error_kind: str | None = None
    traceback: str | None = None
    warnings: list[str] = field(default_factory=list)
    killed: bool = False
    worker: dict[str, Any] = field(default_factory=dict)


@dataclass
class ToolValue:
    """A tool handler's result with the host time not to charge to the design's timeout."""

    value: Any
    uncounted_s: float = 0.0


ToolHandler = Callable[[str, dict[str, Any]], Any]  # returns a result (or a ToolValue), or raises ToolRefusal


class WorkerHandle:
    """One sandbox worker process (its own session / process group)."""

    def __init__(
        self, limits: SandboxLimits, *, python: str | None = None, read_paths: list[str] | None = None
    ) -> None:
        self.limits = limits
        self.bound_hash: str | None = None
        self.loaded: set[str] = set()
        self.calls = 0
        self.cpu_s = 0.0
        self.healthy = True
        self._buffer = bytearray()
        self._stderr: collections.deque[bytes] = collections.deque(maxlen=64)
        started = time.perf_counter()
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}
        try:
            self.proc = subprocess.Popen(
                [python or sys.executable, "-I", "-B", str(WORKER_FILE)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                close_fds=True,
                env=env,
                cwd="/",
            )
        except OSError as exc:
            raise SandboxError(f"cannot start a sandbox worker: {exc}") from exc
        self.pid = self.proc.pid
        threading.Thread(target=self._drain_stderr, name=f"sandbox-stderr-{self.pid}", daemon=True).start()
        try:
            self.send(
                {
                    "op": "init",
                    "limits": limits.worker_limits(),
                    "read_paths": default_read_paths(),
                    "disable": list(limits.disable_layers),
                }
            )
            ready = self.read_message(time.monotonic() + limits.startup_timeout_s)
        except (WorkerDied, WorkerTimeout, protocol.ProtocolError, OSError) as exc:
            self.kill()
            raise SandboxError(
                f"sandbox worker failed to start: {exc}; stderr: {self.stderr_tail()}"
            ) from exc
        if ready.get("op") != "ready" or not isinstance(ready.get("protections"), dict):
            self.kill()
            raise SandboxError(f"sandbox worker sent {ready!r} instead of 'ready'")
        self.protections: dict[str, Any] = ready["protections"]
        self.startup_s = time.perf_counter() - started

    # -- process -------------------------------------------------------------------------------

    def _drain_stderr(self) -> None:
        stream = self.proc.stderr
        assert stream is not None
        with contextlib.suppress(OSError, ValueError):
            for line in iter(lambda: stream.readline(4096), b""):
                self._stderr.append(line)
        with contextlib.suppress(OSError):
            stream.close()

    def stderr_tail(self) -> str:
        return b"".join(self._stderr).decode("utf-8", "replace")[-2000:].strip()

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        """SIGKILL the worker's whole process group and reap it."""
        self.healthy = False
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            self.proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        for stream in (self.proc.stdin, self.proc.stdout):
            with contextlib.suppress(OSError, ValueError):
                if stream is not None:
                    stream.close()

    def close(self) -> None:
        """Stop the worker. It holds nothing worth flushing, so this is a kill (fast, never blocks)."""
        self.kill()

    def death_reason(self) -> str:
        code = self.proc.poll()
        if code is None:
            return "worker is still running"
        if code < 0:
            sig = -code
            name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
            hints: dict[int, str] = {
                signal.SIGXCPU: f" (CPU limit of {self.limits.cpu_budget_s} s exceeded)",
                signal.SIGXFSZ: " (attempt to write a file)",
                signal.SIGSEGV: " (crash: segmentation fault)",
                signal.SIGSYS: " (forbidden system call)",
                signal.SIGKILL: " (killed)",
            }
            return f"worker killed by {name}{hints.get(sig, '')}"
        tail = self.stderr_tail()
        return f"worker exited with status {code}" + (f": {tail[-500:]}" if tail else "")

    # -- messages ------------------------------------------------------------------------------

    def send(self, message: dict[str, Any] | bytes) -> None:
        data = message if isinstance(message, bytes) else protocol.encode(message)
        stdin = self.proc.stdin
        assert stdin is not None
        try:
            stdin.write(data)
            stdin.flush()
        except (BrokenPipeError, OSError, ValueError) as exc:
            raise WorkerDied(self.death_reason()) from exc

    def read_message(self, deadline: float) -> dict[str, Any]:
        """The next complete line as a message; WorkerTimeout at ``deadline`` (monotonic)."""
        stdout = self.proc.stdout
        assert stdout is not None
        fd = stdout.fileno()
        limit = self.limits.max_message_bytes
        while True:
            nl = self._buffer.find(b"\n")
            if nl >= 0:
                line = bytes(self._buffer[: nl + 1])
                del self._buffer[: nl + 1]
                return safe_data(protocol.decode(line, protocol.WORKER_OPS))  # see clean.py
            if len(self._buffer) > limit:
                raise protocol.ProtocolError(f"worker sent a message over {limit} bytes")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise WorkerTimeout()
            ready, _, _ = select.select([fd], [], [], min(remaining, 1.0))
            if not ready:
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                raise WorkerDied(self._wait_reason())
            self._buffer += chunk

    def _wait_reason(self) -> str:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=2)
        return self.death_reason()

    # -- one call ------------------------------------------------------------------------------

    def run_call(
        self,
        *,
        design_hash: str,
        source: str,
        function: str,
        memory: dict[str, Any] | bytes,
        arg: Any,
        return_memory: bool,
        tool_handler: ToolHandler,
        limits: SandboxLimits | None = None,
    ) -> CallOutcome:
        """Run ``function`` of the design in this worker, serving its tool calls with ``tool_handler``
        (which returns a result or raises ``ToolRefusal``). Never raises for the design's faults;
        an exception from ``tool_handler`` itself (a host bug) kills the worker and propagates.
        ``limits`` overrides the per-call limits (timeout, caps); rlimits stay the pool's. ``memory``
        may be given pre-encoded (JSON bytes) when the same memory is sent many times (frozen)."""
        limits = limits or self.limits
        started = time.monotonic()
        deadline = started + limits.timeout_s
        hard_deadline = started + limits.max_call_s
        outcome = CallOutcome(worker={"pid": self.pid, "reused": self.calls > 0})
        self.calls += 1
        tool_calls = 0
        header = {
            "op": "call",
            "id": self.calls,
            "hash": design_hash,
            "source": None if design_hash in self.loaded else source,
            "function": function,
            "arg": arg,
            "return_memory": return_memory,
            "limits": limits.worker_limits(),
        }
        try:
            memory_json = (
                memory
                if isinstance(memory, bytes)
                else (json.dumps(memory, separators=(",", ":")).encode("ascii"))
            )
            self.send(protocol.encode(header)[:-2] + b',"memory":' + memory_json + b"}\n")
            self.loaded.add(design_hash)
            while True:
                message = self.read_message(min(deadline, hard_deadline))
                op = message["op"]
                if op == "done":
                    self._finish(message, outcome, return_memory, limits)
                    if tool_calls > limits.max_tool_calls and outcome.error is None:
                        # the design swallowed the refusal and finished: still a failed call
                        outcome.error = (
                            f"tool call limit of {limits.max_tool_calls} per call exceeded; "
                            "changes from this call were discarded"
                        )
                        outcome.error_kind, outcome.value, outcome.memory = "limit", None, None
                    break
                if op == "need_source":
                    header["source"] = source
                    self.send(protocol.encode(header)[:-2] + b',"memory":' + memory_json + b"}\n")
                    continue
                if op != "tool":
                    raise protocol.ProtocolError(f"unexpected {op!r} during a call")
                tool_calls += 1
                if tool_calls > limits.max_tool_calls + 1:
                    self._fail(
                        outcome,
                        "limit",
                        f"tool call flood: more than {limits.max_tool_calls} tool calls "
                        "and the design kept calling after being refused; worker killed",
                    )
                    break
                name, args = message.get("name"), message.get("args")
                if tool_calls > limits.max_tool_calls:
                    self.send(
                        {
                            "op": "tool_result",
                            "ok": False,
                            "fatal": True,
                            "error": f"tool call limit of {limits.max_tool_calls} per call exceeded",
                        }
                    )
                    continue
                reply, uncounted = self._serve_tool(tool_handler, name, args)
                deadline += min(uncounted, limits.max_call_s)  # waiting on a model is not the design's time
                self.send(reply)
        except WorkerTimeout:
            if time.monotonic() >= hard_deadline:
                why = f"call exceeded {limits.max_call_s:.0f} s including tool calls"
            else:
                why = f"timed out after {limits.timeout_s:g} s of design time"
            self._fail(outcome, "timeout", f"{why}; worker killed")
        except WorkerDied as exc:
            self._fail(outcome, "crash", f"sandbox worker died: {exc}")
        except protocol.ProtocolError as exc:
            self._fail(outcome, "protocol", f"protocol violation: {exc}; worker killed")
        except BaseException:
            self.kill()  # a host-side bug mid-call: never leave the worker waiting
            raise
        outcome.worker["seconds"] = round(time.monotonic() - started, 4)
        return outcome

    def _serve_tool(self, tool_handler: ToolHandler, name: Any, args: Any) -> tuple[dict[str, Any], float]:
        """The reply to one tool call and the seconds of it not charged to the design's timeout."""
        if not isinstance(name, str) or not isinstance(args, dict):
            return {"op": "tool_result", "ok": False, "error": "malformed tool call"}, 0.0
        try:
            result = tool_handler(name, args)
        except ToolRefusal as exc:
            return {"op": "tool_result", "ok": False, "error": str(exc)}, 0.0
        if isinstance(result, ToolValue):
            return {"op": "tool_result", "ok": True, "result": result.value}, max(0.0, result.uncounted_s)
        return {"op": "tool_result", "ok": True, "result": result}, 0.0

    def _fail(self, outcome: CallOutcome, kind: str, message: str) -> None:
        self.kill()
        outcome.error, outcome.error_kind, outcome.killed = message, kind, True
        outcome.worker["killed"] = True

    def _finish(
        self, message: dict[str, Any], outcome: CallOutcome, return_memory: bool, limits: SandboxLimits
    ) -> None:
        """Copy a ``done`` message into ``outcome``, validating every field and enforcing the caps
        again: the worker is untrusted (a design can even monkey-patch the worker's JSON encoder and
        write its own ``done`` line), so nothing it sends is taken on trust."""
        prints = message.get("prints")
        outcome.prints = _cap_lines(prints, limits.max_print_chars) if isinstance(prints, list) else []
        dropped = message.get("prints_dropped")
        outcome.prints_dropped = dropped if isinstance(dropped, int) else 0
        warnings = message.get("warnings")
        outcome.warnings = [safe_text(w)[:500] for w in warnings][:50] if isinstance(warnings, list) else []
        cpu = message.get("cpu_s")
        if isinstance(cpu, int | float):
            self.cpu_s = float(cpu)
            outcome.worker["cpu_s"] = round(self.cpu_s, 3)
        if message.get("recycle"):
            self.healthy = False
        if message.get("ok") is True:
            value = message.get("value")
            outcome.value = _clean(value) if isinstance(value, str) else None
            if outcome.value is not None and len(outcome.value) > limits.max_return_chars:
                outcome.warnings.append(
                    f"recall returned {len(outcome.value)} characters; truncated to {limits.max_return_chars}"
                )
                outcome.value = outcome.value[: limits.max_return_chars]
            if return_memory:
                memory = message.get("memory")
                if not isinstance(memory, dict):
                    outcome.error, outcome.error_kind = "worker returned no memory dict", "protocol"
                    self.healthy = False
                    return
                size = len(json.dumps(memory, separators=(",", ":")))
                if size > limits.max_memory_bytes:
                    outcome.error, outcome.error_kind = (
                        (
                            f"memory is {size} bytes of JSON, over the cap of "
                            f"{limits.max_memory_bytes}; changes from this call "
                            "were discarded"
                        ),
                        "limit",
                    )
                    return
                outcome.memory = memory
            return
        outcome.error = safe_text(message.get("error") or "design call failed")[:2000]
        kind = message.get("error_kind")
        outcome.error_kind = kind if kind in {"design", "limit", "invalid_return"} else "design"
        tb = message.get("traceback")
        outcome.traceback = safe_text(tb)[:8000] if tb else None

    @property
    def retired(self) -> bool:
        """Should not take another call (unhealthy, dead, near its CPU budget, or old)."""
        return (
            not self.healthy
            or not self.alive
            or self.calls >= self.limits.max_calls_per_worker
            or self.cpu_s > self.limits.cpu_budget_s - self.limits.timeout_s - 5
        )


def _cap_lines(lines: list[Any], max_chars: int) -> list[str]:
    """At most ``max_chars`` characters of ``lines`` (as clean strs), cut at the cap."""
    out: list[str] = []
    room = max_chars
    for line in lines[:10_000]:
        if room <= 0:
            break
        text = _clean(line)[:room]
        out.append(text)
        room -= len(text) + 1  # the newline the worker split on
    return out


def _clean(text: Any) -> str:
    """``text`` as a str safe to log and show (see ``clean.safe_text``)."""
    return safe_text(text)


__all__ = [
    "WORKER_FILE",
    "CallOutcome",
    "SandboxLimits",
    "ToolHandler",
    "ToolValue",
    "WorkerDied",
    "WorkerHandle",
    "WorkerTimeout",
    "default_read_paths",
]
