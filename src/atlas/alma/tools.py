"""Host-side design tools: the vector store, graph and LLM helpers a design calls through ``tools``.

One ``DesignTools`` per design evaluation. Arguments arrive from the sandbox as untrusted JSON and
are validated here; a bad argument, a refused write or a failed LLM call raises ``ToolRefusal``,
which the design sees as a ``ToolError`` exception with the same message (and the runtime log
records). Embedding happens *outside* any lock (seed 002: many deployment recalls embed in
parallel); the stores themselves are pure and guard only their short data operations.

After ``freeze()`` (deployment) the write tools ``store_obs`` and ``graph_update`` are refused.
``snapshot()``/``from_snapshot()`` round-trip the stores as JSON.
"""

from __future__ import annotations

import itertools
import json
import threading
from dataclasses import dataclass
from typing import Any

from atlas.alma.runlog import DEFAULT_THRESHOLDS, SimilarityStats, SimilarityThresholds
from atlas.alma.sandbox.pool import ToolRefusal
from atlas.errors import InvalidInputError, LLMError
from atlas.infra.graph import GraphStore
from atlas.infra.vector_index import InMemoryVectorStore
from atlas.protocols.embed import Embedder

TOOL_NAMES = ("store_obs", "find_similar", "graph_update", "graph_neighbors", "graph_path", "summarize",
              "analyze")
WRITE_TOOLS = frozenset({"store_obs", "graph_update"})

SUMMARIZE_SYSTEM = (
    "You condense text for an agent's memory. Follow the instruction exactly and reply with the "
    "result only, no preamble."
)
ANALYZE_SYSTEM = (
    "You analyse an agent's experience for its memory. Follow the instruction and reply with the "
    "result only."
)
JSON_INSTRUCTION = "Reply with one JSON value only (an object unless the instruction says otherwise), no prose."


@dataclass(frozen=True)
class ToolSettings:
    """Caps on what a single tool call may ask for."""

    max_text_chars: int = 20_000
    max_metadata_bytes: int = 4_000
    max_k: int = 50
    max_edges: int = 2_000
    max_node_chars: int = 200
    llm_max_tokens: int = 512


@dataclass
class ToolResult:
    value: Any
    similarity: SimilarityStats | None = None


def _text(args: dict[str, Any], key: str, *, limit: int, required: bool = True, default: str = "") -> str:
    if required and key not in args:
        raise ToolRefusal(f"missing argument {key!r}")
    value = args.get(key, default)
    if value is None and not required:
        return default
    if not isinstance(value, str):
        raise ToolRefusal(f"{key} must be a string, got {type(value).__name__}")
    if required and not value.strip():
        raise ToolRefusal(f"{key} must not be empty")
    if len(value) > limit:
        raise ToolRefusal(f"{key} is {len(value)} characters, over the limit of {limit}")
    return value


class DesignTools:
    """The state behind one design's tools: named vector collections, one graph, the LLM."""

    def __init__(self, embedder: Embedder, llm: Any = None, *,
                 thresholds: SimilarityThresholds = DEFAULT_THRESHOLDS,
                 settings: ToolSettings | None = None) -> None:
        self.embedder = embedder
        self.llm = llm
        self.thresholds = thresholds
        self.settings = settings or ToolSettings()
        self.graph = GraphStore()
        self.collections: dict[str, InMemoryVectorStore] = {}
        self.frozen = False
        self._lock = threading.Lock()  # guards the collections dict and the id counter only
        self._ids = itertools.count(1)

    # -- dispatch ------------------------------------------------------------------------------

    def call(self, name: str, args: dict[str, Any]) -> ToolResult:
        """Run tool ``name``; ToolRefusal (with a message for the design) when it cannot."""
        if name not in TOOL_NAMES:
            raise ToolRefusal(f"unknown tool {name!r} (tools: {', '.join(TOOL_NAMES)})")
        if self.frozen and name in WRITE_TOOLS:
            raise ToolRefusal(f"{name} refused: memory is frozen for deployment (write tools are disabled; "
                              "recall may only read)")
        try:
            return getattr(self, "_" + name)(args)
        except InvalidInputError as exc:
            raise ToolRefusal(f"{name}: {exc}") from exc
        except LLMError as exc:
            raise ToolRefusal(f"{name} failed: the model call failed ({type(exc).__name__}: {exc})") from exc

    def freeze(self) -> None:
        self.frozen = True

    # -- vector store --------------------------------------------------------------------------

    def _embed(self, text: str) -> list[float]:
        return self.embedder.embed([text])[0].tolist()  # outside any lock, on purpose

    def _collection(self, name: str, create: bool) -> InMemoryVectorStore | None:
        with self._lock:
            store = self.collections.get(name)
            if store is None and create:
                store = self.collections[name] = InMemoryVectorStore(name)
            return store

    def _store_obs(self, args: dict[str, Any]) -> ToolResult:
        s = self.settings
        text = _text(args, "text", limit=s.max_text_chars)
        collection = _text(args, "collection", limit=100, required=False, default="default") or "default"
        metadata = args.get("metadata") or {}
        if not isinstance(metadata, dict):
            raise ToolRefusal(f"metadata must be a dict, got {type(metadata).__name__}")
        size = len(json.dumps(metadata))
        if size > s.max_metadata_bytes:
            raise ToolRefusal(f"metadata is {size} bytes of JSON, over the limit of {s.max_metadata_bytes}")
        vector = self._embed(text)
        with self._lock:
            obs_id = f"obs-{next(self._ids)}"
        store = self._collection(collection, create=True)
        assert store is not None
        store.add_sync([obs_id], [vector], [metadata], [text])
        return ToolResult(f"stored:{obs_id}")

    def _find_similar(self, args: dict[str, Any]) -> ToolResult:
        s = self.settings
        query = _text(args, "query", limit=s.max_text_chars)
        k = args.get("k", 3)
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= s.max_k:
            raise ToolRefusal(f"k must be an integer from 1 to {s.max_k}, got {k!r}")
        collection = args.get("collection")
        if collection is not None and not isinstance(collection, str):
            raise ToolRefusal(f"collection must be a string or None, got {type(collection).__name__}")
        with self._lock:
            stores = list(self.collections.values()) if collection is None else (
                [self.collections[collection]] if collection in self.collections else [])
        rows: list[dict[str, Any]] = []
        if stores and any(len(st) for st in stores):
            vector = self._embed(query)
            for st in stores:
                found = st.query_sync(vector, k)
                rows += [{"score": round(float(sc), 4), "text": doc, "metadata": meta}
                         for sc, doc, meta in zip(found.scores, found.documents, found.metadatas, strict=True)]
            rows.sort(key=lambda r: -r["score"])
            rows = rows[:k]
        stats = SimilarityStats.of([r["score"] for r in rows], k, query, self.thresholds)
        return ToolResult(rows, stats)

    # -- graph ---------------------------------------------------------------------------------

    def _node(self, args: dict[str, Any], key: str) -> str:
        return _text(args, key, limit=self.settings.max_node_chars)

    def _graph_update(self, args: dict[str, Any]) -> ToolResult:
        edges = args.get("edges")
        if not isinstance(edges, list):
            raise ToolRefusal(f"edges must be a list of [a, b] pairs, got {type(edges).__name__}")
        if len(edges) > self.settings.max_edges:
            raise ToolRefusal(f"{len(edges)} edges in one call, over the limit of {self.settings.max_edges}")
        for e in edges:
            if not (isinstance(e, list) and len(e) == 2 and all(isinstance(x, str) and x for x in e)):
                raise ToolRefusal(f"an edge is a pair of non-empty node names, got {e!r}")
            if any(len(x) > self.settings.max_node_chars for x in e):
                raise ToolRefusal(f"node names are at most {self.settings.max_node_chars} characters")
        added = self.graph.add_edges([tuple(e) for e in edges if e[0] != e[1]])
        return ToolResult(f"ok: {added} new edges")

    def _graph_neighbors(self, args: dict[str, Any]) -> ToolResult:
        return ToolResult(self.graph.neighbors(self._node(args, "node")))

    def _graph_path(self, args: dict[str, Any]) -> ToolResult:
        return ToolResult(self.graph.shortest_path(self._node(args, "src"), self._node(args, "dst")))

    # -- LLM -----------------------------------------------------------------------------------

    def _complete(self, tool: str, system: str, user: str) -> str:
        if self.llm is None:
            raise ToolRefusal(f"{tool} is unavailable: no LLM is configured for this run")
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        completion = self.llm.complete(messages, max_tokens=self.settings.llm_max_tokens, temperature=0.0)
        return completion.text or ""

    def _summarize(self, args: dict[str, Any]) -> ToolResult:
        text = _text(args, "text", limit=self.settings.max_text_chars)
        instruction = _text(args, "instruction", limit=2_000, required=False) or "Summarize concisely."
        reply = self._complete("summarize", SUMMARIZE_SYSTEM, f"Instruction: {instruction}\n\nText:\n{text}")
        return ToolResult(reply.strip())

    def _analyze(self, args: dict[str, Any]) -> ToolResult:
        from atlas.infra.llm import parse_json_reply

        text = _text(args, "text", limit=self.settings.max_text_chars)
        instruction = _text(args, "instruction", limit=2_000, required=False) or "Analyse the text."
        fmt = args.get("format", "text") or "text"
        if fmt not in ("text", "json"):
            raise ToolRefusal(f"format must be 'text' or 'json', got {fmt!r}")
        user = f"Instruction: {instruction}\n\nText:\n{text}"
        if fmt == "json":
            user += "\n\n" + JSON_INSTRUCTION
        reply = self._complete("analyze", ANALYZE_SYSTEM, user)
        if fmt == "text":
            return ToolResult(reply.strip())
        try:
            return ToolResult(parse_json_reply(reply))
        except LLMError as exc:
            raise ToolRefusal(f"analyze: the model's reply was not valid JSON ({exc}); reply began "
                              f"{reply[:120]!r}") from exc

    # -- state ---------------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            collections = dict(self.collections)
        return {
            "vectors": {name: st.snapshot() for name, st in collections.items()},
            "graph": self.graph.snapshot(),
        }

    @classmethod
    def from_snapshot(cls, data: dict[str, Any], embedder: Embedder, llm: Any = None, **kwargs: Any) -> DesignTools:
        tools = cls(embedder, llm, **kwargs)
        if data.get("graph"):
            tools.graph = GraphStore.from_snapshot(data["graph"])
        for name, snap in (data.get("vectors") or {}).items():
            tools.collections[name] = InMemoryVectorStore.from_snapshot(snap)
        count = sum(len(st) for st in tools.collections.values())
        tools._ids = itertools.count(count + 1)
        return tools


__all__ = ["TOOL_NAMES", "WRITE_TOOLS", "DesignTools", "ToolRefusal", "ToolResult", "ToolSettings"]
