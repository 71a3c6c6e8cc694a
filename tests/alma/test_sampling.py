"""Parent sampling: frequencies follow the quality-diversity weights."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from atlas.alma.sampling import FLOOR, raw_weight, sample_parents, seeded_rng, weights


@dataclass
class E:
    id: str
    normalized_score: float | None
    novelty: float | None
    times_sampled: int = 0


ENTRIES = [
    E("a", 0.30, 0.2, 0),
    E("b", -0.10, 0.9, 3),
    E("c", 0.05, 0.5, 1),
    E("d", 0.60, 0.1, 5),
]


def test_raw_weight_formula():
    assert raw_weight(0.4, 0.5, 1) == pytest.approx(0.5 * 0.4 + 0.3 * 0.5 + 0.2 / 2)


def test_weights_are_shifted_non_negative():
    entries = [E("x", -2.0, 0.0, 9), E("y", 0.5, 0.5, 0)]
    w = weights(entries)
    assert min(w) == pytest.approx(FLOOR)
    assert all(x > 0 for x in w)
    # without negatives, no shift: weight = raw + floor
    w2 = weights(ENTRIES[:1])
    assert w2[0] == pytest.approx(raw_weight(0.30, 0.2, 0) + FLOOR)


def test_sampling_frequencies_match_the_weights():
    rng = seeded_rng(7, 1)
    n = 20000
    counts = {e.id: 0 for e in ENTRIES}
    for _ in range(n):
        counts[sample_parents(ENTRIES, 1, rng)[0].id] += 1
    w = weights(ENTRIES)
    total = sum(w)
    chi2 = 0.0
    for e, wi in zip(ENTRIES, w, strict=True):
        expected = n * wi / total
        chi2 += (counts[e.id] - expected) ** 2 / expected
    # 3 degrees of freedom: P(chi2 > 16.27) = 0.001
    assert chi2 < 16.27, (counts, w)


def test_sample_without_replacement_and_k_capped():
    rng = seeded_rng(1, 2)
    got = sample_parents(ENTRIES, 3, rng)
    assert len({e.id for e in got}) == 3
    assert len(sample_parents(ENTRIES[:2], 5, rng)) == 2
    assert sample_parents([], 2, rng) == []


def test_seeded_rng_is_a_function_of_seed_and_generation():
    a = [e.id for e in sample_parents(ENTRIES, 2, seeded_rng(42, 3))]
    b = [e.id for e in sample_parents(ENTRIES, 2, seeded_rng(42, 3))]
    assert a == b
    draws = {tuple(e.id for e in sample_parents(ENTRIES, 2, seeded_rng(42, g))) for g in range(1, 30)}
    assert len(draws) > 1
