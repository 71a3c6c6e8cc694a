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
import time
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from atlas.alma.evaluate.runlog import DEFAULT_THRESHOLDS, SimilarityStats, SimilarityThresholds
from atlas.errors import InvalidInputError, LLMError, ToolRefusal
from atlas.infra.graph import GraphStore
from atlas.infra.vector_index import InMemoryVectorStore
from atlas.protocols.embed import Embedder
from atlas.protocols.llm import LLM

TOOL_NAMES = (
    "store_obs",
    "find_similar",
    "graph_update",
    "graph_neighbors",
    "graph_path",
    "summarize",
    "analyze",
)
WRITE_TOOLS = frozenset({"store_obs", "graph_update"})

SUMMARIZE_SYSTEM = (
    "You condense text for an agent's memory. Follow the instruction exactly and reply with the "
    "result only, no preamble."
)
ANALYZE_SYSTEM = (
    "You analyse an agent's experience for its memory. Follow the instruction and reply with the result only."
)
JSON_INSTRUCTION = (
    "Reply with one JSON value only (an object unless the instruction says otherwise), no prose."
)


@dataclass(frozen=True)
class ToolSettings:
    """Caps on what one tool call, one design call (``update``/``recall``) and one evaluation may
    ask of the host. A tool call past a cap is refused with a ``ToolError`` naming the cap; the
    design goes on (and is scored) without that result."""

    max_text_chars: int = 20_000  # one text/query argument
    max_metadata_bytes: int = 4_000
    max_k: int = 50
    max_edges: int = 2_000
    max_node_chars: int = 200
    llm_max_tokens: int = 512  # completion tokens of one summarize/analyze
    max_llm_input_chars: int = 8_000  # text + instruction of one summarize/analyze
    max_llm_calls_per_call: int = 5
    max_llm_calls: int = 60  # per evaluation (collection + deployment)
    max_llm_tokens: int = 60_000  # per evaluation, prompt + completion
    max_llm_cost_usd: float = 0.25  # per evaluation, where the provider reports a cost
    max_tool_chars_per_call: int = 200_000  # argument characters the host processes in one design call
    max_tool_chars: int = 4_000_000  # ... in one evaluation
    max_items: int = 5_000  # vectors stored in one evaluation


@dataclass
class ToolUsage:
    """What a design's tool calls cost the host (one design call, or a whole evaluation)."""

    tool_calls: int = 0
    chars: int = 0
    items: int = 0
    llm_calls: int = 0
    llm_tokens: int = 0
    llm_cost_usd: float = 0.0
    llm_s: float = 0.0
    refused: int = 0

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["llm_cost_usd"], d["llm_s"] = round(self.llm_cost_usd, 6), round(self.llm_s, 3)
        return d


def chars_refusal(name: str, u: ToolUsage, s: ToolSettings, chars: int) -> str | None:
    """Why a tool call passing ``chars`` characters is over the evaluation's budget (None: it is not)."""
    if u.chars + chars > s.max_tool_chars:
        return (
            f"{name} refused: this evaluation's tool calls passed {s.max_tool_chars} "
            "characters of arguments (budget per evaluation)"
        )
    return None


def llm_refusal(name: str, u: ToolUsage, s: ToolSettings) -> str | None:
    """Why one more summarize/analyze call is over the evaluation's model budgets (None: it is not)."""
    if u.llm_calls >= s.max_llm_calls:
        return (
            f"{name} refused: the budget of {s.max_llm_calls} summarize/analyze calls per evaluation is spent"
        )
    if u.llm_tokens >= s.max_llm_tokens:
        return f"{name} refused: the budget of {s.max_llm_tokens} model tokens per evaluation is spent"
    if u.llm_cost_usd >= s.max_llm_cost_usd:
        return f"{name} refused: the budget of ${s.max_llm_cost_usd} of model cost per evaluation is spent"
    return None


class SharedBudget(Protocol):
    """An evaluation's budgets kept outside this process, when several processes play its episodes
    (a cluster's workers): ``charge`` counts one tool call or says why it is refused, ``spend`` adds
    what a model call cost."""

    def charge(self, name: str, chars: int, llm: bool) -> str | None: ...
    def spend(self, tokens: int, cost_usd: float) -> None: ...


@dataclass
class ToolResult:
    value: Any
    similarity: SimilarityStats | None = None
    llm_s: float = 0.0  # time spent waiting on the model (not charged to the design's timeout)


LLM_TOOLS = frozenset({"summarize", "analyze"})


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

    def __init__(
        self,
        embedder: Embedder,
        llm: LLM | None = None,
        *,
        thresholds: SimilarityThresholds = DEFAULT_THRESHOLDS,
        settings: ToolSettings | None = None,
    ) -> None:
        self.embedder = embedder
        self.llm = llm
        self.thresholds = thresholds
        self.settings = settings or ToolSettings()
        self.graph = GraphStore()
        self.collections: dict[str, InMemoryVectorStore] = {}
        self.frozen = False
        self.usage = ToolUsage()  # the whole evaluation
        self.shared: SharedBudget | None = None  # the evaluation's budgets across processes, if shared
        self._lock = threading.Lock()  # guards the collections dict, the id counter and usage only
        self._ids = itertools.count(1)

    # -- dispatch ------------------------------------------------------------------------------

    def call(self, name: str, args: dict[str, Any], per_call: ToolUsage | None = None) -> ToolResult:
        """Run tool ``name``; ToolRefusal (with a message for the design) when it cannot. ``per_call``
        counts this design call's tool use against the per-call budgets (one per ``update``/``recall``).
        Any failure inside a tool is the design's error, never the host's: it becomes a ToolRefusal."""
        if name not in TOOL_NAMES:
            raise ToolRefusal(f"unknown tool {name!r} (tools: {', '.join(TOOL_NAMES)})")
        if self.frozen and name in WRITE_TOOLS:
            raise ToolRefusal(
                f"{name} refused: memory is frozen for deployment (write tools are disabled; "
                "recall may only read)"
            )
        try:
            self._charge(name, args, per_call if per_call is not None else ToolUsage())
            return getattr(self, "_" + name)(args)
        except ToolRefusal:
            with self._lock:
                self.usage.refused += 1
            raise
        except InvalidInputError as exc:
            raise ToolRefusal(f"{name}: {exc}") from exc
        except LLMError as exc:
            raise ToolRefusal(f"{name} failed: the model call failed ({type(exc).__name__}: {exc})") from exc
        except Exception as exc:  # an embedder or store choking on the design's input: the design's error
            raise ToolRefusal(f"{name} failed: {type(exc).__name__}: {str(exc)[:300]}") from exc

    def _charge(self, name: str, args: dict[str, Any], per_call: ToolUsage) -> None:
        """Count one tool call against the per-call and per-evaluation budgets, or refuse it."""
        s = self.settings
        chars = len(json.dumps(args, ensure_ascii=False, default=str))
        llm = name in LLM_TOOLS
        with self._lock:
            u = self.usage
            if per_call.chars + chars > s.max_tool_chars_per_call:
                raise ToolRefusal(
                    f"{name} refused: the tool calls of this update/recall call "
                    f"would pass {s.max_tool_chars_per_call} characters of arguments (budget per call)"
                )
            if why := chars_refusal(name, u, s, chars):
                raise ToolRefusal(why)
            if llm:
                if per_call.llm_calls >= s.max_llm_calls_per_call:
                    raise ToolRefusal(
                        f"{name} refused: at most {s.max_llm_calls_per_call} summarize/analyze calls "
                        "per update/recall call"
                    )
                if why := llm_refusal(name, u, s):
                    raise ToolRefusal(why)
            if self.shared is not None and (why := self.shared.charge(name, chars, llm)):
                raise ToolRefusal(why)
            for usage in (u, per_call):
                usage.tool_calls += 1
                usage.chars += chars
                usage.llm_calls += int(llm)

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
        with self._lock:
            if self.usage.items >= s.max_items:
                raise ToolRefusal(
                    f"store_obs refused: the budget of {s.max_items} stored items per evaluation "
                    "is spent (store less, or summarize before storing)"
                )
            self.usage.items += 1
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
            stores = (
                list(self.collections.values())
                if collection is None
                else ([self.collections[collection]] if collection in self.collections else [])
            )
        rows: list[dict[str, Any]] = []
        if stores and any(len(st) for st in stores):
            vector = self._embed(query)
            for st in stores:
                found = st.query_sync(vector, k)
                rows += [
                    {"score": round(float(sc), 4), "text": doc, "metadata": meta}
                    for sc, doc, meta in zip(found.scores, found.documents, found.metadatas, strict=True)
                ]
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

    def _complete(self, tool: str, system: str, user: str) -> tuple[str, float]:
        """The model's reply and the seconds spent waiting for it (counted in ``usage``)."""
        if self.llm is None:
            raise ToolRefusal(f"{tool} is unavailable: no LLM is configured for this run")
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        t0 = time.perf_counter()
        completion = self.llm.complete(messages, max_tokens=self.settings.llm_max_tokens, temperature=0.0)
        waited = time.perf_counter() - t0
        used = getattr(completion, "usage", None)
        with self._lock:
            self.usage.llm_s += waited
            if used is not None:
                self.usage.llm_tokens += int(getattr(used, "total_tokens", 0) or 0)
                self.usage.llm_cost_usd += float(getattr(used, "cost_usd", 0.0) or 0.0)
        if used is not None and self.shared is not None:
            self.shared.spend(
                int(getattr(used, "total_tokens", 0) or 0), float(getattr(used, "cost_usd", 0.0) or 0.0)
            )
        return completion.text or "", waited

    def _llm_input(self, tool: str, args: dict[str, Any], default: str) -> tuple[str, str]:
        text = _text(args, "text", limit=self.settings.max_text_chars)
        instruction = _text(args, "instruction", limit=2_000, required=False) or default
        limit = self.settings.max_llm_input_chars
        if len(text) + len(instruction) > limit:
            raise ToolRefusal(
                f"{tool} refused: text and instruction are {len(text) + len(instruction)} characters, "
                f"over the limit of {limit} per model call (shorten or split the text)"
            )
        return text, instruction

    def _summarize(self, args: dict[str, Any]) -> ToolResult:
        text, instruction = self._llm_input("summarize", args, "Summarize concisely.")
        reply, waited = self._complete(
            "summarize", SUMMARIZE_SYSTEM, f"Instruction: {instruction}\n\nText:\n{text}"
        )
        return ToolResult(reply.strip(), llm_s=waited)

    def _analyze(self, args: dict[str, Any]) -> ToolResult:
        from atlas.infra.llm import parse_json_reply

        text, instruction = self._llm_input("analyze", args, "Analyse the text.")
        fmt = args.get("format", "text") or "text"
        if fmt not in ("text", "json"):
            raise ToolRefusal(f"format must be 'text' or 'json', got {fmt!r}")
        user = f"Instruction: {instruction}\n\nText:\n{text}"
        if fmt == "json":
            user += "\n\n" + JSON_INSTRUCTION
        reply, waited = self._complete("analyze", ANALYZE_SYSTEM, user)
        if fmt == "text":
            return ToolResult(reply.strip(), llm_s=waited)
        try:
            return ToolResult(parse_json_reply(reply), llm_s=waited)
        except LLMError as exc:
            raise ToolRefusal(
                f"analyze: the model's reply was not valid JSON ({exc}); reply began {reply[:120]!r}"
            ) from exc

    # -- state ---------------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            collections = dict(self.collections)
        return {
            "vectors": {name: st.snapshot() for name, st in collections.items()},
            "graph": self.graph.snapshot(),
        }

    @classmethod
    def from_snapshot(
        cls, data: dict[str, Any], embedder: Embedder, llm: LLM | None = None, **kwargs: Any
    ) -> DesignTools:
        tools = cls(embedder, llm, **kwargs)
        if data.get("graph"):
            tools.graph = GraphStore.from_snapshot(data["graph"])
        for name, snap in (data.get("vectors") or {}).items():
            tools.collections[name] = InMemoryVectorStore.from_snapshot(snap)
        count = sum(len(st) for st in tools.collections.values())
        tools._ids = itertools.count(count + 1)
        return tools


__all__ = [
    "LLM_TOOLS",
    "TOOL_NAMES",
    "WRITE_TOOLS",
    "DesignTools",
    "SharedBudget",
    "ToolRefusal",
    "ToolResult",
    "ToolSettings",
    "ToolUsage",
]
