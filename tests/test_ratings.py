"""Bradley-Terry ratings recover known Elo gaps from synthetic tournaments."""

import numpy as np
import pytest

from harness.arena.ratings import Outcome, bradley_terry, sequential_elo, win_rate

TRUE_ELO = {"a": 0.0, "b": 100.0, "c": 250.0, "d": 400.0}


def round_robin(rng, games_per_pair, elo=TRUE_ELO, black_bonus=0.0):
    names = list(elo)
    out = []
    for i, x in enumerate(names):
        for y in names[i + 1 :]:
            for k in range(games_per_pair):
                black, white = (x, y) if k % 2 == 0 else (y, x)
                diff = elo[black] - elo[white] + black_bonus
                p_black = 1 / (1 + 10 ** (-diff / 400))
                out.append(Outcome(black, white, float(rng.random() < p_black)))
    return out


def test_fit_recovers_known_gaps_within_intervals_in_90_percent_of_repeats():
    rng = np.random.default_rng(7)
    covered = total = 0
    for _ in range(40):
        ratings = bradley_terry(round_robin(rng, 60), anchor="a")
        lo_hi = ratings.interval(0.95)
        for i, name in enumerate(ratings.players):
            if name == "a":
                continue
            total += 1
            covered += lo_hi[i, 0] <= TRUE_ELO[name] <= lo_hi[i, 1]
    assert covered / total >= 0.9


def test_intervals_shrink_as_games_grow():
    rng = np.random.default_rng(1)
    small = bradley_terry(round_robin(rng, 20), anchor="a").stderr()
    large = bradley_terry(round_robin(rng, 320), anchor="a").stderr()
    assert np.all(large[1:] < small[1:] / 2.5)  # ~1/sqrt(16) = 1/4


def test_anchoring_shifts_every_rating_by_one_constant():
    games = round_robin(np.random.default_rng(3), 30)
    free = bradley_terry(games)
    anchored = bradley_terry(games, anchor="c")
    shift = anchored.elo - free.elo
    assert np.allclose(shift, shift[0])
    assert anchored.elo[anchored.players.index("c")] == pytest.approx(0.0)
    assert anchored.stderr()[anchored.players.index("c")] == pytest.approx(0.0, abs=1e-6)


def test_first_move_advantage_is_recovered():
    rng = np.random.default_rng(5)
    games = round_robin(rng, 400, black_bonus=80.0)
    ratings = bradley_terry(games, anchor="a", first_move_advantage=True)
    assert ratings.first_move_elo == pytest.approx(80.0, abs=30.0)


def test_prior_keeps_an_unbeaten_player_finite_and_on_top():
    games = [Outcome("x", "y", 1.0), Outcome("y", "x", 0.0)] * 5
    ratings = bradley_terry(games)
    assert np.all(np.isfinite(ratings.elo))
    assert ratings.ranking()[0] == ratings.players.index("x")
    assert ratings.likelihood_of_superiority("x", "y") > 0.95


def test_sequential_elo_moves_k_over_two_after_an_even_game():
    assert sequential_elo([Outcome("p", "q", 1.0)]) == {"p": 8.0, "q": -8.0}


def test_win_rate_and_standard_error():
    p, se = win_rate(30, 40)
    assert p == 0.75
    assert se == pytest.approx((0.75 * 0.25 / 40) ** 0.5)
