"""MemorySystemImpl: concurrent queries, graceful degradation, differential store, persistence, ablations."""

from __future__ import annotations

import asyncio
import json

import pytest

from atlas.core.types import Guideline, MemoryQueryResult, Strategy, Task
from atlas.errors import ConfigError, InvalidInputError, StoreError
from atlas.infra.llm import ScriptedLLM
from atlas.memory import (
    ChromaConceptLibrary,
    ChromaExperienceMemory,
    ChromaStrategyBank,
    LLMRefineStrategy,
    LLMStrategyAbstractor,
    MemorySystemImpl,
    StitchCompressionStrategy,
    build_memory_system,
    format_advice,
)
from atlas.memory.primitives import ARCPrimitiveLoader

STRATEGY_REPLY = json.dumps(
    {
        "abstractable": True,
        "situation": "an object must be carried to a room",
        "approach": "find it, pick it up, walk the shortest path",
        "rationale": "direct",
    }
)
CODE = (
    "def solve(grid):\n    g = rotate_90(grid)\n    return [[2 if v == 1 else v for v in row] for row in g]\n"
)
CODE2 = "def solve(grid):\n    h = mirror_horizontal(grid)\n    return [[5 if c == 3 else c for c in r] for r in h]\n"


class ListGuidelines:
    """A minimal guideline bank (the real one is atlas.memory.guidelines): learns from every trajectory."""

    def __init__(self):
        self.saved = []

    def save_trajectory(self, trajectory):
        self.saved.append(trajectory)
        return [f"g-{len(self.saved)}"]

    def get_guidelines(self, task, k=5, mode=None):
        return [Guideline(category="strategy", content=f"tip from {t.task.description}") for t in self.saved][
            :k
        ]

    async def aget_guidelines(self, task, k=5, mode=None):
        return self.get_guidelines(task, k, mode)


@pytest.fixture
def parts(embedder, chroma, records):
    llm = ScriptedLLM(default=STRATEGY_REPLY)
    return {
        "experience": ChromaExperienceMemory(embedder, chroma("e"), records=records),
        "concepts": ChromaConceptLibrary(
            embedder,
            chroma("c"),
            primitive_loader=ARCPrimitiveLoader(),
            compression_strategy=StitchCompressionStrategy(),
            records=records,
        ),
        "strategies": ChromaStrategyBank(embedder, chroma("s"), LLMStrategyAbstractor(llm), records=records),
        "guidelines": ListGuidelines(),
    }


# --- ablation fixtures (the seed's: experience-only, concepts-only, full) ----------------------------------

ABLATIONS = {
    "experience_only": ("experience",),
    "concepts_only": ("concepts",),
    "strategies_only": ("strategies",),
    "full": ("experience", "concepts", "strategies"),
    "full_with_guidelines": ("experience", "concepts", "strategies", "guidelines"),
}


@pytest.fixture(params=list(ABLATIONS), ids=list(ABLATIONS))
def ablation(request, parts):
    names = ABLATIONS[request.param]
    return names, MemorySystemImpl(**{n: parts[n] for n in names})


def test_ablation_store_then_query(ablation, traj):
    names, system = ablation
    stored = system.store(traj("bring the key to room B", code=CODE))
    system.store(traj("bring the lamp to room C", code=CODE2))
    assert stored["errors"] == {}
    assert ("experience" in stored) == ("experience" in names)
    result = system.query_sync("carry the key to room D", k=3)
    assert result.errors == {}
    assert bool(result.experiences) == ("experience" in names)
    assert bool(result.concepts) == ("concepts" in names)
    assert bool(result.strategies) == ("strategies" in names)
    assert bool(result.guidelines) == ("guidelines" in names)
    assert set(system.components()) == set(names)


def test_empty_system_answers_empty(traj):
    system = MemorySystemImpl()
    assert system.query_sync("anything").is_empty()
    t = traj("x")
    assert system.store(t) == {"trajectory_id": t.id, "success": True, "errors": {}}


# --- store behaviour -------------------------------------------------------------------------------------


def test_success_goes_everywhere_failure_to_experience_and_guidelines(parts, traj):
    system = MemorySystemImpl(**parts)
    ok = system.store(traj("bring the key to room B", code=CODE))
    assert ok["experience"] and ok["strategies"] and ok["guidelines"] == ["g-1"] and ok["concepts"] == []
    ok2 = system.store(traj("bring the book to room A", code=CODE2))
    assert len(ok2["concepts"]) == 1  # the second program gives Stitch a shared pattern
    strategies_before = parts["strategies"].count()
    bad = system.store(traj("bring the lamp to room C", success=False, code=CODE))
    assert bad["experience"] and "strategies" not in bad and "concepts" not in bad
    assert bad["guidelines"] == ["g-3"]
    assert parts["strategies"].count() == strategies_before
    assert parts["concepts"].corpus_size() == 2


def test_invalid_trajectory_raises_and_writes_nothing(parts):
    system = MemorySystemImpl(**parts)
    with pytest.raises(InvalidInputError, match="steps"):
        system.store({"task": {"description": "x"}, "steps": "not a list"})
    assert (
        parts["experience"].count() == 0
        and parts["strategies"].count() == 0
        and parts["guidelines"].saved == []
    )


def test_component_error_is_recorded_and_the_rest_still_stores(parts, embedder, chroma, records, traj):
    garbage = ScriptedLLM(default="this is not json")
    parts["strategies"] = ChromaStrategyBank(
        embedder, chroma("s2"), LLMStrategyAbstractor(garbage), records=records
    )
    system = MemorySystemImpl(**parts)
    result = system.store(traj("bring the key to room B"))
    assert "LLMResponseError" in result["errors"]["strategies"]
    assert result["strategies"] == [] and parts["strategies"].count() == 0
    assert parts["experience"].get(result["experience"]) is not None
    strict = MemorySystemImpl(**parts, raise_errors=True)
    with pytest.raises(StoreError, match="strategies"):
        strict.store(traj("again"))


# --- query behaviour ---------------------------------------------------------------------------------------


class _Gate:
    """Every component waits until all have started: passes only if the queries run concurrently."""

    def __init__(self, n):
        self.n, self.started, self.event = n, 0, asyncio.Event()

    async def enter(self):
        self.started += 1
        if self.started == self.n:
            self.event.set()
        await self.event.wait()


class GatedExperience:
    def __init__(self, gate):
        self.gate = gate

    async def asearch(self, task, k=4):
        await self.gate.enter()
        return []


class GatedConcepts:
    def __init__(self, gate):
        self.gate = gate

    async def asearch(self, query, k=5):
        await self.gate.enter()
        return []


class GatedStrategies:
    def __init__(self, gate):
        self.gate = gate

    async def aread(self, task, k=5):
        await self.gate.enter()
        return [Strategy(situation="s", approach="a")]


async def test_parallel_async_queries_via_gather():
    gate = _Gate(3)
    system = MemorySystemImpl(GatedExperience(gate), GatedConcepts(gate), GatedStrategies(gate))
    result = await asyncio.wait_for(system.query(Task(description="t")), 30)  # deadlock guard, not timing
    assert gate.started == 3 and len(result.strategies) == 1


class BrokenConcepts:
    async def asearch(self, query, k=5):
        raise RuntimeError("index corrupted")


async def test_failing_component_degrades_gracefully(parts, traj, caplog):
    parts["concepts"] = BrokenConcepts()
    system = MemorySystemImpl(**parts)
    await system.astore(traj("bring the key to room B"))
    result = await system.query("bring the key to room C")
    assert result.concepts == [] and "RuntimeError: index corrupted" in result.errors["concepts"]
    assert result.experiences and result.strategies and result.guidelines
    assert any("concepts" in r.message and "failed" in r.message for r in caplog.records)


async def test_refine_failure_returns_unrefined_with_error(embedder, chroma, records, traj):
    exp = ChromaExperienceMemory(
        embedder, chroma("e"), refine_strategy=LLMRefineStrategy(ScriptedLLM(default="nah")), records=records
    )
    system = MemorySystemImpl(experience=exp)
    system.store(traj("bring the key to room B"))
    result = await system.query("bring the key")
    assert len(result.experiences) == 1 and "experience.refine" in result.errors


async def test_sync_and_async_entry_points_agree(parts, traj):
    system = MemorySystemImpl(experience=parts["experience"], concepts=parts["concepts"])
    a = await system.astore(traj("bring the key to room B"))
    b = system.store(traj("bring the gem to room A", success=False))
    assert a["experience"] and b["experience"]
    r1 = await system.query("bring the key to room D", k=2)
    r2 = system.query_sync("bring the key to room D", k=2)
    assert [e.id for e in r1.experiences] == [e.id for e in r2.experiences]
    assert [c.id for c in r1.concepts] == [c.id for c in r2.concepts]


def test_record_outcome_updates_usage_statistics(parts, traj):
    system = MemorySystemImpl(**parts)
    system.store(traj("bring the key to room B"))
    result = system.query_sync("bring the key", k=2)
    system.record_outcome(result, success=True)
    assert parts["strategies"].get(result.strategies[0].id).usage_count == 1
    assert parts["concepts"].get(result.concepts[0].id).usage_count == 1
    assert parts["experience"].get(result.experiences[0].id).metadata["uses"] == 1


def test_format_advice_renders_every_section(parts, traj):
    system = MemorySystemImpl(**parts)
    system.store(traj("bring the key to room B"))
    system.store(traj("bring the cup to room A", success=False))
    text = format_advice(system.query_sync("bring the key to room C", k=2))
    for header in (
        "Guidelines from past runs:",
        "Strategies that worked",
        "Similar past tasks:",
        "Reusable code concepts:",
    ):
        assert header in text
    assert "FAILED" in text and 'move_to(room="room_B")' in text
    assert format_advice(MemoryQueryResult()) == ""


# --- factory and persistence -----------------------------------------------------------------------------


def _routing_llm():
    """Answers the strategy abstractor and the AutoDoc documenter, told apart by their system prompt."""

    def reply(messages, **kwargs):
        if "document a reusable Python function" in messages[0]["content"]:
            return json.dumps({"name": "recolor", "description": "replace a color in a grid"})
        return STRATEGY_REPLY

    return ScriptedLLM(reply)


def test_build_memory_system_persists_across_reopen(tmp_path, embedder, traj):
    llm = _routing_llm()
    with build_memory_system(tmp_path / "mem", llm=llm, embedder=embedder, primitives="arc") as system:
        first = system.store(traj("bring the key to room B", code=CODE))
        second = system.store(traj("bring the book to room A", code=CODE2))
        counts = system.stats()
    with build_memory_system(tmp_path / "mem", llm=llm, embedder=embedder, primitives="arc") as reopened:
        assert reopened.stats() == counts
        assert reopened.experience_memory.get(first["experience"]) is not None
        assert reopened.strategy_bank.get(second["strategies"][0]) is not None
        learned = reopened.concept_library.get(second["concepts"][0])
        assert learned.metadata["origin"] == "stitch" and learned.name == "recolor"
        result = reopened.query_sync("carry the key to room C", k=2)
        assert result.experiences[0].id == first["experience"] and result.strategies and result.concepts


def test_build_refuses_a_different_embedder(tmp_path, embedder):
    from atlas.infra.embeddings import NGramEmbedder

    build_memory_system(tmp_path / "m", embedder=embedder).close()
    with pytest.raises(ConfigError, match="embedder"):
        build_memory_system(tmp_path / "m", embedder=NGramEmbedder())


def test_build_validates_components(embedder):
    with pytest.raises(ConfigError, match="llm"):
        build_memory_system(None, embedder=embedder, components=("strategies",))
    with pytest.raises(ConfigError, match="unknown"):
        build_memory_system(None, embedder=embedder, components=("episodic",))
    in_memory = build_memory_system(None, embedder=embedder)
    assert in_memory.components() == ["experience", "concepts"]


def test_with_the_real_guideline_bank(embedder, chroma, records, traj):
    """The guideline bank of atlas.memory.guidelines plugs in as the fourth component and learns from failures."""
    from atlas.memory.guidelines import GuidelineBank
    from guideline_doubles import auto_responder

    bank = GuidelineBank(llm=ScriptedLLM(auto_responder()), embedder=embedder)
    system = MemorySystemImpl(ChromaExperienceMemory(embedder, chroma("e"), records=records), guidelines=bank)
    ok = system.store(traj("bring the key to room B"))
    bad = system.store(traj("bring the lamp to room C", success=False))
    assert ok["errors"] == {} and ok["guidelines"] and bad["guidelines"]
    result = system.query_sync("bring the key to room B", k=3)
    assert result.errors == {} and result.guidelines and result.experiences
    assert "Guidelines from past runs:" in format_advice(result)
    assert system.stats()["guidelines"] >= 1


def test_build_memory_system_with_an_llm_wires_composition(embedder):
    from atlas.memory.concepts import LLMCompositionStrategy

    reply = {
        "meaningful": True,
        "name": "rotate_then_mirror",
        "description": "rotate a grid a quarter turn, then mirror it",
        "code": "def rotate_then_mirror(grid):\n    return mirror_horizontal(rotate_90(grid))\n",
        "signature": "rotate_then_mirror(grid)",
    }
    llm = ScriptedLLM([json.dumps(reply)])
    with build_memory_system(None, llm=llm, embedder=embedder, primitives="arc") as system:
        library = system.concept_library
        assert isinstance(library.composition_strategy, LLMCompositionStrategy)
        parts = [library.get_by_name("rotate_90").id, library.get_by_name("mirror_horizontal").id]
        composed = library.compose(parts)
        assert composed is not None and library.get(composed.id).metadata["composed_from"] == parts
        ns: dict = {}
        exec(composed.code, ns)
        assert ns["rotate_then_mirror"]([[1, 2], [3, 4]]) == ns["mirror_horizontal"](
            ns["rotate_90"]([[1, 2], [3, 4]])
        )
    with build_memory_system(None, embedder=embedder) as no_llm:
        assert no_llm.concept_library.composition_strategy is None


def test_experience_gets_the_subtasks_the_guideline_bank_found(embedder, chroma, records, traj):
    from atlas.memory.guidelines import GuidelineBank
    from guideline_doubles import auto_responder

    bank = GuidelineBank(llm=ScriptedLLM(auto_responder(segments=2)), embedder=embedder)
    experience = ChromaExperienceMemory(embedder, chroma("e"), records=records)
    system = MemorySystemImpl(experience, guidelines=bank)
    out = system.store(traj("bring the key to room B"))
    assert out["errors"] == {} and out["guidelines"]
    stored = experience.get(out["experience"])
    assert stored is not None
    subtasks = stored.metadata.get("subtasks")
    tip_subtasks = {g.subtask for g in bank.store.all()}
    assert subtasks and len(subtasks) == 2 and set(subtasks) <= tip_subtasks
    # a query phrased like one of the subtasks finds the trajectory through its subtask view
    found = system.query_sync(subtasks[1], k=1)
    assert found.experiences and found.experiences[0].id == stored.id

    given = traj("bring the lamp to room C")
    given.metadata["subtasks"] = ["walk to the lamp"]
    kept = experience.get(system.store(given)["experience"])
    assert kept is not None and kept.metadata["subtasks"] == ["walk to the lamp"]  # the caller's own win


def test_experience_is_stored_when_the_guideline_bank_fails(embedder, chroma, records, traj):
    from atlas.memory.guidelines import GuidelineBank

    bank = GuidelineBank(llm=ScriptedLLM(default="not json"), embedder=embedder)
    experience = ChromaExperienceMemory(embedder, chroma("e"), records=records)
    out = MemorySystemImpl(experience, guidelines=bank).store(traj("bring the key to room B"))
    assert "guidelines" in out["errors"] and out["guidelines"] == []
    stored = experience.get(out["experience"])
    assert stored is not None and not stored.metadata.get("subtasks")
