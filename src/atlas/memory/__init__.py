"""The ATLAS memory library (seed Phase 3): experience memory, concept library, strategy bank, and the
MemorySystem that combines them (plus the guideline bank of ``atlas.memory.guidelines``).

    from atlas.memory import build_memory_system, format_advice
    memory = build_memory_system("./mem")          # Chroma + SQLite in ./mem, local embedder
    memory.store(trajectory)                        # → {"experience": id, "concepts": [...], ...}
    advice = format_advice(memory.query_sync(task))

Every component and every strategy is swappable (see each module); components are optional.
"""

from __future__ import annotations

from atlas.memory.concepts import (
    ChromaConceptLibrary,
    LLMAutoDocumenter,
    LLMCompositionStrategy,
    StitchCompressionStrategy,
)
from atlas.memory.experience import (
    ChromaExperienceMemory,
    LLMRefineStrategy,
    LLMSummarizingExtractor,
    PassthroughRefineStrategy,
    RefineDecision,
    SimpleExperienceExtractor,
    apply_refine_decision,
)
from atlas.memory.primitives import ARCPrimitiveLoader, SWEPrimitiveLoader, get_primitive_loader
from atlas.memory.stitch import StitchCompressor
from atlas.memory.storage import IndexedTable
from atlas.memory.strategies import (
    BayesianUpdater,
    ChromaStrategyBank,
    EMASuccessUpdater,
    LLMStrategyAbstractor,
    SimpleAverageUpdater,
)
from atlas.memory.system import MemorySystemImpl, build_memory_system, format_advice

__all__ = [
    "ARCPrimitiveLoader",
    "BayesianUpdater",
    "ChromaConceptLibrary",
    "ChromaExperienceMemory",
    "ChromaStrategyBank",
    "EMASuccessUpdater",
    "IndexedTable",
    "LLMAutoDocumenter",
    "LLMCompositionStrategy",
    "LLMRefineStrategy",
    "LLMStrategyAbstractor",
    "LLMSummarizingExtractor",
    "MemorySystemImpl",
    "PassthroughRefineStrategy",
    "RefineDecision",
    "SWEPrimitiveLoader",
    "SimpleAverageUpdater",
    "SimpleExperienceExtractor",
    "StitchCompressionStrategy",
    "StitchCompressor",
    "apply_refine_decision",
    "build_memory_system",
    "format_advice",
    "get_primitive_loader",
]
