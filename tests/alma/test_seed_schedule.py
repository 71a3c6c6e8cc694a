"""When a genome search plays the hand-built designs that learn with the model (``costly_seeds_due``):
without a time cap once the search found a design or half-way through its generations; under
``--max-minutes`` in the time the search cannot use, after its last generation."""

from __future__ import annotations

from typing import Any

import pytest
from alma_doubles import debug_policy, task_policy

import atlas.alma
from atlas.alma.search import loop
from atlas.alma.search.seeds import costly_seeds_due
from atlas.alma.state.archive import Archive, ArchiveEntry
from atlas.envs.graphworld.env import GraphWorldEnv, GraphWorldParams
from atlas.errors import BudgetReached
from atlas.infra.llm import ScriptedLLM

SRC = "def update(memory, episode, tools):\n    pass\n\n\ndef recall(memory, task, tools):\n    return ''\n"


def _archive(*entries: ArchiveEntry) -> Archive:
    arch = Archive()
    arch.baseline = {"score": 0.3, "per_task": []}
    arch.add(ArchiveEntry(id="d-0001", name="no_memory", origin="baseline", normalized_score=0.0), SRC)
    for e in entries:
        arch.add(e, SRC)
    return arch


def _found(i: int, score: float, stage: str = "full") -> ArchiveEntry:
    return ArchiveEntry(
        id=f"d-{i:04d}", name=f"g{i}", origin="meta", generation=1, normalized_score=score, stage=stage
    )


def test_not_while_the_search_has_found_nothing_early_in_the_run():
    arch = _archive(_found(2, -0.2), _found(3, 0.0))  # played, but neither beats no memory
    assert not costly_seeds_due(arch, 2, 20, max_minutes=None)


def test_once_a_found_design_beats_no_memory_on_every_task():
    assert costly_seeds_due(_archive(_found(2, 0.1)), 2, 20, max_minutes=None)


def test_a_design_stopped_after_a_minibatch_does_not_count():
    assert not costly_seeds_due(_archive(_found(2, 0.4, "minibatch")), 2, 20, max_minutes=None)


def test_hand_built_designs_that_beat_no_memory_do_not_count():
    seed = ArchiveEntry(id="d-0002", name="cheatsheet", origin="baseline", normalized_score=0.3)
    assert not costly_seeds_due(_archive(seed), 2, 20, max_minutes=None)


def test_half_way_through_the_generations():
    arch = _archive()
    assert not costly_seeds_due(arch, 10, 20, max_minutes=None)
    assert costly_seeds_due(arch, 11, 20, max_minutes=None)


def test_under_a_time_cap_never_between_generations():
    # on greenhouse, played once generation 1 found a design, four of them took 20 of 120 minutes
    assert not costly_seeds_due(_archive(_found(2, 0.1)), 2, 20, max_minutes=120)
    assert not costly_seeds_due(_archive(), 19, 20, max_minutes=120)


def test_a_time_capped_search_plays_them_when_it_stops_before_its_test_phase(tmp_path, embedder, monkeypatch):
    events: list[tuple[str, dict[str, Any]]] = []

    def stop_before_3(archive: Any, cfg: Any, generation: int, deployment: int, run_dir: Any) -> str | None:
        return "stopped before generation 3: no time for it" if generation == 3 else None

    monkeypatch.setattr(loop, "too_late", stop_before_3)  # the time rule itself: tests/alma/test_time_cap.py
    with pytest.raises(BudgetReached, match="before generation 3"):
        atlas.alma.run(
            run_dir=tmp_path / "run",
            env=GraphWorldEnv(params=GraphWorldParams(rooms=5)),
            llm=ScriptedLLM(task_policy),
            debug_llm=ScriptedLLM(debug_policy),
            embedder=embedder,
            iterations=5,
            max_minutes=600,
            baselines=["spatial_graph", "cheatsheet"],
            baseline_cache=False,
            env_seed=False,
            trace=False,
            quiet=True,
            representation="genome",
            probe_tasks=2,
            genome_candidates=4,
            agent_checks=1,
            callbacks=[lambda event, fields: events.append((event, fields))],
            episodes=2,
            deploy_seeds=2,
            seed=42,
            use_family=True,
        )
    archive = Archive.load(tmp_path / "run" / "archive.json")
    assert sorted({e.generation for e in archive if e.origin == "meta"}) == [1, 2], "stopped before 3"
    order = [
        fields.get("name") if event == "design.evaluated" else event
        for event, fields in events
        if event in ("iteration.start", "design.evaluated", "held_out.start", "run.stopped")
    ]
    assert order[:2] == ["no_memory", "spatial_graph"], "the cheap hand-built designs first"
    last_generation = max(i for i, x in enumerate(order) if x == "iteration.start")
    assert (
        last_generation
        < order.index("cheatsheet")
        < order.index("held_out.start")
        < order.index("run.stopped")
    )
