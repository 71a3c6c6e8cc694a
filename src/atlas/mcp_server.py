"""MCP server over the memory library: guidelines (learned tips) and experience memory.

Tools — every one takes a ``namespace``; each namespace has its own tables and collections, so one
never sees another's memory:

- ``get_guidelines(task, namespace, k, mode)``   tips for a task (cosine or LLM-selected)
- ``save_trajectory(trajectory, namespace, success)``  learn tips from a trajectory or OpenAI messages
- ``search_experiences(task, namespace, k)`` / ``store_experience(trajectory, namespace)``
- ``list_guidelines(namespace, category, limit)`` / ``delete_guideline(guideline_id, namespace)``

With ``--design DIR`` it serves an exported memory design instead (``atlas.mcp_design``).

Over streamable HTTP the server also answers the coding-agent hooks (``/hooks/*``, the Lite tier:
``atlas.mcp_hooks``).

Run: ``atlas mcp`` (stdio) or ``atlas mcp --transport streamable-http --host 127.0.0.1 --port 8765``;
also ``python -m atlas.mcp_server ...`` with the same options. ``--model`` takes any model name
``make_llm`` knows, plug-in providers included (``atlas.infra.llm.providers``).
"""

from __future__ import annotations

import argparse
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from pydantic import StrictBool

from atlas.core.types import Task
from atlas.errors import InvalidInputError
from atlas.mcp_stdio import TRANSPORTS
from atlas.memory.guidelines.bank import GuidelineBank
from atlas.memory.guidelines.config import GuidelineConfig, check_namespace
from atlas.memory.guidelines.lite_learn import Learner, learn_turn
from atlas.memory.guidelines.messages import parse_trajectory
from atlas.memory.guidelines.render import format_guidelines
from atlas.memory.guidelines.store import table_suffix
from atlas.protocols.embed import Embedder

if TYPE_CHECKING:
    from atlas.infra.llm import LLMClient

MAX_QUERY_CHARS = 20_000  # a task text to search with
MAX_K = 100  # results per search / list


def _check_query(task: Any, k: Any, name: str = "k") -> None:
    """Refuse a search too big to be a real request (before anything is embedded)."""
    if isinstance(task, str) and len(task) > MAX_QUERY_CHARS:
        raise InvalidInputError(f"task: {len(task)} characters, over the limit of {MAX_QUERY_CHARS}")
    if isinstance(k, int) and not isinstance(k, bool) and k > MAX_K:
        raise InvalidInputError(f"{name}: at most {MAX_K}, got {k}")


def _guideline_dict(g: Any) -> dict[str, Any]:
    d = g.model_dump(mode="json")
    d.pop("metadata", None)
    return d


class MemoryHub:
    """One guideline bank and one experience memory per namespace, over a shared path.

    The LLM is built lazily by ``llm_factory`` on the first call that needs one (saving, LLM
    retrieval), so a server that only serves guidelines never loads a model."""

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        llm: LLMClient | None = None,
        llm_factory: Callable[[], Any] | None = None,
        embedder: Embedder | None = None,
        config: GuidelineConfig | None = None,
        model: str | None = None,
    ) -> None:
        from atlas.infra.records import RecordStore

        self.model = model  # the model given explicitly (--model), if any: the Lite learner uses it

        self.path = Path(path) if path is not None else None
        if self.path is not None:
            self.path.mkdir(parents=True, exist_ok=True)
        self.records = RecordStore(self.path / "guidelines.sqlite" if self.path else None)
        self._llm = llm
        self._llm_factory = llm_factory
        if embedder is None:
            from atlas.infra.embeddings import default_embedder

            embedder = default_embedder()
        self.embedder = embedder
        self.config = config or GuidelineConfig()
        self._banks: dict[str, GuidelineBank] = {}
        self._experiences: dict[str, Any] = {}
        self._lock = threading.Lock()

    def llm(self) -> Any:
        with self._lock:
            if self._llm is None and self._llm_factory is not None:
                self._llm = self._llm_factory()
            return self._llm

    def bank(self, namespace: str, *, need_llm: bool = False) -> GuidelineBank:
        check_namespace(namespace)
        llm = self.llm() if need_llm else self._llm
        with self._lock:
            bank = self._banks.get(namespace)
            if bank is not None and llm is not None and bank.llm is None:
                # same store, now with the LLM-backed stages
                bank = GuidelineBank(store=bank.store, llm=llm, embedder=self.embedder, config=self.config)
                self._banks[namespace] = bank
            if bank is None:
                bank = GuidelineBank.open(
                    self.path,
                    namespace=namespace,
                    records=self.records,
                    llm=llm,
                    embedder=self.embedder,
                    config=self.config,
                )
                self._banks[namespace] = bank
            return bank

    def experiences(self, namespace: str) -> Any:
        check_namespace(namespace)
        with self._lock:
            mem = self._experiences.get(namespace)
            if mem is None:
                from atlas.infra.vector_index import ChromaVectorStore, InMemoryVectorStore
                from atlas.memory.experience import ChromaExperienceMemory

                sfx = table_suffix(namespace)
                vectors = (
                    ChromaVectorStore.persistent(self.path / "chroma", f"atlas-experiences-{sfx}")
                    if self.path
                    else InMemoryVectorStore(f"experiences-{sfx}")
                )
                mem = ChromaExperienceMemory(
                    self.embedder, vectors, collection_name=f"exp_{sfx}", records=self.records
                )
                self._experiences[namespace] = mem
            return mem


def create_server(hub: MemoryHub, *, host: str = "127.0.0.1", port: int = 8765, hooks: bool = False) -> Any:
    """A FastMCP server exposing ``hub`` (tools listed in the module docstring); with ``hooks``, also
    the coding-agent hook routes of ``atlas.mcp_hooks`` (served on the streamable-HTTP transport)."""
    from mcp.server.fastmcp import FastMCP

    server = FastMCP(
        "atlas-memory",
        instructions=(
            "Procedural memory for agents. Before a task call get_guidelines(task); after it call "
            "save_trajectory(trace). Use one namespace per project or user."
        ),
        host=host,
        port=port,
        log_level="WARNING",
    )
    chosen: list[Learner] = []

    def learner_of() -> Learner:
        """The hooks' learner for this hub, chosen once (``atlas.mcp_hooks.default_learner``)."""
        if not chosen:
            from atlas.mcp_hooks import default_learner

            chosen.append(default_learner(hub))
        return chosen[0]

    @server.tool()
    async def get_guidelines(
        task: str,
        namespace: str = "default",
        k: int = 5,
        mode: str | None = None,
        category: str | None = None,
        task_category: str | None = None,
    ) -> dict[str, Any]:
        """Guidelines (learned tips) relevant to a task, best first. mode: 'cosine' (default, no LLM
        call) or 'llm' (one LLM call selects among candidates). Optional metadata filters: category
        (strategy, recovery, optimization) and task_category."""
        _check_query(task, k)
        filters = {n: v for n, v in (("category", category), ("task_category", task_category)) if v}
        bank = hub.bank(namespace, need_llm=(mode == "llm"))
        found = await bank.aget_guidelines(task, k=k, mode=mode, filters=filters or None)
        return {
            "namespace": namespace,
            "guidelines": [_guideline_dict(g) for g in found],
            "text": format_guidelines(found),
        }

    @server.tool()
    async def save_trajectory(
        trajectory: dict[str, Any] | list[dict[str, Any]] | str,
        namespace: str = "default",
        success: StrictBool | None = None,
    ) -> dict[str, Any]:
        """Learn tips from a finished task: an atlas Trajectory object, an OpenAI-style message list
        with tool calls, or {"messages": [...], "task": ..., "success": ...}. Returns the ids of the
        tips added or updated, or status 'not_processed' with the reason (retry later). Learned by
        the same learner as the coding-agent hooks (``lite_learn.choose_learner``): the configured
        model, else the agent's headless CLI, else the no-LLM extractor."""
        learner = learner_of()
        if learner.kind == "model":
            bank = hub.bank(namespace, need_llm=True)
            result = await bank.asave(trajectory, success=success)
            return {"namespace": namespace, "learner": "model", **result.to_dict()}
        traj = parse_trajectory(trajectory, success=success)
        learned = await learn_turn(learner, hub.bank(namespace, need_llm=False), traj, None)
        status = {"learned": "processed", "duplicate": "duplicate"}.get(learned.status, "not_processed")
        return {
            "namespace": namespace,
            "learner": learned.learner or learner.kind,
            "trajectory_id": traj.id,
            "status": status,
            "guideline_ids": learned.tip_ids,
            "reason": learned.reason,
        }

    @server.tool()
    async def search_experiences(task: str, namespace: str = "default", k: int = 4) -> dict[str, Any]:
        """Past experiences (episodic memory) similar to a task, successful ones first."""
        if not task.strip():
            raise InvalidInputError("task: must be a non-empty string")
        _check_query(task, k)
        mem = hub.experiences(namespace)
        found = await mem.asearch(Task(description=task), k=k)
        return {
            "namespace": namespace,
            "experiences": [
                {
                    "id": e.id,
                    "task": e.task.description,
                    "success": e.success,
                    "score": e.score,
                    "similarity": e.similarity,
                    "content": e.content,
                }
                for e in found
            ],
        }

    @server.tool()
    async def store_experience(
        trajectory: dict[str, Any] | list[dict[str, Any]] | str,
        namespace: str = "default",
        success: StrictBool | None = None,
    ) -> dict[str, Any]:
        """Store a finished task in episodic memory (no LLM needed); same input forms as save_trajectory."""
        traj = parse_trajectory(trajectory, success=success)
        mem = hub.experiences(namespace)
        exp_id = await mem.astore(traj)
        return {"namespace": namespace, "experience_id": exp_id, "trajectory_id": traj.id}

    @server.tool()
    async def list_guidelines(
        namespace: str = "default", category: str | None = None, limit: int = 100
    ) -> dict[str, Any]:
        """Stored guidelines, strongest first (optionally one category: strategy, recovery, optimization)."""
        if category is not None and category not in ("strategy", "recovery", "optimization"):
            raise InvalidInputError("category: must be strategy, recovery or optimization")
        if isinstance(limit, int) and limit > 10 * MAX_K:
            raise InvalidInputError(f"limit: at most {10 * MAX_K}, got {limit}")
        items = hub.bank(namespace).list_guidelines(category=category, limit=limit)
        return {
            "namespace": namespace,
            "count": len(items),
            "guidelines": [_guideline_dict(g) for g in items],
        }

    @server.tool()
    async def delete_guideline(guideline_id: str, namespace: str = "default") -> dict[str, Any]:
        """Delete one guideline by id (logged as a DELETE decision)."""
        deleted = await hub.bank(namespace).adelete_guideline(guideline_id)
        return {"namespace": namespace, "guideline_id": guideline_id, "deleted": deleted}

    if hooks:
        from atlas.mcp_hooks import add_hook_routes

        add_hook_routes(server, hub)
    return server


def serve(
    *,
    transport: str = "stdio",
    host: str = "127.0.0.1",
    port: int = 8765,
    path: str | Path | None = None,
    model: str | None = None,
    config: GuidelineConfig | None = None,
) -> None:
    """Build the hub and run the server until the transport closes."""
    if transport not in TRANSPORTS:
        raise InvalidInputError(f"transport: must be one of {TRANSPORTS}, got {transport!r}")
    from atlas.infra.llm import make_llm
    from atlas.mcp_stdio import run_guarded

    hub = MemoryHub(path, llm_factory=lambda: make_llm(model), config=config, model=model)
    server = create_server(hub, host=host, port=port, hooks=transport == "streamable-http")
    run_guarded(server, transport)  # every request gets a reply, even a malformed one


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m atlas.mcp_server", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--transport", choices=TRANSPORTS, default="stdio", help="stdio (default) or streamable-http"
    )
    parser.add_argument(
        "--host", default="127.0.0.1", help="interface for streamable-http (default 127.0.0.1)"
    )
    parser.add_argument("--port", type=int, default=8765, help="port for streamable-http (default 8765)")
    parser.add_argument("--path", default=None, help="memory directory (default: in memory, lost on exit)")
    parser.add_argument(
        "--model", default=None, help="LLM for tip extraction (default: the standard model resolution)"
    )
    parser.add_argument(
        "--design", default=None, help="serve this exported design (atlas archive export) instead"
    )
    parser.add_argument(
        "--learn", action="store_true", help="with --design: allow update (per-namespace copies)"
    )
    args = parser.parse_args(argv)
    if args.design:
        from atlas.mcp_design import serve_design

        serve_design(
            args.design,
            transport=args.transport,
            host=args.host,
            port=args.port,
            learn=args.learn,
            model=args.model,
            state=args.path,
        )
        return
    serve(transport=args.transport, host=args.host, port=args.port, path=args.path, model=args.model)


if __name__ == "__main__":
    main()
