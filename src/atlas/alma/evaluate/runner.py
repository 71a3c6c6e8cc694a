"""DesignRunner: the one object the ALMA harness uses to run a memory design.

It owns the design's state for one evaluation — the ``memory`` dict and the tools' vector store
and graph — and runs ``update``/``recall`` in a sandbox worker from a ``WorkerPool`` (never in the
host). Every call returns a ``CallLog``; a design that crashes, times out, floods or cheats yields
a log with ``error`` set (and ``recall`` returns ``""``) — the runner never raises for the
design's faults, only ``SandboxError`` when the sandbox itself cannot run.

Before ``freeze()`` calls are serialized (each one reads and replaces ``memory``); after it, write
tools are refused, memory changes made in ``recall`` are discarded, and recalls may run
concurrently (each in its own worker). Host-side designs (``origin == "host"``: trusted adapters
of the memory library) present the same interface without a sandbox; the runner gets them from the
``HostExecutor`` it is given (``atlas.alma.baselines.make_host_design``), so the evaluation layer
never imports the baselines.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import Any, Protocol

from atlas.alma.design import Design, DesignProblem, check_design
from atlas.alma.evaluate.runlog import (
    DEFAULT_THRESHOLDS,
    CallLog,
    SimilarityThresholds,
    ToolCallRecord,
    bounded,
    bounded_args,
)
from atlas.alma.evaluate.tools import DesignTools, ToolSettings, ToolUsage
from atlas.alma.sandbox.pool import SandboxLimits, WorkerPool
from atlas.alma.sandbox.process import ToolValue
from atlas.core.types import new_id
from atlas.errors import AtlasError, ConfigError, InvalidInputError, ToolRefusal
from atlas.protocols.embed import Embedder
from atlas.protocols.llm import LLM

SNAPSHOT_VERSION = 1
MAX_TOOL_RECORDS = 100  # tool call records kept per call; the rest are only counted
MAX_EVAL_TOOL_RECORDS = 2_000  # ... and per evaluation (calls.jsonl stays a few MB at most)
RECORD_CHARS = 600  # JSON characters of a record's arguments, and of its result


class HostDesign(Protocol):
    """What DesignRunner needs from a host-side design (a trusted in-process adapter)."""

    def update(self, episode: dict[str, Any], log: CallLog) -> None: ...
    def recall(self, task: dict[str, Any], log: CallLog) -> str: ...
    def freeze(self) -> None: ...
    def snapshot(self) -> dict[str, Any]: ...
    def restore(self, data: dict[str, Any]) -> None: ...
    def close(self) -> None: ...


class HostExecutor(Protocol):
    """Builds the adapter that runs a host-side design (``origin == "host"``) in process;
    ``atlas.alma.baselines.make_host_design`` is the one ATLAS ships."""

    def __call__(self, design: Design, *, embedder: Embedder, llm: LLM | None) -> HostDesign: ...


class DesignRunner:
    """Runs one design's ``update``/``recall`` with its tools, state and runtime logs."""

    def __init__(
        self,
        design: Design,
        *,
        embedder: Embedder,
        llm: LLM | None = None,
        pool: WorkerPool | None = None,
        limits: SandboxLimits | None = None,
        thresholds: SimilarityThresholds = DEFAULT_THRESHOLDS,
        tool_settings: ToolSettings | None = None,
        skip_static_check: bool = False,
        host_executor: HostExecutor | None = None,
        isolated: bool = True,
    ) -> None:
        """``host_executor`` runs host-side designs (required for one). ``skip_static_check`` exists
        for tests that prove the sandbox contains code the checker would have rejected; never set it
        for real designs. ``isolated=False`` lets the design's calls share sandbox workers: a frozen call
        reuses a worker instead of a never-used one, and runners of one design share theirs (see
        WorkerPool). Only for the genome screening of the parts' own code, which keeps no state in a
        worker; a process start per call was most of its time."""
        self.design = design
        self.isolated = isolated
        self.embedder = embedder
        self.llm = llm
        self.limits = limits or (pool.limits if pool is not None else SandboxLimits())
        self._pool = pool
        self._owns_pool = pool is None
        self.memory: dict[str, Any] = {}
        self.tools = DesignTools(embedder, llm, thresholds=thresholds, settings=tool_settings)
        self._frozen = False
        self._frozen_memory: bytes | None = None  # memory encoded once at freeze(), sent to every recall
        self._lock = threading.Lock()
        self._records_lock = threading.Lock()
        self.records = 0  # tool call records kept in this evaluation's logs
        self._closed = False
        self.calls = 0
        self.host: HostDesign | None = None
        self._static_checked = not skip_static_check
        # Workers are bound to this runner, not only to the design: two isolated runners of one design
        # (two namespaces of a served design, a smoke run and an evaluation) never share a worker, so
        # whatever a call leaves in the worker (attributes set on classes or module data of the
        # allowed modules) never reaches another runner's calls. ``isolated=False`` (the screening of a
        # compiled genome, whose parts keep no state in a worker) shares them across its runners.
        self._worker_key = f"{design.source_hash}:{new_id() if isolated else 'shared'}"
        if design.origin == "host":
            if host_executor is None:
                raise ConfigError(
                    f"{design.name!r} is a host-side design: pass host_executor= "
                    "(atlas.alma.baselines.make_host_design) to run it"
                )
            self.host = host_executor(design, embedder=embedder, llm=llm)
            self.problems: list[DesignProblem] = []
        else:
            self.problems = [] if skip_static_check else check_design(design.source)
            _warm(embedder)

    # -- state ---------------------------------------------------------------------------------

    @property
    def frozen(self) -> bool:
        return self._frozen

    @property
    def valid(self) -> bool:
        return not self.problems

    def freeze(self) -> None:
        """Deployment mode: write tools refused, recall's memory changes discarded, recalls concurrent."""
        with self._lock:
            self._frozen = True
            self._frozen_memory = json.dumps(self.memory, separators=(",", ":")).encode("ascii")
            self.tools.freeze()
            if self.host is not None:
                self.host.freeze()

    @property
    def pool(self) -> WorkerPool:
        if self._pool is None:
            self._pool = WorkerPool(self.limits)
        return self._pool

    @property
    def protections(self) -> dict[str, Any]:
        """Which protections run this design: the worker's own report plus what the host enforces."""
        if self.host is not None:
            return {
                "sandbox": False,
                "reason": "trusted host-side adapter (origin 'host'); runs in process",
                "summary": "none (trusted code)",
            }
        return describe_protections(self.pool.protections, self.limits, static_check=self._static_checked)

    def snapshot(self) -> dict[str, Any]:
        """JSON-safe state: memory, vector collections, graph (and a host adapter's own state)."""
        with self._lock:
            data = {
                "version": SNAPSHOT_VERSION,
                "design_id": self.design.id,
                "design_hash": self.design.source_hash,
                "frozen": self._frozen,
                "memory": self.memory,
                "tools": self.tools.snapshot(),
            }
            if self.host is not None:
                data["host"] = self.host.snapshot()
            return data

    @classmethod
    def restore(cls, design: Design, snapshot: dict[str, Any], **kwargs: Any) -> DesignRunner:
        """A runner for ``design`` with the state of ``snapshot`` (same keyword arguments as the
        constructor). The frozen flag is restored too."""
        if not isinstance(snapshot, dict) or snapshot.get("version") != SNAPSHOT_VERSION:
            raise InvalidInputError("not a DesignRunner snapshot (missing or unknown version)")
        runner = cls(design, **kwargs)
        memory = snapshot.get("memory")
        if not isinstance(memory, dict):
            raise InvalidInputError("snapshot memory must be a dict")
        runner.memory = memory
        runner.tools = DesignTools.from_snapshot(
            snapshot.get("tools") or {},
            runner.embedder,
            runner.llm,
            thresholds=runner.tools.thresholds,
            settings=runner.tools.settings,
        )
        if runner.host is not None and snapshot.get("host") is not None:
            runner.host.restore(snapshot["host"])
        if snapshot.get("frozen"):
            runner.freeze()
        return runner

    # -- calls ---------------------------------------------------------------------------------

    async def update(self, episode: dict[str, Any], *, label: str = "") -> CallLog:
        """Run the design's ``update`` on one episode (collection phase)."""
        return await asyncio.to_thread(self.call, "update", episode, label)

    async def recall(self, task: dict[str, Any], *, label: str = "") -> tuple[str, CallLog]:
        """Run the design's ``recall`` on a task view; ``("", log)`` when it failed."""
        log = await asyncio.to_thread(self.call, "recall", task, label)
        return (log.return_value or "") if log.ok else "", log

    def update_sync(self, episode: dict[str, Any], *, label: str = "") -> CallLog:
        return self.call("update", episode, label)

    def recall_sync(self, task: dict[str, Any], *, label: str = "") -> tuple[str, CallLog]:
        log = self.call("recall", task, label)
        return (log.return_value or "") if log.ok else "", log

    def call(self, function: str, arg: dict[str, Any], label: str = "") -> CallLog:
        """Blocking core of ``update``/``recall`` (the async methods run it in a thread)."""
        if function not in ("update", "recall"):
            raise InvalidInputError(f"function must be 'update' or 'recall', got {function!r}")
        log = CallLog(phase=function, episode=label, design_id=self.design.id)  # type: ignore[arg-type]
        started = time.perf_counter()
        try:
            if self.problems:
                log.error = "design failed the static check: " + "; ".join(str(p) for p in self.problems)
                log.error_kind = "static_check"
            elif function == "update" and self._frozen:
                log.error = "update refused: memory is frozen for deployment"
                log.error_kind = "frozen"
            elif self.host is not None:
                self._call_host(function, arg, log)
            elif self._frozen:
                self._call_sandbox(function, arg, log, frozen=True)
            else:
                with self._lock:
                    self._call_sandbox(function, arg, log, frozen=False)
        finally:
            log.duration_s = time.perf_counter() - started
            self.calls += 1
        return log

    def _call_host(self, function: str, arg: dict[str, Any], log: CallLog) -> None:
        assert self.host is not None
        try:
            if function == "update":
                self.host.update(arg, log)
            else:
                log.return_value = self.host.recall(arg, log)
        except AtlasError as exc:  # e.g. the model behind the memory library failed: data, not a crash
            log.error, log.error_kind = f"{type(exc).__name__}: {exc}", "host"

    def _tool_handler(self, log: CallLog):
        per_call = ToolUsage()

        def handle(name: str, args: dict[str, Any]) -> ToolValue:
            shown = {k: v for k, v in args.items() if v is not None}  # defaults the design did not set
            record = ToolCallRecord(name=name, args=bounded_args(shown, RECORD_CHARS))
            t0 = time.perf_counter()
            try:
                result = self.tools.call(name, args, per_call)
            except ToolRefusal as exc:
                record.error = str(exc)[:RECORD_CHARS]
                raise
            finally:
                record.duration_ms = round((time.perf_counter() - t0) * 1000, 3)
                self._keep(log, record)
            record.result = bounded(result.value, RECORD_CHARS)
            record.similarity = result.similarity
            return ToolValue(result.value, uncounted_s=result.llm_s)

        return handle

    def _keep(self, log: CallLog, record: ToolCallRecord) -> None:
        """Keep a tool call record while the per-call and per-evaluation log budgets last; count the rest."""
        with self._records_lock:
            if len(log.tool_calls) < MAX_TOOL_RECORDS and self.records < MAX_EVAL_TOOL_RECORDS:
                log.tool_calls.append(record)
                self.records += 1
            else:
                log.tool_calls_dropped += 1

    def _call_sandbox(self, function: str, arg: dict[str, Any], log: CallLog, *, frozen: bool) -> None:
        design = self.design
        fresh = frozen and self.isolated  # see WorkerPool: no state carries over
        worker = self.pool.acquire(self._worker_key, fresh=fresh)
        try:
            outcome = worker.run_call(
                design_hash=design.source_hash,
                source=design.source,
                function=function,
                memory=self._frozen_memory if frozen and self._frozen_memory else self.memory,
                arg=arg,
                return_memory=not frozen,
                tool_handler=self._tool_handler(log),
                limits=self.limits,
            )
        finally:
            self.pool.release(worker, discard=fresh)
        log.prints, log.prints_dropped = outcome.prints, outcome.prints_dropped
        log.warnings = outcome.warnings
        log.worker = outcome.worker
        log.error, log.error_kind, log.traceback = outcome.error, outcome.error_kind, outcome.traceback
        if outcome.error is None:
            if function == "recall":
                log.return_value = outcome.value if outcome.value is not None else ""
            if outcome.memory is not None and not frozen:
                self.memory = outcome.memory

    # -- lifetime ------------------------------------------------------------------------------

    def close(self) -> None:
        """Stop this design's workers (and the pool, if the runner created it)."""
        if self._closed:
            return
        self._closed = True
        if self._pool is not None:
            if self._owns_pool:
                self._pool.close()
            elif self.isolated:  # a shared worker stays for the design's next runner (the pool evicts it)
                self._pool.retire(self._worker_key)
        if self.host is not None:
            self.host.close()

    async def aclose(self) -> None:
        await asyncio.to_thread(self.close)

    async def __aenter__(self) -> DesignRunner:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _warm(embedder: Embedder) -> None:
    """Load the embedding model now: tool work counts against a design call's timeout, and loading a
    model inside the first store_obs is not the design's doing. A failure shows up at the tool call."""
    try:
        embedder.embed(["warm-up"])
    except Exception:  # reported where a design uses it, as its tool error
        return


def describe_protections(
    worker_report: dict[str, Any], limits: SandboxLimits, *, static_check: bool = True
) -> dict[str, Any]:
    """The full protections dict: what the worker applied to itself and what the host enforces,
    with a one-line ``summary`` and ``degraded`` explaining any missing layer."""
    landlock = worker_report.get("landlock", {})
    seccomp = worker_report.get("seccomp", {})
    degraded = []
    if not landlock.get("active"):
        degraded.append(
            f"Landlock unavailable ({landlock.get('reason', 'unknown')}): file reads are not "
            "confined; seccomp still refuses opening files for writing"
        )
    if not seccomp.get("active"):
        degraded.append(
            f"seccomp unavailable ({seccomp.get('reason', 'unknown')}): sockets, exec and fork "
            "are only blocked by the restricted builtins and the process limits"
        )
    active = ["rlimits"] + [n for n, r in (("landlock", landlock), ("seccomp", seccomp)) if r.get("active")]
    active += ["restricted-builtins", "wall-clock-timeout", "caps"]
    if static_check:
        active.insert(0, "static-check")
    return {
        "sandbox": True,
        "summary": " + ".join(active),
        "rlimits": worker_report.get("rlimits", {}),
        "landlock": landlock,
        "seccomp": seccomp,
        "builtins": worker_report.get("builtins", {}),
        "host": {
            "timeout_s": limits.timeout_s,
            "max_call_s": limits.max_call_s,
            "kill": "SIGKILL of the worker's process group",
            "max_tool_calls": limits.max_tool_calls,
            "max_print_chars": limits.max_print_chars,
            "max_return_chars": limits.max_return_chars,
            "max_memory_bytes": limits.max_memory_bytes,
        },
        "degraded": degraded,
    }


__all__ = ["DesignRunner", "describe_protections"]
