"""The bar a screened candidate must beat to be played is the probe of the best design played so far
(``probe_bar``): a played design the probe overrated (high probe, low score) sets no bar."""

from __future__ import annotations

from pathlib import Path

from atlas.alma.search.genome_step import probe_bar
from atlas.alma.state.archive import Archive, ArchiveEntry

ROOT = Path(__file__).resolve().parents[3]
DEPOT_PLAYED_BAR = ROOT / "tests" / "fixtures" / "runs" / "depot-played-bar" / "archive.json"


def _played(i: int, score: float, *, stage: str = "full") -> ArchiveEntry:
    return ArchiveEntry(
        id=f"d-{i:04d}",
        name=f"m{i}",
        origin="meta",
        status="ok",
        stage=stage,
        deployment_score=0.1 + score,
        normalized_score=score,
    )


def _archive(*entries: ArchiveEntry) -> Archive:
    archive = Archive()
    for e in entries:
        archive.add(e)
    return archive


def test_the_bar_is_the_probe_of_the_best_played_design_not_the_highest_probe():
    archive = _archive(_played(1, 0.0), _played(2, 0.156), _played(3, 0.095))
    probes = {"d-0001": 0.0, "d-0002": 0.391, "d-0003": 0.484}
    assert probe_bar(archive, probes) == 0.391  # d-0003 probed higher and scored lower: no bar
    archive.add(_played(4, 0.2))  # a better design raises the bar to its own probe, even a lower one
    assert probe_bar(archive, {**probes, "d-0004": 0.3}) == 0.3


def test_ties_take_the_highest_probe_and_a_stopped_design_is_never_the_best():
    archive = _archive(_played(1, 0.1), _played(2, 0.1), _played(3, 0.6, stage="minibatch"))
    assert probe_bar(archive, {"d-0001": 0.2, "d-0002": 0.5, "d-0003": 0.9}) == 0.5
    assert probe_bar(archive, {"d-0001": 0.2}) == 0.2  # a probe not measured counts as 0
    # only stopped designs: nothing is the best, so any played design's probe is the bar
    stopped = _archive(_played(1, 0.1, stage="minibatch"), _played(2, -0.1, stage="minibatch"))
    assert probe_bar(stopped, {"d-0001": 0.2, "d-0002": 0.4}) == 0.4
    assert probe_bar(Archive(), {}) == 0.0


def test_on_the_depot_search_that_stalled_the_bar_falls_to_its_best_designs_probe():
    archive = Archive.load(DEPOT_PLAYED_BAR)
    probes = {e.id: e.search.probe_score for e in archive.scored()}  # moved out of the old metadata
    best = archive.best()
    assert best is not None and best.id == "d-0009"
    assert max(probes.values()) > probes["d-0009"]  # the old bar: every played design's probe
    bar = probe_bar(archive, probes)
    assert bar == probes["d-0009"]
    # the candidates its later generations screened out had probed above this bar with their own games
    refused = [
        e.search.agent_probe for e in archive if e.status == "invalid" and e.search.agent_probe is not None
    ]
    assert refused and sum(p > bar for p in refused) >= len(refused) // 2


def test_the_depot_search_run_with_it_recorded_this_bar_in_every_generation():
    run = Archive.load(ROOT / "tests" / "fixtures" / "runs" / "depot-best-bar" / "archive.json")
    entries = list(run)
    generations = [i for i, e in enumerate(entries) if e.search and e.search.probe_bar is not None]
    assert len(generations) >= 7
    for i in generations:
        before = Archive()
        for e in entries[:i]:
            before.add(e)
        probes = {e.id: e.search.probe_score or 0.0 for e in before.scored() if e.search}
        assert entries[i].search.probe_bar == probe_bar(before, probes), entries[i].id
