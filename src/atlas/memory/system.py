"""MemorySystemImpl: experience memory, concept library, strategy bank and guideline bank as one memory.

Every component is optional (ablations). ``query`` asks the present components concurrently
(``asyncio.gather``); a component that fails yields an empty list for that part and an entry in
``MemoryQueryResult.errors`` (and a log line) — the others still answer. ``store`` validates the
trajectory first (InvalidInputError, nothing written), then sends a success to every component and a
failure to experience memory and the guideline bank (which learns recovery tips from failures).

Error policy of ``store`` (decided here, pinned by tests): each component's write is atomic on its own;
a component that raises is recorded in ``result["errors"][component]`` and logged, the other components
still store, and ``store`` does not raise — an agent loop that stores its trajectory never crashes
because, say, the LLM behind the strategy abstractor replied garbage. Pass ``raise_errors=True`` to get
a ``StoreError`` naming the failed components (raised after all of them ran) instead.

``build_memory_system(path)`` wires the components over one directory: ``records.sqlite`` (SQLite
records), ``chroma/`` (vectors) and ``memory.json`` (which embedder the vectors were made with;
reopening with a different embedder is refused).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import logging
from collections.abc import Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from atlas.core.types import MemoryQueryResult, Task, Trajectory
from atlas.errors import AtlasError, ConfigError, LLMError, StoreError
from atlas.infra.aio import run_sync
from atlas.memory.common import validate_k, validate_task, validate_trajectory
from atlas.memory.experience import trajectory_subtasks
from atlas.protocols.embed import Embedder
from atlas.protocols.memory import (
    CompressesConcepts,
    ConceptLibrary,
    Counted,
    ExperienceMemory,
    GuidelineBank,
    LearnsConcepts,
    ListsGuidelines,
    RefinesExperiences,
    SavesTrajectoriesAsync,
    SegmentsTrajectories,
    StrategyBank,
    TracksExperienceUse,
)

if TYPE_CHECKING:
    from atlas.infra.llm.client import LLMClient

log = logging.getLogger(__name__)

COMPONENTS = ("experience", "concepts", "strategies", "guidelines")


def _reason(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


class MemorySystemImpl:
    """Aggregator over the (optional) memory components."""

    def __init__(
        self,
        experience: ExperienceMemory | None = None,
        concepts: ConceptLibrary | None = None,
        strategies: StrategyBank | None = None,
        guidelines: GuidelineBank | None = None,
        *,
        refine: bool = True,
        component_timeout: float | None = None,
        raise_errors: bool = False,
    ) -> None:
        self._experience = experience
        self._concepts = concepts
        self._strategies = strategies
        self._guidelines = guidelines
        self.refine = refine
        self.component_timeout = component_timeout
        self.raise_errors = raise_errors
        self._closers: list[Callable[[], None]] = []

    # --- components -------------------------------------------------------------------------------
    @property
    def experience_memory(self) -> ExperienceMemory | None:
        return self._experience

    @property
    def concept_library(self) -> ConceptLibrary | None:
        return self._concepts

    @property
    def strategy_bank(self) -> StrategyBank | None:
        return self._strategies

    @property
    def guideline_bank(self) -> GuidelineBank | None:
        return self._guidelines

    def components(self) -> list[str]:
        """Names of the components present."""
        present = [self._experience, self._concepts, self._strategies, self._guidelines]
        return [name for name, c in zip(COMPONENTS, present, strict=True) if c is not None]

    async def _guarded(self, name: str, coro: Awaitable[Any]) -> Any:
        if self.component_timeout is None:
            return await coro
        try:
            return await asyncio.wait_for(coro, self.component_timeout)
        except TimeoutError as exc:
            raise StoreError(f"{name} did not answer within {self.component_timeout}s") from exc

    # --- query ------------------------------------------------------------------------------------
    async def _query_experience(
        self, experience: ExperienceMemory, task: Task, k: int, errors: dict[str, str]
    ) -> list:
        found = await experience.asearch(task, k)
        if not self.refine or not found or not isinstance(experience, RefinesExperiences):
            return found
        try:
            return await experience.arefine(found, task)
        except AtlasError as exc:  # a model's bad reply: keep the unrefined list, say so
            errors["experience.refine"] = _reason(exc)
            log.warning("experience refine failed, returning unrefined results: %s", exc)
            return found

    async def query(self, task: Task | str | dict, k: int = 5) -> MemoryQueryResult:
        """Ask every present component concurrently; failures become ``errors`` entries."""
        task = validate_task(task)
        k = validate_k(k)
        errors: dict[str, str] = {}
        jobs: dict[str, Awaitable[Any]] = {}
        if self._experience is not None:
            jobs["experiences"] = self._query_experience(self._experience, task, k, errors)
        if self._concepts is not None:
            jobs["concepts"] = self._concepts.asearch(task.description, k)
        if self._strategies is not None:
            jobs["strategies"] = self._strategies.aread(task, k)
        if self._guidelines is not None:
            jobs["guidelines"] = self._guidelines.aget_guidelines(task, k)
        results = await asyncio.gather(
            *(self._guarded(n, j) for n, j in jobs.items()), return_exceptions=True
        )
        found: dict[str, list] = {}
        for name, value in zip(jobs, results, strict=True):
            if isinstance(value, BaseException):
                if not isinstance(value, Exception):
                    raise value  # cancellation / interrupt: not ours to swallow
                errors[name] = _reason(value)
                log.error(
                    "memory component %s failed during query: %s",
                    name,
                    _reason(value),
                    exc_info=value if not isinstance(value, AtlasError) else None,
                )
                found[name] = []
            else:
                found[name] = list(value or [])
        return MemoryQueryResult(**found, errors=errors)

    def query_sync(self, task: Task | str | dict, k: int = 5) -> MemoryQueryResult:
        """Sync twin of :meth:`query` (works inside a running event loop too)."""
        return run_sync(self.query(task, k))

    # --- store ------------------------------------------------------------------------------------
    @staticmethod
    async def _store_guidelines(guidelines: GuidelineBank, traj: Trajectory) -> list[str]:
        if isinstance(guidelines, SavesTrajectoriesAsync):
            return list(await guidelines.asave_trajectory(traj))
        return list(await asyncio.to_thread(guidelines.save_trajectory, traj))

    @staticmethod
    async def _segment_guidelines(
        guidelines: SegmentsTrajectories, traj: Trajectory, segmented: asyncio.Future[list[str]] | None
    ) -> list[str]:
        """Save to the guideline bank and hand the subtasks it found to ``segmented`` (always
        resolved, to [] on failure, so the experience store waiting on it never hangs)."""
        try:
            result = await guidelines.asave(traj)
            if segmented is not None and not segmented.done():
                segmented.set_result([str(s) for s in getattr(result, "subtasks", None) or [] if s])
            if getattr(result, "status", None) == "not_processed":
                raise LLMError(
                    f"trajectory {traj.id} not processed ({getattr(result, 'reason', None)}); "
                    "it is recorded and reprocess() will retry it"
                )
            return list(getattr(result, "guideline_ids", None) or [])
        finally:
            if segmented is not None and not segmented.done():
                segmented.set_result([])

    async def _store_experience(
        self, experience: ExperienceMemory, traj: Trajectory, segmented: asyncio.Future[list[str]] | None
    ) -> Any:
        """Store in experience memory, with the guideline bank's subtasks in ``metadata["subtasks"]``
        when the trajectory came without any (experience search then matches subtask queries too)."""
        if segmented is not None and (subtasks := await segmented):
            traj = traj.model_copy(update={"metadata": {**traj.metadata, "subtasks": subtasks}})
        return await self._guarded("experience", experience.astore(traj))

    @staticmethod
    async def _store_concepts(concepts: ConceptLibrary, traj: Trajectory) -> list[str]:
        if isinstance(concepts, LearnsConcepts):
            return [c.id for c in await concepts.alearn(traj)]
        return [c.id for c in await concepts.acompress([traj])]

    @staticmethod
    async def _store_strategy(strategies: StrategyBank, traj: Trajectory) -> list[str]:
        strategy = await strategies.awrite(traj)
        return [strategy.id] if strategy is not None else []

    async def astore(self, trajectory: Trajectory | dict | str) -> dict[str, Any]:
        """Store a trajectory in the components that learn from it; returns ids per component plus
        ``errors`` (component → reason). Raises InvalidInputError (nothing stored) for bad input."""
        traj = validate_trajectory(trajectory)
        jobs: dict[str, Awaitable[Any]] = {}
        segmented: asyncio.Future[list[str]] | None = None
        if self._guidelines is not None and isinstance(self._guidelines, SegmentsTrajectories):
            if self._experience is not None and not trajectory_subtasks(traj):
                segmented = asyncio.get_running_loop().create_future()
            jobs["guidelines"] = self._guarded(
                "guidelines", self._segment_guidelines(self._guidelines, traj, segmented)
            )
        elif self._guidelines is not None:
            jobs["guidelines"] = self._guarded("guidelines", self._store_guidelines(self._guidelines, traj))
        if self._experience is not None:
            jobs["experience"] = self._store_experience(self._experience, traj, segmented)
        if traj.success:
            if (
                isinstance(self._concepts, CompressesConcepts)
                and self._concepts.compression_strategy is not None
            ):
                jobs["concepts"] = self._guarded("concepts", self._store_concepts(self._concepts, traj))
            if self._strategies is not None:
                jobs["strategies"] = self._guarded("strategies", self._store_strategy(self._strategies, traj))
        results = await asyncio.gather(*jobs.values(), return_exceptions=True)
        out: dict[str, Any] = {"trajectory_id": traj.id, "success": traj.success}
        errors: dict[str, str] = {}
        for name, value in zip(jobs, results, strict=True):
            if isinstance(value, BaseException):
                if not isinstance(value, Exception):
                    raise value
                errors[name] = _reason(value)
                log.error(
                    "memory component %s failed to store trajectory %s: %s",
                    name,
                    traj.id,
                    _reason(value),
                    exc_info=value if not isinstance(value, AtlasError) else None,
                )
                out[name] = None if name == "experience" else []
            else:
                out[name] = value
        out["errors"] = errors
        if errors and self.raise_errors:
            raise StoreError(
                f"storing trajectory {traj.id} failed in: "
                + "; ".join(f"{k}: {v}" for k, v in errors.items())
            )
        return out

    def store(self, trajectory: Trajectory | dict | str) -> dict[str, Any]:
        """Sync twin of :meth:`astore`."""
        return run_sync(self.astore(trajectory))

    # --- feedback -----------------------------------------------------------------------------------
    def record_outcome(self, result: MemoryQueryResult, success: bool) -> None:
        """Tell the components whether the task that used ``result`` succeeded (usage statistics)."""
        if isinstance(self._experience, TracksExperienceUse):
            for e in result.experiences:
                if self._experience.get(e.id) is not None:  # merged (refined) items have fresh ids
                    self._experience.update_stats(e.id, success)
        if self._concepts is not None:
            for c in result.concepts:
                self._concepts.update_stats(c.id, success)
        if self._strategies is not None:
            for s in result.strategies:
                self._strategies.update_stats(s.id, success)

    def stats(self) -> dict[str, int]:
        """Stored item counts per present component."""
        out: dict[str, int] = {}
        for name, comp in zip(
            COMPONENTS, (self._experience, self._concepts, self._strategies, self._guidelines), strict=True
        ):
            if comp is None:
                continue
            if isinstance(comp, Counted):
                out[name] = int(comp.count())
            elif isinstance(comp, ListsGuidelines):
                out[name] = len(comp.list_guidelines())
            else:
                out[name] = -1  # the component cannot say
        return out

    def close(self) -> None:
        """Release stores opened by :func:`build_memory_system` (idempotent)."""
        while self._closers:
            self._closers.pop()()

    def __enter__(self) -> MemorySystemImpl:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# --- advice rendering -------------------------------------------------------------------------------------


def _clip(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def format_advice(result: MemoryQueryResult, *, max_steps: int = 8, max_chars: int = 4000) -> str:
    """Render a query result as advice text for an agent's prompt ("" when there is nothing)."""
    parts: list[str] = []
    if result.guidelines:
        lines = ["Guidelines from past runs:"]
        for g in result.guidelines:
            line = f"- [{g.category}] {_clip(g.content, 300)}"
            if g.trigger:
                line += f" (when: {_clip(g.trigger, 120)})"
            if g.negative_example:
                line += f" Avoid: {_clip(g.negative_example, 160)}"
            lines.append(line)
        parts.append("\n".join(lines))
    if result.strategies:
        lines = ["Strategies that worked in similar situations:"]
        for s in result.strategies:
            rate = f" (success rate {s.success_rate:.0%} over {s.usage_count} uses)" if s.usage_count else ""
            lines.append(f"- When {_clip(s.situation, 200)}: {_clip(s.approach, 300)}{rate}")
        parts.append("\n".join(lines))
    if result.experiences:
        lines = ["Similar past tasks:"]
        for e in result.experiences:
            outcome = "succeeded" if e.success else "FAILED"
            lines.append(f"- {_clip(e.task.description, 160)} — {outcome} in {len(e.steps)} steps")
            if e.metadata.get("refined"):
                lines.append(f"  lesson: {_clip(e.content, 300)}")
            for step in e.steps[:max_steps]:
                suffix = f" (error: {_clip(step.error, 80)})" if step.error else ""
                lines.append(f"    {_clip(step.action, 120)}{suffix}")
            if len(e.steps) > max_steps:
                lines.append(f"    … {len(e.steps) - max_steps} more steps")
        parts.append("\n".join(lines))
    if result.concepts:
        lines = ["Reusable code concepts:"]
        for c in result.concepts:
            lines.append(f"- {c.signature or c.name}: {_clip(c.description, 200)}")
        parts.append("\n".join(lines))
    text = "\n\n".join(parts)
    return text if len(text) <= max_chars else text[: max_chars - 1] + "…"


# --- factory ---------------------------------------------------------------------------------------------


def _read_memory_json(meta_file: Path) -> dict[str, Any]:
    try:
        stored = json.loads(meta_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(
            f"{meta_file} is unreadable ({exc}); restore it or move the directory aside"
        ) from exc
    if not isinstance(stored, dict):
        raise ConfigError(
            f"{meta_file} must hold a JSON object with 'embedder' and 'dim'; restore it or move the "
            "directory aside"
        )
    return stored


def _embedder_config(path: Path, embedder: Embedder) -> None:
    meta_file = path / "memory.json"
    current = {"embedder": embedder.name, "dim": int(embedder.dim)}
    if meta_file.exists():
        stored = _read_memory_json(meta_file)
        if stored.get("embedder") != current["embedder"] or stored.get("dim") != current["dim"]:
            raise ConfigError(
                f"{path} was built with embedder {stored.get('embedder')!r} (dim {stored.get('dim')}); "
                f"reopening it with {current['embedder']!r} (dim {current['dim']}) would mix vector spaces"
            )
        return
    meta_file.write_text(json.dumps({"version": 1, **current}, indent=2))


def stored_embedder_name(path: str | Path) -> str | None:
    """The embedder a memory directory was built with (None for a new directory). Raises
    ConfigError when ``memory.json`` is unreadable."""
    meta_file = Path(path) / "memory.json"
    if not meta_file.is_file():
        return None
    return _read_memory_json(meta_file).get("embedder")


@contextlib.contextmanager
def _opening(root: Path | None) -> Iterator[None]:
    """An exclusive lock on ``root/.open.lock`` while stores are opened or created: Chroma and SQLite
    create their schemas on first open, and two processes doing that at once can fail."""
    if root is None:
        yield
        return
    if root.exists() and not root.is_dir():
        raise ConfigError(f"memory path {root} exists and is not a directory; pass a directory")
    try:
        root.mkdir(parents=True, exist_ok=True)
        fh = (root / ".open.lock").open("a")
    except OSError as exc:
        raise ConfigError(f"cannot create the memory directory {root}: {exc}") from exc
    with fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def build_memory_system(
    path: str | Path | None = None,
    llm: LLMClient | None = None,
    embedder: Embedder | None = None,
    components: Sequence[str] | None = None,
    *,
    primitives: str | None = None,
    guidelines: GuidelineBank | None = None,
    refine: bool = False,
    stitch_max_abstractions: int = 5,
) -> MemorySystemImpl:
    """Wire a MemorySystemImpl over Chroma + SQLite in ``path`` (None → in memory).

    ``components`` defaults to experience + concepts, plus strategies when an ``llm`` is given (the
    strategy abstractor needs one). With an ``llm`` the Stitch compressor's abstractions are also named
    by ``LLMAutoDocumenter``, the concept library composes concepts with ``LLMCompositionStrategy``
    (``concept_library.compose(ids)``), and ``refine=True`` switches experience refinement to ``LLMRefineStrategy``.
    ``primitives`` ("arc", "swe") preloads a domain's primitives. ``guidelines`` plugs in a guideline
    bank built elsewhere (``atlas.memory.guidelines``).
    """
    from atlas.infra.records import RecordStore
    from atlas.infra.vector_index import make_vector_store
    from atlas.memory.concepts import (
        ChromaConceptLibrary,
        LLMAutoDocumenter,
        LLMCompositionStrategy,
        StitchCompressionStrategy,
    )
    from atlas.memory.experience import ChromaExperienceMemory, LLMRefineStrategy
    from atlas.memory.primitives import get_primitive_loader
    from atlas.memory.strategies import ChromaStrategyBank, LLMStrategyAbstractor

    if components is None:
        components = (
            ("experience", "concepts", "strategies") if llm is not None else ("experience", "concepts")
        )
    unknown = set(components) - {"experience", "concepts", "strategies"}
    if unknown:
        raise ConfigError(
            f"unknown memory components {sorted(unknown)}; choose from experience, concepts, "
            "strategies (pass a guideline bank with guidelines=)"
        )
    if "strategies" in components and llm is None:
        raise ConfigError("the strategies component needs an llm (LLMStrategyAbstractor)")
    if refine and llm is None:
        raise ConfigError("refine=True needs an llm (LLMRefineStrategy)")
    if embedder is None:
        from atlas.infra.embeddings import default_embedder

        embedder = default_embedder()

    root = Path(path) if path is not None else None
    with _opening(root):  # processes creating one directory at once take turns
        if root is not None:
            if root.exists() and not root.is_dir():
                raise ConfigError(f"memory path {root} exists and is not a directory; pass a directory")
            try:
                root.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise ConfigError(f"cannot create the memory directory {root}: {exc}") from exc
            _embedder_config(root, embedder)
        records = RecordStore(root / "records.sqlite" if root is not None else None)
        chroma_dir = root / "chroma" if root is not None else None

        experience = concepts = strategies = None
        if "experience" in components:
            experience = ChromaExperienceMemory(
                embedder,
                make_vector_store(chroma_dir, "atlas_experiences"),
                refine_strategy=LLMRefineStrategy(llm) if refine and llm is not None else None,
                records=records,
            )
        if "concepts" in components:
            documenter = LLMAutoDocumenter(llm) if llm is not None else None
            concepts = ChromaConceptLibrary(
                embedder,
                make_vector_store(chroma_dir, "atlas_concepts"),
                primitive_loader=get_primitive_loader(primitives) if primitives else None,
                composition_strategy=LLMCompositionStrategy(llm) if llm is not None else None,
                compression_strategy=StitchCompressionStrategy(
                    documenter, max_abstractions=stitch_max_abstractions
                ),
                records=records,
            )
        if "strategies" in components:
            assert llm is not None  # checked above
            strategies = ChromaStrategyBank(
                embedder,
                make_vector_store(chroma_dir, "atlas_strategies"),
                LLMStrategyAbstractor(llm),
                records=records,
            )
    system = MemorySystemImpl(experience, concepts, strategies, guidelines, refine=refine)
    system._closers.append(records.close)
    return system


__all__ = ["COMPONENTS", "MemorySystemImpl", "build_memory_system", "format_advice", "stored_embedder_name"]
