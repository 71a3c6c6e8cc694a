"""Memory component protocols and their strategy protocols (the ATLAS seed, Phase 3)."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from atlas.core.types import (
    CodeConcept,
    Experience,
    Guideline,
    MemoryQueryResult,
    Strategy,
    Task,
    Trajectory,
)

# --- strategy protocols -------------------------------------------------------------------------


@runtime_checkable
class ExperienceExtractor(Protocol):
    """Extracts the searchable text of a trajectory (what gets embedded)."""

    def extract(self, trajectory: Trajectory) -> str: ...


@runtime_checkable
class ExtractsAsync(Protocol):
    """Optional capability of an extractor: ``aextract`` (an LLM-backed one awaits its model)."""

    async def aextract(self, trajectory: Trajectory) -> str: ...


@runtime_checkable
class RefineStrategy(Protocol):
    """ReMem-style refinement of retrieved experiences: merge, prune noise, reorder."""

    async def refine(
        self, experiences: list[Experience], context: Task | None = None
    ) -> list[Experience]: ...


@runtime_checkable
class CompositionStrategy(Protocol):
    async def compose(self, concepts: list[CodeConcept]) -> CodeConcept | None: ...


@runtime_checkable
class CompressionStrategy(Protocol):
    async def compress(self, trajectories: list[Trajectory]) -> list[CodeConcept]: ...


@runtime_checkable
class ConceptDocumenter(Protocol):
    async def document(self, concept: CodeConcept, usage_examples: list[tuple[str, str]]) -> CodeConcept: ...


@runtime_checkable
class PrimitiveLoader(Protocol):
    def load(self) -> dict[str, CodeConcept]: ...


@runtime_checkable
class StrategyAbstractor(Protocol):
    async def abstract(self, trajectory: Trajectory) -> Strategy | None: ...


@runtime_checkable
class SuccessRateUpdater(Protocol):
    def update(self, current_rate: float, current_count: int, success: bool) -> tuple[float, int]: ...


@runtime_checkable
class StartsAtPrior(Protocol):
    """Optional capability of a success-rate updater: the rate a strategy never used starts at."""

    @property
    def initial_rate(self) -> float: ...


@runtime_checkable
class UpdatesStrategies(Protocol):
    """Optional capability of a success-rate updater: fold an outcome into the whole ``Strategy``
    (e.g. keeping a posterior's parameters beside the rate)."""

    def update_strategy(self, strategy: Strategy, success: bool) -> Strategy: ...


# --- components ------------------------------------------------------------------------------------


@runtime_checkable
class ExperienceMemory(Protocol):
    def store(self, trajectory: Trajectory) -> str: ...
    async def astore(self, trajectory: Trajectory) -> str: ...
    def search(self, task: Task, k: int = 4) -> list[Experience]: ...
    async def asearch(self, task: Task, k: int = 4) -> list[Experience]: ...
    def get(self, experience_id: str) -> Experience | None: ...
    def refine(self, experiences: list[Experience]) -> list[Experience]: ...
    def prune(self, criteria: dict[str, Any]) -> int: ...


@runtime_checkable
class ConceptLibrary(Protocol):
    def add(self, concept: CodeConcept) -> str: ...
    def search(self, query: str, k: int = 5) -> list[CodeConcept]: ...
    async def asearch(self, query: str, k: int = 5) -> list[CodeConcept]: ...
    def get(self, concept_id: str) -> CodeConcept | None: ...
    def compose(self, concept_ids: list[str]) -> CodeConcept | None: ...
    def compress(self, trajectories: list[Trajectory]) -> list[CodeConcept]: ...
    async def acompress(self, trajectories: list[Trajectory]) -> list[CodeConcept]: ...
    def update_stats(self, concept_id: str, success: bool) -> None: ...


@runtime_checkable
class StrategyBank(Protocol):
    def write(self, trajectory: Trajectory) -> Strategy | None: ...
    async def awrite(self, trajectory: Trajectory) -> Strategy | None: ...
    def read(self, task: Task, k: int = 5) -> list[Strategy]: ...
    async def aread(self, task: Task, k: int = 5) -> list[Strategy]: ...
    def get(self, strategy_id: str) -> Strategy | None: ...
    def update_stats(self, strategy_id: str, success: bool) -> None: ...


@runtime_checkable
class GuidelineBank(Protocol):
    def save_trajectory(self, trajectory: Trajectory) -> list[str]: ...
    def get_guidelines(self, task: Task | str, k: int = 5, mode: str | None = None) -> list[Guideline]: ...
    async def aget_guidelines(
        self, task: Task | str, k: int = 5, mode: str | None = None
    ) -> list[Guideline]: ...


# --- optional capabilities: MemorySystemImpl uses them when a component has them ------------------


@runtime_checkable
class RefinesExperiences(Protocol):
    async def arefine(
        self, experiences: list[Experience], context: Task | None = None
    ) -> list[Experience]: ...


@runtime_checkable
class TracksExperienceUse(Protocol):
    def update_stats(self, experience_id: str, success: bool) -> None: ...


@runtime_checkable
class CompressesConcepts(Protocol):
    """A concept library learns from trajectories only while its ``compression_strategy`` is set."""

    compression_strategy: CompressionStrategy | None


@runtime_checkable
class LearnsConcepts(Protocol):
    """Learns from one trajectory at a time (kept in a corpus), rather than compressing it alone."""

    async def alearn(self, trajectory: Trajectory) -> list[CodeConcept]: ...


@runtime_checkable
class SavesTrajectoriesAsync(Protocol):
    async def asave_trajectory(self, trajectory: Trajectory) -> list[str]: ...


@runtime_checkable
class SegmentsTrajectories(Protocol):
    """Saving reports the subtasks found (``GuidelineBank.asave`` → a result with ``status``,
    ``guideline_ids``, ``reason`` and ``subtasks``), so experience memory can index them too."""

    async def asave(self, trajectory: Trajectory) -> Any: ...


@runtime_checkable
class Counted(Protocol):
    def count(self) -> int: ...


@runtime_checkable
class ListsGuidelines(Protocol):
    def list_guidelines(self) -> list[Guideline]: ...


@runtime_checkable
class MemorySystem(Protocol):
    async def query(self, task: Task, k: int = 5) -> MemoryQueryResult: ...
    def store(self, trajectory: Trajectory) -> dict[str, Any]: ...
