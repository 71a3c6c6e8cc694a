"""Parent sampling: frequencies follow the quality-diversity weights."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from atlas.alma.state.sampling import FLOOR, raw_weight, sample_parents, seeded_rng, weights


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


def test_exploit_puts_the_elite_first_at_the_given_rate_and_never_twice():
    elite = ENTRIES[0]
    rng = seeded_rng(3, 1)
    n = 4000
    firsts = 0
    for _ in range(n):
        got = sample_parents(ENTRIES, 2, rng, elite=elite, exploit=0.7)
        assert len({e.id for e in got}) == 2
        firsts += got[0].id == elite.id
    p_draw = weights(ENTRIES)[0] / sum(weights(ENTRIES))  # the elite can also be drawn by weight
    expected = 0.7 + 0.3 * p_draw
    assert abs(firsts / n - expected) < 0.03, (firsts / n, expected)


def test_exploit_zero_or_no_elite_is_plain_sampling():
    plain = [e.id for e in sample_parents(ENTRIES, 2, seeded_rng(5, 2))]
    assert [e.id for e in sample_parents(ENTRIES, 2, seeded_rng(5, 2), elite=None, exploit=1.0)] == plain
    always = sample_parents(ENTRIES, 1, seeded_rng(5, 2), elite=ENTRIES[2], exploit=1.0)
    assert [e.id for e in always] == [ENTRIES[2].id]
