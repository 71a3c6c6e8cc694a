"""One test per "Success Criteria" checkbox of the ATLAS seed (Phase 3: Memory Implementations)."""

from __future__ import annotations

import asyncio
import json
import uuid

import pytest

from atlas.core.types import CodeConcept, Experience, Strategy, Task
from atlas.infra.llm import ScriptedLLM
from atlas.memory import (
    ARCPrimitiveLoader,
    BayesianUpdater,
    ChromaConceptLibrary,
    ChromaExperienceMemory,
    ChromaStrategyBank,
    EMASuccessUpdater,
    LLMAutoDocumenter,
    LLMCompositionStrategy,
    LLMRefineStrategy,
    LLMStrategyAbstractor,
    LLMSummarizingExtractor,
    MemorySystemImpl,
    PassthroughRefineStrategy,
    SimpleAverageUpdater,
    SimpleExperienceExtractor,
    StitchCompressionStrategy,
    SWEPrimitiveLoader,
)
from atlas.protocols import memory as protocols

STRATEGY = json.dumps(
    {
        "abstractable": True,
        "situation": "an item must be delivered to a place",
        "approach": "locate, pick up, deliver",
        "rationale": "simple",
    }
)
CODE_A = (
    "def solve(grid):\n    g = rotate_90(grid)\n    return [[2 if v == 1 else v for v in row] for row in g]\n"
)
CODE_B = "def solve(grid):\n    h = mirror_horizontal(grid)\n    return [[5 if c == 3 else c for c in r] for r in h]\n"


@pytest.fixture
def exp_memory(embedder, chroma, records):
    return ChromaExperienceMemory(embedder, chroma("e"), records=records)


@pytest.fixture
def concept_library(embedder, chroma, records):
    return ChromaConceptLibrary(
        embedder,
        chroma("c"),
        primitive_loader=ARCPrimitiveLoader(),
        compression_strategy=StitchCompressionStrategy(),
        records=records,
    )


@pytest.fixture
def strategy_bank(embedder, chroma, records):
    return ChromaStrategyBank(
        embedder, chroma("s"), LLMStrategyAbstractor(ScriptedLLM(default=STRATEGY)), records=records
    )


# --- ExperienceMemory ---------------------------------------------------------------------------------


def test_experience_memory_stores_and_retrieves_experiences(exp_memory, traj):
    eid = exp_memory.store(traj("deliver the parcel to the office"))
    found = exp_memory.search(Task(description="deliver a parcel to an office"))
    assert [e.id for e in found] == [eid] and exp_memory.get(eid).id == eid


def test_uuid_generation_for_experience_ids(exp_memory, traj):
    ids = {exp_memory.store(traj(f"task {i}")) for i in range(5)}
    assert len(ids) == 5 and all(uuid.UUID(i).version == 4 for i in ids)


def test_configurable_extraction_strategy(embedder, chroma, records, traj):
    class StepsExtractor:
        def extract(self, trajectory):
            return " ; ".join(s.action for s in trajectory.steps)

    mem = ChromaExperienceMemory(embedder, chroma("e"), extractor=StepsExtractor(), records=records)
    eid = mem.store(traj("x", steps=["open(door)", "walk(north)"]))
    assert mem.get(eid).content == "open(door) ; walk(north)"
    assert isinstance(LLMSummarizingExtractor(ScriptedLLM()), protocols.ExperienceExtractor)
    assert isinstance(SimpleExperienceExtractor(), protocols.ExperienceExtractor)


async def test_pluggable_refine_strategy(embedder, chroma, records):
    exps = [Experience(task=Task(description=f"t{i}"), content=f"c{i}", success=True) for i in range(3)]
    reverse = ScriptedLLM([json.dumps({"order": [e.id for e in reversed(exps)]})])
    mem = ChromaExperienceMemory(
        embedder, chroma("e"), refine_strategy=LLMRefineStrategy(reverse), records=records
    )
    assert await mem.arefine(exps, Task(description="t")) == list(reversed(exps))
    assert isinstance(PassthroughRefineStrategy(), protocols.RefineStrategy)


def test_success_failure_differentiation_in_storage(exp_memory, traj):
    ok = exp_memory.get(exp_memory.store(traj("same task", success=True)))
    bad = exp_memory.get(exp_memory.store(traj("same task", success=False)))
    assert (ok.success, ok.metadata["outcome"]) == (True, "success")
    assert (bad.success, bad.metadata["outcome"]) == (False, "failure")
    assert [e.success for e in exp_memory.search("same task", k=2)] == [True, False]


# --- ConceptLibrary ------------------------------------------------------------------------------------


def test_concept_library_indexes_and_searches_code_patterns(concept_library):
    cid = concept_library.add(
        CodeConcept(
            name="border",
            description="draw a frame around the edge of the picture",
            code="def border(g, c):\n    return [[c if r in (0, len(g) - 1) or k in (0, len(row) - 1) else v for k, v in enumerate(row)] for r, row in enumerate(g)]\n",
        )
    )
    assert concept_library.search("put a frame along the edges of the image", k=1)[0].id == cid


def test_primitive_loading_by_domain(embedder, chroma, records):
    lib = ChromaConceptLibrary(embedder, chroma("c"), primitive_loader=SWEPrimitiveLoader(), records=records)
    assert {c.domain for c in lib.all()} == {"swe"} and lib.get_by_name("read_file").is_primitive
    assert lib.search("look for a regex across the repository", k=1)[0].name == "search_codebase"


async def test_pluggable_composition_strategy(concept_library):
    class Pipe:
        async def compose(self, concepts):
            names = [c.name for c in concepts]
            body = "x"
            for n in names:
                body = f"{n}({body})"
            return CodeConcept(
                name="pipe", description="apply in order", code=f"def pipe(x):\n    return {body}\n"
            )

    concept_library.composition_strategy = Pipe()
    ids = [concept_library.get_by_name(n).id for n in ("rotate_90", "rotate_90")]
    assert (await concept_library.acompose(ids)).name == "pipe"
    assert isinstance(LLMCompositionStrategy(ScriptedLLM()), protocols.CompositionStrategy)


async def test_pluggable_compression_strategy_stitch_and_autodoc(embedder, chroma, records, traj):
    doc = ScriptedLLM(
        default=json.dumps({"name": "recolor_grid", "description": "swap one color for another"})
    )
    stitch = StitchCompressionStrategy(LLMAutoDocumenter(doc))
    assert isinstance(stitch, protocols.CompressionStrategy)
    assert isinstance(LLMAutoDocumenter(doc), protocols.ConceptDocumenter)
    lib = ChromaConceptLibrary(embedder, chroma("c"), compression_strategy=stitch, records=records)
    (concept,) = await lib.acompress([traj("a", code=CODE_A), traj("b", code=CODE_B)])
    assert concept.name == "recolor_grid" and concept.metadata["origin"] == "stitch"
    ns: dict = {}
    exec(concept.code, ns)
    assert ns["recolor_grid"](1, 9, [[1, 2]]) == [[9, 2]]


def test_usage_statistics_tracking(concept_library):
    cid = concept_library.get_by_name("flood_fill").id
    concept_library.update_stats(cid, True)
    concept_library.update_stats(cid, False)
    c = concept_library.get(cid)
    assert (c.usage_count, c.success_count, c.success_rate) == (2, 1, 0.5)


# --- StrategyBank --------------------------------------------------------------------------------------


def test_strategy_bank_manages_abstract_strategies(strategy_bank, traj):
    s = strategy_bank.write(traj("deliver the letter to the post office"))
    assert strategy_bank.read("deliver a box to the warehouse", k=1)[0].id == s.id
    strategy_bank.update_stats(s.id, True)
    assert strategy_bank.get(s.id).usage_count == 1


def test_only_abstracts_successful_trajectories(strategy_bank, traj):
    assert strategy_bank.write(traj("deliver it", success=False)) is None
    assert strategy_bank.count() == 0


@pytest.mark.parametrize(
    "updater",
    [EMASuccessUpdater(), SimpleAverageUpdater(), BayesianUpdater()],
    ids=["ema", "average", "bayesian"],
)
def test_configurable_success_rate_update_strategy(embedder, chroma, records, traj, updater):
    bank = ChromaStrategyBank(
        embedder,
        chroma("s"),
        LLMStrategyAbstractor(ScriptedLLM(default=STRATEGY)),
        success_updater=updater,
        records=records,
    )
    sid = bank.write(traj("deliver it")).id
    bank.update_stats(sid, True)
    expected = updater.update(Strategy(situation="s", approach="a").success_rate, 0, True)[0]
    assert bank.get(sid).success_rate == pytest.approx(expected)
    assert isinstance(updater, protocols.SuccessRateUpdater)


def test_pluggable_abstraction_strategy(embedder, chroma, records, traj):
    class Echo:
        async def abstract(self, trajectory):
            return Strategy(situation=trajectory.task.description, approach="do the same again")

    bank = ChromaStrategyBank(embedder, chroma("s"), Echo(), records=records)
    assert bank.write(traj("mop the floor")).approach == "do the same again"


# --- MemorySystem --------------------------------------------------------------------------------------


def test_memory_system_combines_all_three(exp_memory, concept_library, strategy_bank, traj):
    system = MemorySystemImpl(exp_memory, concept_library, strategy_bank)
    system.store(traj("deliver the parcel to the office"))
    result = system.query_sync("deliver a parcel", k=2)
    assert result.experiences and result.concepts and result.strategies and not result.errors


async def test_parallel_async_queries_via_asyncio_gather():
    started: list[str] = []
    all_started = asyncio.Event()

    class Part:
        def __init__(self, name):
            self.name = name

        async def _go(self):
            started.append(self.name)
            if len(started) == 3:
                all_started.set()
            await all_started.wait()  # only returns if the other queries are in flight too
            return []

        async def asearch(self, *_a, **_k):
            return await self._go()

        async def aread(self, *_a, **_k):
            return await self._go()

    system = MemorySystemImpl(Part("e"), Part("c"), Part("s"))
    await asyncio.wait_for(system.query("t"), 30)
    assert sorted(started) == ["c", "e", "s"]


def test_graceful_degradation_when_components_missing(exp_memory, traj):
    system = MemorySystemImpl(experience=exp_memory)
    system.store(traj("deliver it"))
    result = system.query_sync("deliver it")
    assert result.experiences and result.concepts == [] and result.strategies == [] and result.errors == {}


def test_differential_store_behavior_for_success_failure(exp_memory, concept_library, strategy_bank, traj):
    system = MemorySystemImpl(exp_memory, concept_library, strategy_bank)
    ok = system.store(traj("deliver A", code=CODE_A))
    bad = system.store(traj("deliver B", success=False, code=CODE_B))
    assert set(ok) >= {"experience", "concepts", "strategies"}
    assert "experience" in bad and "concepts" not in bad and "strategies" not in bad
    assert concept_library.corpus_size() == 1 and strategy_bank.count() == 1 and exp_memory.count() == 2


def test_each_component_works_in_isolation(exp_memory, concept_library, strategy_bank, traj):
    t = traj("deliver the parcel", code=CODE_A)
    assert exp_memory.search("deliver", k=1) == [] and exp_memory.get(exp_memory.store(t))
    assert concept_library.search("rotate", k=1)
    assert strategy_bank.write(t) is not None and strategy_bank.read("deliver", k=1)
    for component, proto in [
        (exp_memory, protocols.ExperienceMemory),
        (concept_library, protocols.ConceptLibrary),
        (strategy_bank, protocols.StrategyBank),
    ]:
        assert isinstance(component, proto)


def test_all_strategies_are_swappable_for_experimentation(embedder, chroma, records):
    llm = ScriptedLLM()
    swaps = {
        protocols.ExperienceExtractor: [SimpleExperienceExtractor(), LLMSummarizingExtractor(llm)],
        protocols.RefineStrategy: [PassthroughRefineStrategy(), LLMRefineStrategy(llm)],
        protocols.CompositionStrategy: [LLMCompositionStrategy(llm)],
        protocols.CompressionStrategy: [
            StitchCompressionStrategy(),
            StitchCompressionStrategy(LLMAutoDocumenter(llm)),
        ],
        protocols.ConceptDocumenter: [LLMAutoDocumenter(llm)],
        protocols.PrimitiveLoader: [ARCPrimitiveLoader(), SWEPrimitiveLoader()],
        protocols.StrategyAbstractor: [LLMStrategyAbstractor(llm)],
        protocols.SuccessRateUpdater: [EMASuccessUpdater(), SimpleAverageUpdater(), BayesianUpdater()],
    }
    for proto, impls in swaps.items():
        for impl in impls:
            assert isinstance(impl, proto), (proto, impl)
    # and every constructor takes them as arguments
    mem = ChromaExperienceMemory(
        embedder,
        chroma("e"),
        extractor=swaps[protocols.ExperienceExtractor][1],
        refine_strategy=swaps[protocols.RefineStrategy][1],
        records=records,
    )
    assert isinstance(mem.extractor, LLMSummarizingExtractor) and isinstance(
        mem.refine_strategy, LLMRefineStrategy
    )
