"""Concept library: reusable code concepts (primitives, learned abstractions), searchable by meaning.

``ChromaConceptLibrary`` embeds "name: description" of each concept; primitives for a domain are loaded
at start (idempotently: their ids are uuid5 of domain + name). New concepts come from a
``CompressionStrategy`` over successful trajectories — ``StitchCompressionStrategy`` is the symbolic
compressor of :mod:`atlas.memory.stitch`, optionally documented by ``LLMAutoDocumenter`` (LILO) — or
from a ``CompositionStrategy`` that combines existing concepts (``LLMCompositionStrategy``).
"""

from __future__ import annotations

import ast
import asyncio
import hashlib
import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, field_validator

from atlas.core.types import CodeConcept, Task, Trajectory
from atlas.errors import ConfigError, InvalidInputError, StoreError
from atlas.infra.aio import run_sync
from atlas.memory.common import ask_json, validate_k, validate_trajectory
from atlas.memory.stitch import StitchCompressor, code_snippets, required_globals
from atlas.memory.storage import IndexedTable
from atlas.protocols.embed import Embedder
from atlas.protocols.memory import (
    CompositionStrategy,
    CompressionStrategy,
    ConceptDocumenter,
    PrimitiveLoader,
)
from atlas.protocols.store import VectorStore

if TYPE_CHECKING:
    import numpy as np

    from atlas.infra.llm.client import LLMClient
    from atlas.infra.records import RecordStore

log = logging.getLogger(__name__)


def concept_text(concept: CodeConcept) -> str:
    """What gets embedded for a concept: its name and description."""
    return f"{concept.name}: {concept.description}"


def code_hash(code: str) -> str:
    """Hash of the code's AST; formatting, comments and the name of the last top-level function do
    not matter (a documented abstraction keeps the hash of the undocumented one)."""
    try:
        tree = ast.parse(code)
        defs = [n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
        if defs:
            old = defs[-1].name
            for node in ast.walk(tree):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == old:
                    node.name = "_"
                elif isinstance(node, ast.Name) and node.id == old:
                    node.id = "_"
        canonical = ast.dump(tree)
    except SyntaxError:
        canonical = code.strip()
    return hashlib.sha256(canonical.encode()).hexdigest()[:32]


def _check_code(code: str) -> str:
    try:
        compile(code, "<reply>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        raise ValueError(f"code does not parse: {exc}") from exc
    return code


def join_code(parts: list[str]) -> str:
    """Concatenate code snippets into one module; ``from __future__`` imports move to the top."""
    future: list[str] = []
    bodies: list[str] = []
    for part in parts:
        keep = []
        for line in part.strip().splitlines():
            if line.startswith("from __future__ import"):
                if line not in future:
                    future.append(line)
            else:
                keep.append(line)
        bodies.append("\n".join(keep).strip())
    head = "\n".join(future)
    return (head + "\n\n" if head else "") + "\n\n\n".join(b for b in bodies if b) + "\n"


def _rename_function(code: str, old: str, new: str) -> str:
    """Rename the top-level ``def old`` (and recursive calls to it) in ``code``."""
    tree = ast.parse(code)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == old:
            node.name = new
        elif isinstance(node, ast.Name) and node.id == old:
            node.id = new
    return ast.unparse(tree) + "\n"


# --- composition ------------------------------------------------------------------------------------------


class ComposedConcept(BaseModel):
    meaningful: bool = True
    name: str = ""
    description: str = ""
    code: str = ""
    signature: str | None = None
    usage_guidance: str | None = None

    @field_validator("code")
    @classmethod
    def _parses(cls, v: str) -> str:
        return _check_code(v) if v.strip() else v


class LLMCompositionStrategy:
    """An LLM decides whether and how concepts combine into a new one (LILO-style composition).

    The reply's code must parse (a reply that does not is re-asked with the error); the new concept
    includes the code of its parts so it runs on its own.
    """

    SYSTEM = (
        "You combine existing code concepts into a new, reusable Python function when that is meaningful. "
        "Write only the new function; it may call the given functions by name. Reply with JSON only: "
        '{"meaningful": true|false, "name": "snake_case_name", "description": "one sentence", '
        '"code": "def ...", "signature": "name(args)", "usage_guidance": "when to use it"}'
    )

    def __init__(self, llm_client: LLMClient, *, retries: int = 2) -> None:
        self.llm = llm_client
        self.retries = retries

    async def compose(self, concepts: list[CodeConcept]) -> CodeConcept | None:
        if len(concepts) < 2:
            return None
        listing = "\n\n".join(f"### {c.name}\n{c.description}\n```python\n{c.code}\n```" for c in concepts)
        reply = await ask_json(
            self.llm, self.SYSTEM, f"Concepts:\n\n{listing}", ComposedConcept, retries=self.retries
        )
        if not reply.meaningful or not reply.code.strip() or not reply.name.strip():
            return None
        if not reply.name.isidentifier():
            reply.name = (
                "_".join(reply.name.split()) if "_".join(reply.name.split()).isidentifier() else "composed"
            )
        domains = {c.domain for c in concepts}
        return CodeConcept(
            name=reply.name,
            description=reply.description or f"composition of {', '.join(c.name for c in concepts)}",
            code=join_code([*(c.code for c in concepts), reply.code]),
            signature=reply.signature,
            usage_guidance=reply.usage_guidance,
            domain=domains.pop() if len(domains) == 1 else "generic",
            metadata={"composed_from": [c.id for c in concepts], "origin": "composition"},
        )


# --- documentation ----------------------------------------------------------------------------------------


class ConceptDoc(BaseModel):
    name: str = Field(min_length=1)
    description: str = Field(min_length=1)
    signature: str | None = None
    usage_guidance: str | None = None

    @field_validator("name")
    @classmethod
    def _identifier(cls, v: str) -> str:
        v = v.strip()
        if not v.isidentifier():
            raise ValueError("name must be a Python identifier (snake_case)")
        return v


class LLMAutoDocumenter:
    """LILO AutoDoc: an LLM names and documents an abstraction from its code and usage examples.
    The function in the code is renamed to the new name; the code is otherwise unchanged."""

    SYSTEM = (
        "You document a reusable Python function that was discovered automatically in successful programs. "
        "Give it a descriptive snake_case name, a one-sentence description, its signature and when to use "
        'it. Reply with JSON only: {"name": "...", "description": "...", "signature": "name(args)", '
        '"usage_guidance": "..."}'
    )

    def __init__(self, llm_client: LLMClient, *, retries: int = 2) -> None:
        self.llm = llm_client
        self.retries = retries

    async def document(self, concept: CodeConcept, usage_examples: list[tuple[str, str]]) -> CodeConcept:
        examples = "\n".join(f"- original: {a}\n  rewritten: {b}" for a, b in usage_examples[:5])
        user = f"```python\n{concept.code}\n```\nUsage examples:\n{examples or '(none)'}"
        doc = await ask_json(self.llm, self.SYSTEM, user, ConceptDoc, retries=self.retries)
        code = concept.code
        if doc.name != concept.name:
            code = _rename_function(code, concept.name, doc.name)
        signature = doc.signature
        if signature and concept.name in signature:
            signature = signature.replace(concept.name, doc.name)
        return concept.model_copy(
            update={
                "name": doc.name,
                "description": doc.description,
                "code": code,
                "signature": signature or concept.signature,
                "usage_guidance": doc.usage_guidance,
                "metadata": {**concept.metadata, "documented": True, "auto_name": concept.name},
            }
        )


# --- compression -----------------------------------------------------------------------------------------


class StitchCompressionStrategy:
    """Symbolic anti-unification compression over the code of successful trajectories
    (see :mod:`atlas.memory.stitch`), then optional AutoDoc. No LLM in the symbolic part."""

    def __init__(
        self,
        documenter: ConceptDocumenter | None = None,
        *,
        max_abstractions: int = 5,
        min_uses: int = 2,
        min_size: int = 4,
        compressor: StitchCompressor | None = None,
    ) -> None:
        self.documenter = documenter
        self.compressor = compressor or StitchCompressor(
            max_abstractions=max_abstractions, min_uses=min_uses, min_size=min_size
        )

    async def compress(
        self, trajectories: list[Trajectory], *, exclude: Callable[[CodeConcept], bool] | None = None
    ) -> list[CodeConcept]:
        """Abstractions of the successful trajectories' code; ``exclude`` skips known ones before they
        are documented (saves LLM calls when a corpus is re-compressed)."""
        snippets = [(code, t.id) for t in trajectories if t.success for code in code_snippets(t)]
        if not snippets:
            return []
        programs = self.compressor.parse_programs(snippets)
        abstractions = await asyncio.to_thread(self.compressor.compress, programs)
        domains = {t.task.domain for t in trajectories if t.success}
        domain = domains.pop() if len(domains) == 1 else "generic"
        concepts = []
        for a in abstractions:
            sources = sorted({programs[i].trajectory_id for i in a.programs})
            concept = CodeConcept(
                name=a.name,
                description=f"Learned abstraction used {a.uses} times in {len(a.programs)} successful programs",
                code=a.code,
                signature=f"{a.name}({', '.join(a.params)})",
                domain=domain,
                usage_guidance=f"e.g. {a.examples[0][1]} replaces {a.examples[0][0]}" if a.examples else None,
                source_trajectory_ids=sources,
                metadata={
                    "origin": "stitch",
                    "uses": a.uses,
                    "benefit": a.benefit,
                    "size": a.size,
                    "arity": len(a.params),
                    "depends_on": a.depends_on,
                    "requires": required_globals(a.code),
                    "examples": [list(e) for e in a.examples],
                },
            )
            if exclude is not None and exclude(concept):
                continue
            if self.documenter is not None:
                concept = await self.documenter.document(concept, a.examples)
            concepts.append(concept)
        return concepts


# --- the component ---------------------------------------------------------------------------------------


class ChromaConceptLibrary:
    """ConceptLibrary backed by a VectorStore plus SQLite records."""

    def __init__(
        self,
        embedder: Embedder,
        vector_store: VectorStore,
        primitive_loader: PrimitiveLoader | None = None,
        composition_strategy: CompositionStrategy | None = None,
        compression_strategy: CompressionStrategy | None = None,
        collection_name: str = "atlas_concepts",
        *,
        records: RecordStore | None = None,
        corpus_window: int = 100,
        compress_every: int = 1,
    ) -> None:
        if records is None:
            from atlas.infra.records import RecordStore

            records = RecordStore(None)
        self.embedder = embedder
        self.vector_store = vector_store
        self.primitive_loader = primitive_loader
        self.composition_strategy = composition_strategy
        self.compression_strategy = compression_strategy
        self.collection_name = collection_name
        self._table = IndexedTable(records, collection_name, vector_store)
        self._records = records
        self._hash_table = f"{collection_name}_code"
        self._corpus_table = f"{collection_name}_corpus"
        self.corpus_window = corpus_window
        self.compress_every = max(1, compress_every)
        self._since_compress = 0
        if primitive_loader is not None:
            self.load_primitives(primitive_loader)

    def load_primitives(self, loader: PrimitiveLoader) -> list[str]:
        """Add the loader's primitives that are not stored yet; returns the ids added."""
        fresh = [c for c in loader.load().values() if self._table.get(c.id) is None]
        self._add_many(fresh)
        return [c.id for c in fresh]

    # --- writing -------------------------------------------------------------------------------------
    def _rows(self, concepts: list[CodeConcept]) -> list[CodeConcept]:
        """Drop concepts whose code is already stored (same AST), within the batch too."""
        out, seen = [], set()
        for c in concepts:
            h = code_hash(c.code)
            if h in seen or self._records.get(self._hash_table, h) is not None:
                continue
            seen.add(h)
            out.append(c)
        return out

    def _write(
        self, concepts: list[CodeConcept], vectors: np.ndarray | None, extra: list | tuple = ()
    ) -> None:
        if not concepts:
            with self._records.transaction():
                for table, rid, record in extra:
                    self._records.put(table, rid, record)
            return
        assert vectors is not None  # embedded whenever there are concepts to write
        self._table.write(
            [(c.id, c.model_dump(mode="json")) for c in concepts],
            vectors,
            [{"domain": c.domain, "is_primitive": c.is_primitive, "name": c.name} for c in concepts],
            [concept_text(c) for c in concepts],
            extra=[*[(self._hash_table, code_hash(c.code), {"id": c.id}) for c in concepts], *extra],
        )

    def _add_many(self, concepts: list[CodeConcept]) -> list[CodeConcept]:
        for c in concepts:
            _validate_concept(c)
        fresh = self._rows(concepts)
        if fresh:
            self._write(fresh, self.embedder.embed([concept_text(c) for c in fresh]))
        return fresh

    async def _aadd_many(self, concepts: list[CodeConcept], extra: list | tuple = ()) -> list[CodeConcept]:
        for c in concepts:
            _validate_concept(c)
        fresh = self._rows(concepts)
        vectors = await self.embedder.aembed([concept_text(c) for c in fresh]) if fresh else None
        if fresh or extra:
            await asyncio.to_thread(self._write, fresh, vectors, extra)
        return fresh

    def add(self, concept: CodeConcept) -> str:
        """Add a concept (embedding name + description); returns its id, or the id of the stored concept
        with the same code."""
        fresh = self._add_many([concept])
        if fresh:
            return fresh[0].id
        stored = self._records.get(self._hash_table, code_hash(concept.code))
        if stored is None:
            raise StoreError(f"concept {concept.name!r} was neither added nor found stored")
        return stored["id"]

    # --- reading -------------------------------------------------------------------------------------
    def _search(self, vector: Any, k: int, where: dict | None) -> list[CodeConcept]:
        return [CodeConcept.model_validate(r) for r, _ in self._table.query(vector, k, where)]

    def search(self, query: str, k: int = 5, where: dict | None = None) -> list[CodeConcept]:
        """Semantic search by natural-language query."""
        if not isinstance(query, str) or not query.strip():
            raise InvalidInputError("concept search needs a non-empty query")
        validate_k(k)
        return self._search(self.embedder.embed([query])[0], k, where)

    async def asearch(self, query: str, k: int = 5, where: dict | None = None) -> list[CodeConcept]:
        if not isinstance(query, str) or not query.strip():
            raise InvalidInputError("concept search needs a non-empty query")
        validate_k(k)
        vector = (await self.embedder.aembed([query]))[0]
        return await asyncio.to_thread(self._search, vector, k, where)

    def get(self, concept_id: str) -> CodeConcept | None:
        record = self._table.get(concept_id)
        return CodeConcept.model_validate(record) if record is not None else None

    def get_by_name(self, name: str, domain: str | None = None) -> CodeConcept | None:
        for c in self.all():
            if c.name == name and (domain is None or c.domain == domain):
                return c
        return None

    def all(self) -> list[CodeConcept]:
        return [CodeConcept.model_validate(r) for r in self._table.all()]

    def count(self) -> int:
        return self._table.count()

    # --- learning ------------------------------------------------------------------------------------
    async def acompose(self, concept_ids: list[str]) -> CodeConcept | None:
        if self.composition_strategy is None:
            raise ConfigError("this concept library has no composition strategy")
        concepts = []
        for cid in concept_ids:
            c = self.get(cid)
            if c is None:
                raise InvalidInputError(f"unknown concept id {cid!r}")
            concepts.append(c)
        composed = await self.composition_strategy.compose(concepts)
        if composed is None:
            return None
        stored = await self._aadd_many([composed])
        return stored[0] if stored else None

    def compose(self, concept_ids: list[str]) -> CodeConcept | None:
        """Delegates to the composition strategy and stores the result (None if not meaningful)."""
        return run_sync(self.acompose(concept_ids))

    async def acompress(self, trajectories: Sequence[Trajectory | dict]) -> list[CodeConcept]:
        if self.compression_strategy is None:
            raise ConfigError("this concept library has no compression strategy")
        trajs = [validate_trajectory(t) for t in trajectories]
        successful = [t for t in trajs if t.success]
        if not successful:
            return []
        concepts = await self.compression_strategy.compress(successful)
        return await self._aadd_many(concepts)

    def compress(self, trajectories: Sequence[Trajectory | dict]) -> list[CodeConcept]:
        """Extract and store new concepts from the successful trajectories (duplicates skipped)."""
        return run_sync(self.acompress(trajectories))

    def _known(self, concept: CodeConcept) -> bool:
        return self._records.get(self._hash_table, code_hash(concept.code)) is not None

    async def alearn(self, trajectory: Trajectory | dict) -> list[CodeConcept]:
        """Add a successful trajectory's code to the corpus and, every ``compress_every`` programs,
        compress the last ``corpus_window`` ones; returns the concepts that are new.

        Stitch needs several programs to find shared structure, so ``MemorySystemImpl.store`` uses this
        rather than compressing each trajectory alone."""
        traj = validate_trajectory(trajectory)
        if not traj.success or self.compression_strategy is None:
            return []
        snippets = code_snippets(traj)
        if not snippets:
            return []
        entry = {"domain": traj.task.domain, "code": snippets}
        self._since_compress += 1
        concepts: list[CodeConcept] = []
        if self._since_compress >= self.compress_every:
            corpus = [(i, r) for i, r in self._records.items(self._corpus_table) if i != traj.id]
            corpus = [*corpus, (traj.id, entry)][-self.corpus_window :]
            trajs = [
                Trajectory(
                    id=tid,
                    task=Task(description="corpus program", domain=rec.get("domain", "generic")),
                    success=True,
                    metadata={"code": rec["code"]},
                )
                for tid, rec in corpus
            ]
            strategy = self.compression_strategy
            if isinstance(strategy, StitchCompressionStrategy):
                concepts = await strategy.compress(trajs, exclude=self._known)
            else:
                concepts = await strategy.compress(trajs)
        # the corpus entry and the new concepts are written together: a failing strategy leaves neither
        fresh = await self._aadd_many(concepts, extra=[(self._corpus_table, traj.id, entry)])
        if self._since_compress >= self.compress_every:
            self._since_compress = 0
        return fresh

    def learn(self, trajectory: Trajectory | dict) -> list[CodeConcept]:
        return run_sync(self.alearn(trajectory))

    def corpus_size(self) -> int:
        return self._records.count(self._corpus_table)

    def update_stats(self, concept_id: str, success: bool) -> None:
        """Count one use and its outcome; success_rate = successes / uses (atomic)."""

        def bump(record: dict[str, Any]) -> dict[str, Any]:
            record["usage_count"] = int(record.get("usage_count", 0)) + 1
            record["success_count"] = int(record.get("success_count", 0)) + (1 if success else 0)
            record["success_rate"] = record["success_count"] / record["usage_count"]
            return record

        try:
            self._table.update(concept_id, bump)
        except KeyError as exc:
            raise InvalidInputError(f"unknown concept id {concept_id!r}") from exc


def _validate_concept(concept: CodeConcept) -> None:
    if not concept.name.strip() or not concept.description.strip():
        raise InvalidInputError("a concept needs a name and a description")
    try:
        compile(concept.code, f"<concept {concept.name}>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        raise InvalidInputError(f"concept {concept.name!r}: code does not parse: {exc}") from exc


__all__ = [
    "ChromaConceptLibrary",
    "ComposedConcept",
    "ConceptDoc",
    "LLMAutoDocumenter",
    "LLMCompositionStrategy",
    "StitchCompressionStrategy",
    "code_hash",
    "concept_text",
]
