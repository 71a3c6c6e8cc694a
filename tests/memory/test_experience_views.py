"""Experience search at the defaults: relevance over several views of a task (as written, entity-stripped,
its subtask plan), duplicates collapsed, the floor keeping unrelated tasks out. Real Chroma, the real
local embedder."""

from __future__ import annotations

import numpy as np
import pytest

from atlas.core.types import Task, Trajectory
from atlas.infra.records import RecordStore
from atlas.memory.experience import ChromaExperienceMemory, trajectory_subtasks


@pytest.fixture
def memory(embedder, chroma, records):
    return ChromaExperienceMemory(embedder, chroma("views"), records=records)


def _t(description: str, success: bool = True, subtasks: list | None = None) -> Trajectory:
    return Trajectory(
        task=Task(description=description),
        success=success,
        metadata={"subtasks": subtasks} if subtasks is not None else {},
    )


SHOP = "Order a pack of AA batteries on Amazon with the cheapest shipping"
SHOP_STEPS = ["Search the product", "Add it to the cart", "Check out with the chosen shipping option"]


def test_each_experience_is_stored_under_three_views_without_entities_in_the_stripped_ones(memory):
    eid = memory.store(_t("Bring the key to room_C", subtasks=["Go to room_B", "Pick up the key"]))
    keys = memory._table.records.get(memory._keys_table, eid)
    assert set(keys) == {"t", "g", "p"} and all(len(v) == 384 for v in keys.values())
    stripped = memory.generalizer.generalize_description("Bring the key to room_C")
    assert "key" not in stripped and "room_C" not in stripped
    vec = np.asarray(memory.embedder.embed([stripped])[0])
    assert float(np.asarray(keys["g"]) @ vec) > 0.999
    bare = memory.store(_t("Bring the lamp to room_D"))
    assert set(memory._table.records.get(memory._keys_table, bare)) == {"t", "g"}


def test_relevance_is_the_mean_cosine_over_the_views(memory):
    eid = memory.store(_t(SHOP, subtasks=SHOP_STEPS))
    query = "Buy a phone charger online and have it shipped to my office"
    raw, gen = (np.asarray(v) for v in memory.embedder.embed(memory._query_texts(Task(description=query))))
    keys = memory._table.records.get(memory._keys_table, eid)
    want = np.mean([np.asarray(keys["t"]) @ raw, np.asarray(keys["g"]) @ gen, np.asarray(keys["p"]) @ gen])
    (found,) = memory.search(query)
    assert found.id == eid and found.similarity == pytest.approx(float(want), abs=1e-3)


APPLE = "Put a clean apple in the fridge"
APPLE_STEPS = [
    "Find the object in the room",
    "Clean the object at the sink basin",
    "Put the object in the receptacle",
]


def test_the_subtask_plan_brings_a_sibling_task_that_shares_no_object(embedder, chroma, records):
    with_plan = ChromaExperienceMemory(embedder, chroma("plan"), records=records)
    bare = ChromaExperienceMemory(embedder, chroma("bare"), records=RecordStore(None))
    with_plan.store(_t(APPLE, subtasks=APPLE_STEPS))
    bare.store(_t(APPLE))
    query = "Rinse a lettuce and put it on the table"
    assert [e.task.description for e in with_plan.search(query)] == [APPLE]
    assert bare.search(query) == []  # the task alone is too far from this sibling


def test_siblings_with_other_objects_and_places_find_the_memory_and_unrelated_tasks_get_nothing(memory):
    memory.store(
        _t(
            "Bring the key to room_C",
            subtasks=["Explore the rooms to find the object", "Pick up the object", "Carry it to the room"],
        )
    )
    memory.store(
        _t(
            "Put a clean apple in the fridge",
            subtasks=["Find the object", "Clean it at the sink", "Put it in the receptacle"],
        )
    )
    assert [e.task.description for e in memory.search("Bring the lamp to room_D")][:1] == [
        "Bring the key to room_C"
    ]
    assert [e.task.description for e in memory.search("Put a clean knife on the countertop")][:1] == [
        "Put a clean apple in the fridge"
    ]
    for unrelated in (
        "compile the linux kernel with clang",
        "Write a sonnet about the autumn sea",
        "Estimate my income tax for this year",
    ):
        assert memory.search(unrelated) == [], unrelated


def test_the_same_task_with_the_same_outcome_comes_back_once(memory):
    first = memory.store(_t("Find the key in the kitchen"))
    memory.store(_t("find the key in the kitchen!"))
    failure = memory.store(_t("Find the key in the kitchen", success=False))
    found = memory.search("Find the key in the kitchen", k=4)
    assert len(found) == 2 and {e.success for e in found} == {True, False}
    assert found[0].id == first and failure in {e.id for e in found}


def test_an_experience_stored_before_views_existed_is_scored_on_its_one_vector(memory):
    eid = memory.store(_t("Find the key in the kitchen"))
    memory._table.records.delete(memory._keys_table, eid)
    (found,) = memory.search("Find the key in the kitchen")
    assert found.id == eid and found.similarity > 0.99


def test_prune_removes_the_views_too(memory):
    eid = memory.store(_t("Find the key in the kitchen", success=False))
    assert memory.prune({"min_success_rate": 0.5}) == 1
    assert memory._table.records.get(memory._keys_table, eid) is None


def test_subtasks_are_read_leniently():
    t = _t("x", subtasks=["  a ", {"description": "b"}, {"subtask": "c"}, 3, "", None] + ["d"] * 20)
    assert trajectory_subtasks(t) == ["a", "b", "c", "d", "d", "d", "d", "d", "d"]
    assert trajectory_subtasks(_t("x", subtasks=None)) == []
    assert trajectory_subtasks(Trajectory(task=Task(description="x"), metadata={"subtasks": "oops"})) == []
