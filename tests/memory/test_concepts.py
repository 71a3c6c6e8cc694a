"""ChromaConceptLibrary: primitives, search, stats, composition, Stitch compression + AutoDoc."""

from __future__ import annotations

import json

import pytest

from atlas.core.types import CodeConcept
from atlas.errors import ConfigError, InvalidInputError, LLMResponseError, StoreError
from atlas.infra.llm import ScriptedLLM
from atlas.memory.concepts import (
    ChromaConceptLibrary,
    LLMAutoDocumenter,
    LLMCompositionStrategy,
    StitchCompressionStrategy,
    code_hash,
)
from atlas.memory.primitives import ARCPrimitiveLoader

PROGRAMS = [
    "def solve(grid):\n    g = rotate_90(grid)\n    return [[2 if v == 1 else v for v in row] for row in g]\n",
    "def solve(grid):\n    h = mirror_horizontal(grid)\n    return [[5 if c == 3 else c for c in r] for r in h]\n",
    "def solve(x):\n    y = [[7 if q == 0 else q for q in row] for row in x]\n    return y\n",
]


@pytest.fixture
def library(embedder, chroma, records):
    return ChromaConceptLibrary(
        embedder,
        chroma("concepts"),
        primitive_loader=ARCPrimitiveLoader(),
        compression_strategy=StitchCompressionStrategy(),
        records=records,
    )


def test_primitives_are_loaded_and_searchable(library):
    assert library.count() == len(ARCPrimitiveLoader().load())
    names = [c.name for c in library.search("turn the grid by ninety degrees clockwise", k=3)]
    assert "rotate_90" in names
    assert library.search("fill a connected region with a new color", k=2)[0].name == "flood_fill"


def test_primitive_loading_is_idempotent(library):
    n = library.count()
    assert library.load_primitives(ARCPrimitiveLoader()) == []
    assert library.count() == n


def test_found_concept_code_runs(library):
    concept = library.search("mirror left to right", k=1)[0]
    ns: dict = {}
    exec(concept.code, ns)
    assert ns[concept.name]([[1, 2]]) in ([[2, 1]], [[1, 2]])


def test_add_get_and_duplicate_code(library):
    c = CodeConcept(
        name="double",
        description="double every cell",
        code="def double(g):\n    return [[2 * v for v in r] for r in g]\n",
    )
    cid = library.add(c)
    assert library.get(cid).name == "double"
    same = CodeConcept(
        name="twice",
        description="same code",
        code="def twice(g):\n    return [[2 * v for v in r] for r in g]",
    )
    assert library.add(same) == cid  # same AST up to the function name → the stored one


def test_invalid_concept_is_rejected(library):
    n = library.count()
    with pytest.raises(InvalidInputError, match="parse"):
        library.add(CodeConcept(name="bad", description="broken", code="def (:"))
    assert library.count() == n


def test_usage_statistics_tracking(library):
    cid = library.get_by_name("rotate_90").id
    library.update_stats(cid, True)
    library.update_stats(cid, False)
    library.update_stats(cid, True)
    c = library.get(cid)
    assert (c.usage_count, c.success_count) == (3, 2)
    assert c.success_rate == pytest.approx(2 / 3)
    with pytest.raises(InvalidInputError):
        library.update_stats("no-such-id", True)


def test_stitch_compression_stores_runnable_abstractions(library, traj):
    trajs = [traj(f"recolor task {i}", code=code, domain="arc") for i, code in enumerate(PROGRAMS)]
    trajs.append(traj("failed attempt", success=False, code=PROGRAMS[0]))
    new = library.compress(trajs)
    assert new
    concept = new[0]
    assert concept.metadata["origin"] == "stitch" and concept.metadata["uses"] == 3
    assert concept.metadata["requires"] == []  # the recolor comprehension needs nothing from outside
    assert set(concept.source_trajectory_ids) == {t.id for t in trajs[:3]}
    assert library.get(concept.id) is not None
    ns: dict = {}
    exec(concept.code, ns)
    assert ns[concept.name](1, 2, [[1, 0]]) == [[2, 0]]
    # compressing the same corpus again adds nothing new
    assert library.compress(trajs) == []


def test_compress_ignores_failed_trajectories(library, traj):
    assert library.compress([traj("f", success=False, code=p) for p in PROGRAMS]) == []


async def test_autodoc_names_and_documents_abstractions(embedder, chroma, records, traj):
    llm = ScriptedLLM(
        [
            json.dumps(
                {
                    "name": "recolor_cells",
                    "description": "Replace one color by another in a grid",
                    "signature": "fn_listcomp(old, new, grid)",
                    "usage_guidance": "recoloring",
                }
            )
        ],
        default=json.dumps({"name": "other_fn", "description": "something else"}),
    )
    lib = ChromaConceptLibrary(
        embedder,
        chroma("c"),
        compression_strategy=StitchCompressionStrategy(LLMAutoDocumenter(llm)),
        records=records,
    )
    new = await lib.acompress([traj(f"t{i}", code=c) for i, c in enumerate(PROGRAMS)])
    doc = next(c for c in new if c.name == "recolor_cells")
    assert "def recolor_cells(" in doc.code and doc.signature == "recolor_cells(old, new, grid)"
    assert doc.metadata["auto_name"] == "fn_listcomp"
    assert lib.search("swap a color for another color", k=1)[0].name == "recolor_cells"
    prompt = llm.history[0].messages[-1]["content"]
    assert "fn_listcomp(1, 2, g)" in prompt  # usage examples are shown to the documenter


def test_learn_accumulates_a_corpus_across_stores(library, traj):
    assert library.learn(traj("t0", code=PROGRAMS[0])) == []  # one program: nothing shared yet
    learned = library.learn(traj("t1", code=PROGRAMS[1]))
    assert [c.metadata["uses"] for c in learned] == [2]
    assert library.corpus_size() == 2


def test_failing_compression_strategy_leaves_nothing(embedder, chroma, records, traj):
    class Broken:
        async def compress(self, trajectories):
            raise RuntimeError("compressor bug")

    lib = ChromaConceptLibrary(embedder, chroma("c"), compression_strategy=Broken(), records=records)
    with pytest.raises(RuntimeError):
        lib.learn(traj("t", code=PROGRAMS[0]))
    assert lib.count() == 0 and lib.corpus_size() == 0


def test_failing_vector_store_during_compression_leaves_nothing(embedder, records, failing_vectors, traj):
    lib = ChromaConceptLibrary(
        embedder,
        failing_vectors(fail_after=0),
        compression_strategy=StitchCompressionStrategy(),
        records=records,
    )
    with pytest.raises(StoreError):
        lib.compress([traj(f"t{i}", code=c) for i, c in enumerate(PROGRAMS)])
    assert lib.count() == 0 and records.count(f"{lib.collection_name}_code") == 0


async def test_llm_composition_strategy(library):
    rot, mirror = library.get_by_name("rotate_90"), library.get_by_name("mirror_horizontal")
    reply = {
        "meaningful": True,
        "name": "rotate_then_mirror",
        "description": "rotate clockwise then mirror",
        "code": "def rotate_then_mirror(grid):\n    return mirror_horizontal(rotate_90(grid))\n",
    }
    library.composition_strategy = LLMCompositionStrategy(ScriptedLLM([json.dumps(reply)]))
    composed = await library.acompose([rot.id, mirror.id])
    assert composed.metadata["composed_from"] == [rot.id, mirror.id]
    ns: dict = {}
    exec(composed.code, ns)  # includes the parts, so it runs alone
    assert ns["rotate_then_mirror"]([[1, 2], [3, 4]]) == [[1, 3], [2, 4]]
    assert library.get(composed.id) is not None


async def test_composition_not_meaningful_and_bad_code(library):
    ids = [library.get_by_name("rotate_90").id, library.get_by_name("count_colors").id]
    library.composition_strategy = LLMCompositionStrategy(ScriptedLLM([json.dumps({"meaningful": False})]))
    assert await library.acompose(ids) is None
    bad = json.dumps({"name": "x", "description": "d", "code": "def x(:"})
    library.composition_strategy = LLMCompositionStrategy(ScriptedLLM([bad, bad, bad]))
    with pytest.raises(LLMResponseError, match="parse"):
        await library.acompose(ids)


def test_compose_without_strategy_is_a_config_error(library):
    with pytest.raises(ConfigError):
        library.compose([library.get_by_name("rotate_90").id])


def test_code_hash_ignores_formatting_and_function_name():
    assert code_hash("def a(x):\n    return x+1") == code_hash("def b(x):  # c\n    return x + 1\n")
    assert code_hash("def a(x):\n    return x+1") != code_hash("def a(x):\n    return x+2")
