"""Intervals of per-position metrics: bootstrap over games, paired differences, seeds."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harness.stats import (
    Estimate,
    bootstrap,
    fmt_number,
    fmt_p,
    fmt_with_interval,
    group_sums,
    holm,
    mean_interval,
    paired_difference,
)


def _study(rng, games=150, mean=0.4, concentration=10.0):
    """Hits of positions whose success rate varies by game (correlated within a game)."""
    counts = rng.integers(20, 80, games)
    rates = rng.beta(mean * concentration, (1 - mean) * concentration, games)
    groups = np.repeat(np.arange(games), counts)
    hits = rng.random(counts.sum()) < np.repeat(rates, counts)
    return hits.astype(float), groups


def test_group_sums_add_within_games():
    m = group_sums(np.array([1, 0, 1, 1, 0.0]), None, np.array([7, 7, 3, 3, 3]))
    assert sorted(zip(m.counts.tolist(), m.sums.tolist(), strict=True)) == [(2.0, 1.0), (3.0, 2.0)]
    assert m.value == pytest.approx(3 / 5)
    assert m.games == 2


def test_weights_zero_drop_positions():
    m = group_sums(np.array([1.0, 1.0, 0.0]), np.array([1.0, 0.0, 1.0]), np.array([0, 0, 1]))
    assert m.value == pytest.approx(0.5)


def test_bootstrap_interval_covers_truth_in_95_percent_of_studies():
    """The nominal 95% interval covers the true accuracy in 93-97% of 1,000 studies."""
    rng = np.random.default_rng(12345)
    studies, covered = 1000, 0
    for i in range(studies):
        hits, groups = _study(rng)
        covered += bootstrap(group_sums(hits, None, groups), reps=400, seed=i).covers(0.4)
    assert 0.93 <= covered / studies <= 0.97, covered


def test_ignoring_games_would_be_too_narrow():
    """Why games are resampled: per-position intervals undercover correlated data."""
    rng = np.random.default_rng(7)
    hits, groups = _study(rng, concentration=2.0)
    by_game = bootstrap(group_sums(hits, None, groups), seed=1)
    by_position = bootstrap(group_sums(hits, None, None), seed=1)
    assert by_game.half_width > 1.5 * by_position.half_width


def test_paired_difference_detects_a_small_shift_an_unpaired_view_cannot():
    """Two models on the same positions: the shared difficulty cancels."""
    rng = np.random.default_rng(3)
    hits, groups = _study(rng, games=200, concentration=2.0)
    better = hits.copy()
    flip = (hits == 0) & (rng.random(len(hits)) < 0.05)  # b gets 5% of a's misses right
    better[flip] = 1.0
    a, b = group_sums(better, None, groups), group_sums(hits, None, groups)
    diff = paired_difference(a, b, seed=0)
    assert diff.estimate.value == pytest.approx(a.value - b.value)
    assert diff.estimate.low > 0 and diff.p_value < 0.01
    ia, ib = bootstrap(a, seed=0), bootstrap(b, seed=0)
    assert ia.low < ib.high  # the separate intervals overlap


def test_paired_difference_of_identical_models_is_not_significant():
    rng = np.random.default_rng(4)
    hits, groups = _study(rng)
    m = group_sums(hits, None, groups)
    diff = paired_difference(m, m, seed=0)
    assert diff.estimate.value == 0 and diff.p_value == 1.0


def test_paired_difference_needs_the_same_games():
    a = group_sums(np.ones(4), None, np.array([0, 0, 1, 2]))
    b = group_sums(np.ones(4), None, np.array([0, 1, 1, 1]))
    with pytest.raises(ValueError, match="same games"):
        paired_difference(a, b)


def test_holm_matches_hand_computation():
    # p sorted: 0.01 (x3 = 0.03), 0.02 (x2 = 0.04), 0.04 (x1 = 0.04, monotone)
    assert holm([0.04, 0.01, 0.02]) == pytest.approx([0.04, 0.03, 0.04])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])


def test_mean_interval_over_seeds_is_student_t():
    e = mean_interval([0.30, 0.32, 0.34])
    # mean 0.32, sd 0.02, t(0.975, 2) = 4.303: half-width 4.303 * 0.02 / sqrt(3)
    assert e.value == pytest.approx(0.32)
    assert e.half_width == pytest.approx(4.302653 * 0.02 / math.sqrt(3), rel=1e-5)
    assert math.isnan(mean_interval([0.3]).low)


def test_numbers_print_without_float_noise():
    assert fmt_number(-5.79e-14) == "0.000"
    assert fmt_number(9.64e-15) == "0.000"
    assert fmt_number(1234.567) == "1,235"
    assert fmt_number(12.345) == "12.3"
    assert fmt_number(0.41234) == "0.412"
    assert fmt_number(3) == "3"
    assert fmt_p(0.0001) == "<=0.001"
    assert fmt_with_interval(Estimate(0.412, 0.398, 0.426), percent=True) == "41.2 [39.8, 42.6]"
