"""ChromaExperienceMemory with real Chroma and the real local embedder; LLM strategies via ScriptedLLM."""

from __future__ import annotations

import json
import threading
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from atlas.core.types import Experience, Task
from atlas.errors import InvalidInputError, LLMResponseError, StoreError
from atlas.infra.llm import ScriptedLLM
from atlas.infra.records import RecordStore
from atlas.infra.vector_index import ChromaVectorStore
from atlas.memory.experience import (
    ChromaExperienceMemory,
    LLMRefineStrategy,
    LLMSummarizingExtractor,
    PassthroughRefineStrategy,
    RefineDecision,
    apply_refine_decision,
)


@pytest.fixture
def memory(embedder, chroma, records):
    return ChromaExperienceMemory(embedder, chroma("exp"), records=records)


def test_store_assigns_uuid_and_get_returns_experience(memory, traj):
    t = traj("find the key in the kitchen")
    eid = memory.store(t)
    assert uuid.UUID(eid).version == 4
    exp = memory.get(eid)
    assert exp.trajectory_id == t.id and exp.task.description == t.task.description
    assert exp.success and exp.metadata["outcome"] == "success"
    assert [s.action for s in exp.steps] == [s.action for s in t.steps]
    assert memory.get(str(uuid.uuid4())) is None


def test_failures_are_stored_with_outcome_metadata(memory, traj):
    eid = memory.store(traj("bring the lamp to room C", success=False))
    exp = memory.get(eid)
    assert not exp.success and exp.metadata["outcome"] == "failure"


def test_search_ranks_by_relevance_with_outcome_as_a_weight(memory, traj):
    close_failure = memory.store(traj("find the key in the kitchen", success=False))
    related_success = memory.store(traj("locate the key in the hallway", success=True))
    memory.store(traj("bake a chocolate cake", success=True))  # unrelated: below the floor
    found = memory.search(Task(description="find the key in the kitchen"), k=3)
    assert [e.id for e in found] == [close_failure, related_success]
    assert found[0].similarity > 0.9  # similarity stays the raw cosine; the weight only ranks


def test_a_failure_ranks_at_failure_weight_of_its_similarity(embedder, chroma, records, traj):
    full = ChromaExperienceMemory(embedder, chroma("a"), records=records, failure_weight=1.0)
    harsh = ChromaExperienceMemory(embedder, chroma("b"), records=RecordStore(None), failure_weight=0.3)
    for mem in (full, harsh):
        mem.store(traj("find the key in the kitchen", success=False))
        mem.store(traj("locate the key in the hallway", success=True))
    assert not full.search("find the key in the kitchen", k=2)[0].success
    assert harsh.search("find the key in the kitchen", k=2)[0].success
    with pytest.raises(InvalidInputError, match="failure_weight"):
        ChromaExperienceMemory(embedder, chroma("c"), records=records, failure_weight=0.0)


def test_unrelated_task_gets_nothing(memory, traj):
    memory.store(traj("Bring the key to room_C", domain="graphworld"))
    memory.store(traj("Bring the book to room_F", success=False, domain="graphworld"))
    assert memory.search("compile the linux kernel with clang") == []
    sibling = memory.search("Bring the lamp to room_D")
    assert len(sibling) == 2 and sibling[0].task.description == "Bring the key to room_C"


def test_floor_defaults_to_the_calibrated_value_of_the_embedder(embedder, chroma, records):
    from atlas.infra.embeddings import NGramEmbedder
    from atlas.memory.relevance import FLOORS

    assert (
        ChromaExperienceMemory(embedder, chroma("a"), records=records).min_similarity
        == (FLOORS["minilm"]["experience"])
    )
    ngram = ChromaExperienceMemory(NGramEmbedder(), chroma("b"), records=RecordStore(None))
    assert ngram.min_similarity == FLOORS["ngram"]["experience"]
    explicit = ChromaExperienceMemory(embedder, chroma("c"), records=records, min_similarity=-1.0)
    assert explicit.min_similarity == -1.0


def test_search_default_k_is_four(embedder, chroma, records, traj):
    mem = ChromaExperienceMemory(embedder, chroma("exp"), records=records, min_similarity=-1.0)
    for i in range(3):
        mem.store(traj(f"open the door number {i}", success=False))
    for i in range(3):
        mem.store(traj(f"open the window number {i}", success=True))
    assert len(mem.search("open the door")) == 4


async def test_async_search_matches_sync(memory, traj):
    await memory.astore(traj("water the plants"))
    memory.store(traj("feed the cat", success=False))
    sync = [e.id for e in memory.search("water the garden", k=2)]
    asy = [e.id for e in await memory.asearch("water the garden", k=2)]
    assert sync == asy


def test_configurable_extractor_uses_llm_summary(embedder, chroma, records, traj):
    llm = ScriptedLLM(["Navigated to the kitchen and picked up the key; succeeded."])
    mem = ChromaExperienceMemory(
        embedder, chroma("exp"), extractor=LLMSummarizingExtractor(llm), records=records
    )
    eid = mem.store(traj("find the key"))
    assert mem.get(eid).content.startswith("Navigated to the kitchen")
    prompt = llm.history[0].messages[-1]["content"]
    assert "find the key" in prompt and "Outcome: success" in prompt


def test_invalid_trajectory_is_rejected_and_nothing_written(memory):
    with pytest.raises(InvalidInputError, match="task"):
        memory.store({"steps": []})
    with pytest.raises(InvalidInputError, match="steps"):
        memory.store({"task": {"description": "x"}, "steps": [{"observation": "no action"}]})
    with pytest.raises(InvalidInputError, match="description"):
        memory.store({"task": {"description": "   "}})
    assert memory.count() == 0


def test_raising_extractor_leaves_no_record(embedder, chroma, records, traj):
    class Broken:
        def extract(self, trajectory):
            raise RuntimeError("extractor bug")

    vectors = chroma("exp")
    mem = ChromaExperienceMemory(embedder, vectors, extractor=Broken(), records=records)
    with pytest.raises(RuntimeError):
        mem.store(traj("x"))
    assert mem.count() == 0 and vectors.count_sync() == 0


def test_failing_vector_store_leaves_no_record(embedder, records, failing_vectors, traj):
    mem = ChromaExperienceMemory(embedder, failing_vectors(fail_after=1), records=records)
    mem.store(traj("first one works"))
    with pytest.raises(StoreError):
        mem.store(traj("second one fails"))
    assert mem.count() == 1
    assert [e.task.description for e in mem.all()] == ["first one works"]


@pytest.mark.slow
def test_concurrent_stores_8_threads_x_100(embedder, chroma, records, traj):
    """Through MemorySystemImpl.store (the path agents use): every store lands exactly once."""
    from atlas.memory.concepts import ChromaConceptLibrary, StitchCompressionStrategy
    from atlas.memory.system import MemorySystemImpl

    mem = ChromaExperienceMemory(embedder, chroma("exp"), records=records)
    lib = ChromaConceptLibrary(
        embedder, chroma("c"), compression_strategy=StitchCompressionStrategy(), records=records
    )
    system = MemorySystemImpl(experience=mem, concepts=lib)
    ids: list[list[str]] = [[] for _ in range(8)]
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        try:
            for i in range(100):
                result = system.store(traj(f"task {n}-{i}: fetch item {i % 7}", success=i % 3 != 0))
                assert result["errors"] == {}
                ids[n].append(result["experience"])
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    flat = [i for part in ids for i in part]
    assert len(flat) == 800 and len(set(flat)) == 800
    assert mem.count() == 800 and mem._table.vectors.count_sync() == 800
    assert all(mem.get(i) is not None for i in flat)
    descriptions = [e.task.description for e in mem.all()]
    assert len(set(descriptions)) == 800
    found = mem.search("task 3-43: fetch item 1", k=1)  # a success (43 % 3 != 0)
    assert found[0].task.description == "task 3-43: fetch item 1"


async def test_concurrent_async_stores_in_one_loop(memory, traj):
    import asyncio

    ids = await asyncio.gather(*(memory.astore(traj(f"async task {i}")) for i in range(40)))
    assert len(set(ids)) == 40 and memory.count() == 40


def test_persistent_reopen_restores_everything(embedder, tmp_path, traj):
    def open_memory():
        return ChromaExperienceMemory(
            embedder,
            ChromaVectorStore.persistent(tmp_path / "chroma", "atlas_experiences"),
            records=RecordStore(tmp_path / "records.sqlite"),
        )

    first = open_memory()
    eid = first.store(traj("find the key in the kitchen"))
    first._table.records.close()
    second = open_memory()
    assert second.get(eid).task.description == "find the key in the kitchen"
    assert [e.id for e in second.search("where is the key", k=1)] == [eid]


# --- refinement ------------------------------------------------------------------------------------


def _exps(n: int, success=True) -> list[Experience]:
    return [
        Experience(task=Task(description=f"task {i}"), content=f"memory {i}", success=success)
        for i in range(n)
    ]


def test_passthrough_refine_is_identity(memory):
    exps = _exps(3)
    assert memory.refine(exps) == exps
    assert isinstance(memory.refine_strategy, PassthroughRefineStrategy)


def test_refine_decision_applies_drop_merge_order_and_ignores_invented_ids():
    a, b, c, d = _exps(4)
    decision = RefineDecision(
        drop=[d.id, "invented-id"],
        merge=[{"ids": [b.id, c.id, "ghost"], "content": "b and c say the same"}],
        order=[b.id, "nope", a.id],
    )
    out = apply_refine_decision([a, b, c, d], decision)
    assert len(out) == 2
    assert out[0].content == "b and c say the same" and out[0].metadata["merged_from"] == [b.id, c.id]
    assert out[1] is a


def test_refine_decision_keep_conflicts_resolve_towards_keeping():
    a, b, c = _exps(3)
    out = apply_refine_decision([a, b, c], RefineDecision(keep=[a.id, b.id], drop=[a.id]))
    assert out == [a, b]
    # dropping everything keeps the best one
    assert apply_refine_decision([a, b], RefineDecision(drop=[a.id, b.id])) == [a]


async def test_llm_refine_strategy_applies_the_models_decision():
    a, b, c = _exps(3)
    llm = ScriptedLLM([json.dumps({"keep": None, "drop": [b.id], "merge": [], "order": [c.id, a.id]})])
    out = await LLMRefineStrategy(llm).refine([a, b, c], Task(description="do it"))
    assert out == [c, a]
    assert a.id in llm.history[0].messages[-1]["content"] or a.id in str(llm.history[0].messages)


async def test_llm_refine_repairs_then_fails_clearly_on_non_json():
    a, b = _exps(2)
    fenced = "Sure! ```json\n" + json.dumps({"drop": [b.id]}) + "\n```"
    assert await LLMRefineStrategy(ScriptedLLM([fenced])).refine([a, b], None) == [a]
    llm = ScriptedLLM(["I think they are all great", "still no json", "nope"])
    with pytest.raises(LLMResponseError):
        await LLMRefineStrategy(llm, retries=2).refine([a, b], None)
    assert len(llm.history) == 3


# --- pruning -----------------------------------------------------------------------------------------


def test_prune_by_age_and_success_rate(memory, traj):
    old = traj("ancient task about keys")
    old.created_at = datetime.now(UTC) - timedelta(days=40)
    old_id = memory.store(old)
    fail_id = memory.store(traj("a failed task about doors", success=False))
    ok_id = memory.store(traj("a good task about lamps"))
    memory.update_stats(ok_id, True)
    assert memory.prune({"max_age_days": 30}) == 1
    assert memory.get(old_id) is None
    assert memory.prune({"min_success_rate": 0.5}) == 1
    assert memory.get(fail_id) is None and memory.get(ok_id) is not None
    memory.update_stats(ok_id, False)
    memory.update_stats(ok_id, False)  # reuse record now 1/3
    assert memory.prune({"min_success_rate": 0.5}) == 1
    assert memory.count() == 0


def test_prune_keep_diverse_spares_the_only_memory_of_its_kind(memory, traj):
    memory.store(traj("pick up the red key", success=True))
    dup = memory.store(traj("pick up the red key", success=False))
    unique = memory.store(traj("compile the rust project", success=False))
    removed = memory.prune({"min_success_rate": 0.5, "keep_diverse": True})
    assert removed == 1
    assert memory.get(dup) is None and memory.get(unique) is not None


def test_prune_rejects_unknown_criteria(memory):
    with pytest.raises(InvalidInputError, match="unknown prune criteria"):
        memory.prune({"max_size": 3})
