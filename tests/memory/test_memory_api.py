"""Pin the public API of atlas.memory."""

from __future__ import annotations

import atlas.memory


def test_public_api_is_pinned():
    assert sorted(atlas.memory.__all__) == sorted(
        [
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
    )
    for name in atlas.memory.__all__:
        assert getattr(atlas.memory, name) is not None


def test_storage_reexports_the_infra_stores():
    from atlas.infra import vector_index
    from atlas.memory import storage

    assert storage.ChromaVectorStore is vector_index.ChromaVectorStore
    assert storage.make_vector_store is vector_index.make_vector_store
    assert storage.VectorStore is not None


def test_importing_memory_does_not_import_chromadb():
    import subprocess
    import sys

    code = "import sys, atlas.memory; print('chromadb' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
