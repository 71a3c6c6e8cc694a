"""Typing protocols: the seams between ATLAS's layers."""

from atlas.protocols.embed import Embedder
from atlas.protocols.env import Action, Environment, StepResult
from atlas.protocols.llm import LLM, Completion, Message, ToolCall, ToolSpec, Usage
from atlas.protocols.memory import (
    CompositionStrategy,
    CompressionStrategy,
    ConceptDocumenter,
    ConceptLibrary,
    ExperienceExtractor,
    ExperienceMemory,
    GuidelineBank,
    MemorySystem,
    PrimitiveLoader,
    RefineStrategy,
    StrategyAbstractor,
    StrategyBank,
    SuccessRateUpdater,
)
from atlas.protocols.store import QueryResult, VectorStore

__all__ = [
    "LLM",
    "Action",
    "Completion",
    "CompositionStrategy",
    "CompressionStrategy",
    "ConceptDocumenter",
    "ConceptLibrary",
    "Embedder",
    "Environment",
    "ExperienceExtractor",
    "ExperienceMemory",
    "GuidelineBank",
    "MemorySystem",
    "Message",
    "PrimitiveLoader",
    "QueryResult",
    "RefineStrategy",
    "StepResult",
    "StrategyAbstractor",
    "StrategyBank",
    "SuccessRateUpdater",
    "ToolCall",
    "ToolSpec",
    "Usage",
    "VectorStore",
]
