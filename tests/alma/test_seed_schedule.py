"""When a genome search plays the hand-built designs that learn with the model (``costly_seeds_due``)."""

from __future__ import annotations

from atlas.alma.search.seeds import costly_seeds_due
from atlas.alma.state.archive import Archive, ArchiveEntry

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
    assert not costly_seeds_due(arch, 2, 20, elapsed_s=600, max_minutes=120)
    assert not costly_seeds_due(arch, 2, 20, elapsed_s=600, max_minutes=None)


def test_once_a_found_design_beats_no_memory_on_every_task():
    assert costly_seeds_due(_archive(_found(2, 0.1)), 2, 20, elapsed_s=60, max_minutes=120)


def test_a_design_stopped_after_a_minibatch_does_not_count():
    assert not costly_seeds_due(_archive(_found(2, 0.4, "minibatch")), 2, 20, elapsed_s=60, max_minutes=120)


def test_hand_built_designs_that_beat_no_memory_do_not_count():
    seed = ArchiveEntry(id="d-0002", name="cheatsheet", origin="baseline", normalized_score=0.3)
    assert not costly_seeds_due(_archive(seed), 2, 20, elapsed_s=60, max_minutes=120)


def test_half_way_through_the_time_or_the_generations():
    arch = _archive()
    assert not costly_seeds_due(arch, 3, 20, elapsed_s=59 * 60, max_minutes=120)
    assert costly_seeds_due(arch, 3, 20, elapsed_s=60 * 60, max_minutes=120)
    assert not costly_seeds_due(arch, 10, 20, elapsed_s=0, max_minutes=None)
    assert costly_seeds_due(arch, 11, 20, elapsed_s=0, max_minutes=None)
