"""Genome → module → same advice: each hand-built baseline and its genome, played on the same real
episodes (ExplorerPolicy, real sandbox, real MiniLM, the smoke run's stub model), recall the same
text at every call."""

from __future__ import annotations

import pytest

from atlas.alma.baselines import get_baseline
from atlas.alma.genome import BASELINE_GENOMES, baseline_genome, genome_design, genome_of


def _recalls(report) -> list[str | None]:
    return [c.return_value for c in report.calls if c.phase == "recall"]


def _assert_same_advice(name, env, smoke):
    hand = smoke(get_baseline(name), env)
    genome = baseline_genome(name)
    design = genome_design(genome)
    assert genome_of(design) == genome
    compiled = smoke(design, env)
    for report in (hand, compiled):
        assert report.valid, report.problems
        assert report.ran_clean, report.to_feedback()
        assert len(_recalls(report)) == 6  # 3 collection + 3 deployment recalls
    assert _recalls(compiled) == _recalls(hand)
    assert any(r for r in _recalls(hand)), "no recall gave advice: the comparison would prove nothing"
    assert compiled.advice_ok, compiled.to_feedback()
    # the same episodes were played (the memory design does not steer the explorer)
    assert compiled.episode_results == hand.episode_results


def test_every_baseline_genome_is_tested():
    assert set(BASELINE_GENOMES) == {"trajectory_retrieval", "reasoning_bank", "cheatsheet", "spatial_graph"}


@pytest.mark.parametrize("name", sorted(BASELINE_GENOMES))
def test_baseline_genome_gives_the_hand_written_advice_on_graphworld(name, smoke):
    _assert_same_advice(name, "graphworld", smoke)


@pytest.mark.parametrize("name", ["trajectory_retrieval", "reasoning_bank", "cheatsheet"])
def test_baseline_genome_gives_the_hand_written_advice_on_alfworld(name, smoke, make_env):
    _assert_same_advice(name, make_env("alfworld"), smoke)
