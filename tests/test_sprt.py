"""The SPRT of a two-player match: hand-computed log-likelihood ratios, Wald's
bounds, and error rates near alpha and beta in simulated matches."""

import math

import numpy as np
import pytest

from harness.arena.sprt import SPRT, expected_score, llr, parse_sprt, sprt_from_mapping


def test_without_draws_the_llr_is_the_binomial_one_computed_by_hand():
    # s0 = 0.5; s1 = 1 / (1 + 10^(-35/400)) = 1 / (1 + 0.817523) = 0.550199.
    # LLR = 10 ln(0.550199 / 0.5) + 5 ln(0.449801 / 0.5) = 0.956716 - 0.529023 = 0.427693
    # (fishtest's 0.001 games for the unseen draw move it by 2e-5).
    assert expected_score(35) == pytest.approx(0.550199, abs=1e-6)
    assert llr(10, 0, 5, 0, 35) == pytest.approx(0.427693, abs=1e-4)
    # 9 wins, 1 loss at elo1 = 200: s1 = 1 / (1 + 10^-0.5) = 0.759747;
    # 9 ln(1.519494) + ln(0.480506) = 3.766409 - 0.732916 = 3.033493.
    assert llr(9, 0, 1, 0, 200) == pytest.approx(3.0335, abs=1e-3)


def _quadratic_llr(wins, draws, losses, elo0, elo1):
    """The GSPRT by another road: the mean-constrained maximum-likelihood
    distribution f_i / (1 + x (a_i - s)) from the roots of its secular equation,
    a quadratic once its three denominators are cleared."""
    n = wins + draws + losses
    f = np.array([losses, draws, wins]) / n
    a = np.array([0.0, 0.5, 1.0])
    mle = []
    for s in (expected_score(elo0), expected_score(elo1)):
        u = a - s
        poly = np.poly1d([0.0])
        for i in range(3):
            term = np.poly1d([f[i] * u[i]])
            for j in range(3):
                if j != i:
                    term = term * np.poly1d([u[j], 1.0])
            poly = poly + term
        (x,) = [r.real for r in poly.roots if abs(r.imag) < 1e-12 and -1 / (1 - s) < r.real < 1 / s]
        mle.append(f / (1 + x * u))
    return n * float(np.sum(f * np.log(mle[1] / mle[0])))


def test_with_draws_the_llr_matches_the_closed_form_maximum_likelihood():
    # +6 =2 -4: mean score 7/12. Under H0 (s0 = 1/2) the constrained MLE solves
    # (1/3)(-1/2)/(1 - x/2) + (1/2)(1/2)/(1 + x/2) = 0, so x = 2/5 and
    # p0 = (5/12, 1/6, 5/12); H1's root is not round: numpy.roots finds it.
    assert llr(6, 2, 4, 0, 35) == pytest.approx(_quadratic_llr(6, 2, 4, 0, 35), abs=1e-9)
    assert llr(6, 2, 4, 0, 35) == pytest.approx(0.169105, abs=1e-6)
    assert llr(3, 7, 5, -20, 40) == pytest.approx(_quadratic_llr(3, 7, 5, -20, 40), abs=1e-9)


def test_the_llr_is_the_same_from_either_players_side():
    # A +7 =1 -2, H1 A +60 against H0 A +10, is B +2 =1 -7, H1 B -60 against H0 B -10.
    assert llr(7, 1, 2, 10, 60) == pytest.approx(llr(2, 1, 7, -10, -60), abs=1e-9)


def test_wald_bounds_and_decisions():
    test = SPRT(elo0=0, elo1=200)
    assert test.bounds() == pytest.approx((-math.log(19), math.log(19)))  # alpha = beta = 0.05
    assert test.decide(9, 0, 1) == "H1"  # 3.03 >= 2.94
    assert test.decide(8, 0, 2) is None  # 8 ln(1.519494) + 2 ln(0.480506) = 1.88
    assert test.decide(1, 0, 9) == "H0"
    assert test.decide(0, 0, 0) is None


def test_bad_hypotheses_and_keys_are_refused():
    with pytest.raises(ValueError, match="elo1 > elo0"):
        SPRT(elo0=35, elo1=0)
    with pytest.raises(ValueError, match="alpha"):
        SPRT(alpha=0.7)
    with pytest.raises(ValueError, match="unknown sprt key 'elo2'"):
        sprt_from_mapping({"elo2": 5})
    with pytest.raises(ValueError, match="KEY=NUMBER"):
        parse_sprt("elo0=0,elo1")
    assert parse_sprt("elo0=0, elo1=35,alpha=0.1") == {"elo0": 0, "elo1": 35, "alpha": 0.1}


def simulate(test: SPRT, true_elo: float, runs: int, max_games: int, draw_rate: float, seed: int):
    """Fractions of ``runs`` matches that accept H1, H0, or reach ``max_games``.

    The LLR is evaluated after every game, in blocks of games, only for the
    matches still open.
    """
    rng = np.random.default_rng(seed)
    s = expected_score(true_elo)
    p = [1 - s - draw_rate / 2, draw_rate, s - draw_rate / 2]  # loss, draw, win: mean s
    games = rng.choice(3, size=(runs, max_games), p=p)
    counts = [np.cumsum(games == outcome, axis=1) for outcome in (2, 1, 0)]  # W, D, L
    lower, upper = test.bounds()
    verdict = np.zeros(runs)  # +1 accepted H1, -1 accepted H0, 0 open
    for start in range(0, max_games, 25):
        open_ = np.flatnonzero(verdict == 0)
        block = slice(start, start + 25)
        value = llr(*(c[open_, block] for c in counts), test.elo0, test.elo1)
        crossed = (value >= upper) | (value <= lower)
        first = crossed.argmax(axis=1)
        at_stop = value[np.arange(len(open_)), first]
        verdict[open_] = np.where(crossed.any(axis=1), np.sign(at_stop), 0)
    return np.mean(verdict > 0), np.mean(verdict < 0), np.mean(verdict == 0)


def test_error_rates_are_about_alpha_and_beta_in_simulated_matches():
    # 2,000 matches per hypothesis with 10% draws; Monte Carlo s.e. of a 5% rate ~0.5 points,
    # of a 10% rate ~0.7. Wald's bounds hold the rates at or a little below nominal.
    test = SPRT(elo0=0, elo1=100, alpha=0.05, beta=0.10)
    false_pass, _, open_0 = simulate(test, test.elo0, 2000, 400, 0.1, seed=1)
    _, false_fail, open_1 = simulate(test, test.elo1, 2000, 400, 0.1, seed=2)
    assert open_0 < 0.005 and open_1 < 0.005  # nearly every match decides within 400 games
    assert 0.025 <= false_pass <= 0.065
    assert 0.06 <= false_fail <= 0.125


@pytest.mark.slow
def test_error_rates_at_leela_zeros_hypotheses():
    test = SPRT(elo0=0, elo1=35)
    false_pass, _, _ = simulate(test, 0, 2000, 3000, 0.0, seed=3)
    _, false_fail, _ = simulate(test, 35, 2000, 3000, 0.0, seed=4)
    assert 0.025 <= false_pass <= 0.065 and 0.025 <= false_fail <= 0.065
