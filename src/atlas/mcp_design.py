"""MCP server over an exported memory design (``atlas mcp --design DIR``).

Tools — every one takes a ``namespace`` (same rules as the memory server: 1-64 letters, digits,
``_`` or ``-``):

- ``recall(task, namespace)``   the design's advice for a task: the task view object the design
  receives (``{"goal", "observation", "domain"}``, as in ``advice.jsonl``) or a goal string
- ``update(episode, namespace)``  let the design learn from a finished episode (``--learn`` only)
- ``memory_info(namespace)``     the design, its scores and what its memory holds

Every reply is made safe text at this boundary (``atlas.core.safetext.safe_data``): a string a
design or an edited export holds that UTF-8 cannot encode (a lone surrogate) becomes U+FFFD.

Frozen (default): every namespace reads the same learned memory, as deployment did. With
``learn=True`` each namespace starts from its own copy of the learned memory, and one namespace's
updates are never seen by another; with a ``path`` each namespace's memory is written to
``<path>/<namespace>.json`` (atomically) after every update and picked up again on restart.
"""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from atlas.alma.deploy.export import ExportedDesign, load_export
from atlas.alma.deploy.served import ServedDesign
from atlas.core.safetext import safe_data
from atlas.errors import InvalidInputError
from atlas.memory.guidelines.config import check_namespace

if TYPE_CHECKING:
    from atlas.protocols.embed import Embedder
    from atlas.protocols.llm import LLM


MAX_NAMESPACES = 256  # learning copies one server keeps (each one a copy of the learned memory)


class DesignHub:
    """One ``ServedDesign`` (frozen) or one per namespace (learning), sharing a worker pool."""

    def __init__(
        self,
        exported: ExportedDesign,
        *,
        embedder: Embedder | None = None,
        llm: LLM | None = None,
        learn: bool = False,
        path: str | Path | None = None,
        max_namespaces: int = MAX_NAMESPACES,
    ) -> None:
        from atlas.alma.deploy.served import embedder_for
        from atlas.alma.sandbox.pool import SandboxLimits, WorkerPool

        self.exported = exported
        self.learn = learn
        self.max_namespaces = max_namespaces
        self.llm = llm
        self.path = Path(path) if path is not None and learn else None
        if self.path is not None:
            self.path.mkdir(parents=True, exist_ok=True)
        self.embedder = embedder_for(exported, embedder)  # fail fast: a missing embedder stops start-up
        self.pool = WorkerPool(SandboxLimits(), max_workers=2)
        self._served: dict[str, ServedDesign] = {}
        self._lock = threading.Lock()
        self._ns_locks: dict[str, threading.Lock] = {}
        if not learn:
            self._shared: ServedDesign | None = self._make()
        else:
            self._shared = None
            self.served("default")  # fail fast on a design or memory that cannot be restored

    def _make(self, namespace: str | None = None) -> ServedDesign:
        learned = None
        saved = self._saved(namespace)
        if saved is not None and saved.exists():
            from atlas.alma.state.archive import read_learned

            learned = safe_data(read_learned(saved, f"namespace {namespace}"))
        return ServedDesign(
            self.exported,
            embedder=self.embedder,
            llm=self.llm,
            learn=self.learn,
            pool=self.pool,
            learned=learned,
        )

    def _saved(self, namespace: str | None) -> Path | None:
        return None if self.path is None or namespace is None else self.path / f"{namespace}.json"

    def served(self, namespace: str) -> ServedDesign:
        check_namespace(namespace)
        if self._shared is not None:
            return self._shared
        with self._lock:
            if namespace not in self._served:
                if len(self._served) >= self.max_namespaces:  # each holds a memory copy: bounded, said
                    raise InvalidInputError(
                        f"namespace {namespace!r}: this server already serves {self.max_namespaces} namespaces, "
                        "its limit; reuse one, or run another server"
                    )
                self._served[namespace] = self._make(namespace)
            return self._served[namespace]

    def update(self, namespace: str, episode: dict[str, Any]) -> ServedDesign:
        """Run the namespace's update and, with a path, keep its memory on disk. One namespace's
        updates run one at a time, each with its write: two concurrent clients can never write an
        older snapshot over a newer one (an acknowledged update is always on disk)."""
        served = self.served(namespace)
        with self._lock:
            ns_lock = self._ns_locks.setdefault(namespace, threading.Lock())
        with ns_lock:
            served.update(episode)
            saved = self._saved(namespace)
            if saved is not None:
                from atlas.alma.state.run_dir import atomic_write_text

                atomic_write_text(saved, json.dumps(served.snapshot(), separators=(",", ":")) + "\n")
        return served

    def close(self) -> None:
        for s in [*self._served.values(), *([self._shared] if self._shared else [])]:
            s.close()
        self.pool.close()


def create_design_server(hub: DesignHub, *, host: str = "127.0.0.1", port: int = 8765) -> Any:
    """A FastMCP server exposing ``hub`` (tools listed in the module docstring)."""
    from mcp.server.fastmcp import FastMCP

    # The name and instructions the client reads are ours: nothing from the export's files (its
    # name is data, returned by memory_info), only its id, which the manifest schema restricts.
    server = FastMCP(
        f"atlas-design-{hub.exported.manifest['design']['id']}"[:64],
        instructions=(
            "Memory design found by an ATLAS search. Before a task call recall(task); "
            + ("after it call update(episode). " if hub.learn else "")
            + "Use one namespace per project or user."
        ),
        host=host,
        port=port,
        log_level="WARNING",
    )

    @server.tool()
    async def recall(task: dict[str, Any] | str, namespace: str = "default") -> dict[str, Any]:
        """The design's advice for a task: a task view {"goal": str, "observation": {...}, "domain": str}
        (the shape in the export's advice.jsonl) or a goal string."""
        served = hub.served(namespace)
        advice = await asyncio.to_thread(served.recall, task)
        return safe_data({"namespace": namespace, "advice": advice})

    @server.tool()
    async def update(episode: dict[str, Any], namespace: str = "default") -> dict[str, Any]:
        """Learn from a finished episode {"task": <task view>, "steps": [{"action": {"tool", "args"},
        "observation": {...}, "error": str|null}], "success": bool, "score": float, "steps_taken": int}.
        Refused unless the server was started with --learn."""
        served = await asyncio.to_thread(hub.update, namespace, episode)
        return safe_data({"namespace": namespace, "updated": True, "holds": served.info()["holds"]})

    @server.tool()
    async def memory_info(namespace: str = "default") -> dict[str, Any]:
        """The design (name, id, scores), whether it learns, and what its memory holds."""
        return safe_data({"namespace": namespace, **hub.served(namespace).info()})

    return server


def serve_design(
    path: str | Path,
    *,
    transport: str = "stdio",
    host: str = "127.0.0.1",
    port: int = 8765,
    learn: bool = False,
    model: str | None = None,
    embedder: Embedder | None = None,
    state: str | Path | None = None,
) -> None:
    """Load the export, start the hub and run the server until the transport closes (through the
    same request guard as the memory server: ``atlas.mcp_stdio.run_guarded``)."""
    from atlas.mcp_stdio import TRANSPORTS, run_guarded

    if transport not in TRANSPORTS:
        raise InvalidInputError(f"transport: must be one of {', '.join(TRANSPORTS)}, got {transport!r}")
    llm = None
    if model:
        from atlas.infra.llm import make_llm

        llm = make_llm(model)
    hub = DesignHub(load_export(path), embedder=embedder, llm=llm, learn=learn, path=state)
    try:
        run_guarded(create_design_server(hub, host=host, port=port), transport)
    finally:
        hub.close()


__all__ = ["MAX_NAMESPACES", "DesignHub", "create_design_server", "serve_design"]
