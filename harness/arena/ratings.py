"""Elo ratings from game results: Bradley-Terry maximum likelihood and sequential Elo.

Bradley-Terry is the one to rank with: it uses every game at once, so the order
in which games finished does not matter, and its curvature gives standard
errors. Sequential Elo (K=16) is kept only to compare with NoGoZero+, which
reports it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import expit, log_expit
from scipy.stats import norm

ELO_PER_NAT = 400.0 / math.log(10.0)  # Elo points per unit of logit


@dataclass(frozen=True)
class Outcome:
    """One finished game; ``score`` is Black's: 1 win, 0.5 draw, 0 loss."""

    black: str
    white: str
    score: float


@dataclass(frozen=True)
class Ratings:
    players: list[str]
    elo: np.ndarray  # (n,)
    covariance: np.ndarray  # (n, n) in Elo^2, relative to the anchor/centre
    first_move_elo: float | None  # Black's advantage, if fitted

    def stderr(self) -> np.ndarray:
        return np.sqrt(np.clip(np.diag(self.covariance), 0.0, None))

    def interval(self, level: float = 0.95) -> np.ndarray:
        """(n, 2) lower and upper bounds of each rating."""
        z = norm.ppf(0.5 + level / 2)
        se = self.stderr()
        return np.stack([self.elo - z * se, self.elo + z * se], axis=1)

    def difference(self, a: str, b: str) -> tuple[float, float]:
        """Elo of ``a`` minus Elo of ``b`` and its standard error.

        Both are the same whatever the anchor: moving the gauge shifts the two
        ratings together.
        """
        i, j = self.players.index(a), self.players.index(b)
        var = self.covariance[i, i] + self.covariance[j, j] - 2 * self.covariance[i, j]
        return float(self.elo[i] - self.elo[j]), math.sqrt(max(var, 0.0))

    def difference_interval(self, a: str, b: str, level: float = 0.95) -> tuple[float, float]:
        """Lower and upper bound of the Elo difference ``a - b``."""
        diff, se = self.difference(a, b)
        z = norm.ppf(0.5 + level / 2)
        return diff - z * se, diff + z * se

    def likelihood_of_superiority(self, a: str, b: str) -> float:
        """P(rating of ``a`` > rating of ``b``) under the fitted normal approximation.

        The prior keeps it finite for a player who won every game: against one
        opponent it passes 0.95 at 5-0 (a sign test's one-sided p is 1/32),
        where the exact posterior probability under the same prior is higher
        (0.992): the normal approximation errs on the cautious side.
        """
        diff, se = self.difference(a, b)
        if se <= 0:
            return 0.5 if diff == 0 else float(diff > 0)
        return float(norm.cdf(diff / se))

    def ranking(self) -> list[int]:
        """Player indices, strongest first."""
        return list(np.argsort(-self.elo, kind="stable"))


def bradley_terry(
    outcomes: Iterable[Outcome],
    players: Sequence[str] | None = None,
    *,
    prior_games: float = 2.0,
    anchor: str | None = None,
    first_move_advantage: bool = False,
) -> Ratings:
    """Maximum a posteriori Bradley-Terry ratings on the Elo scale.

    The weak prior is ``prior_games`` virtual games, half won and half lost,
    between each player and a virtual player rated 0: it keeps ratings finite
    for players who won or lost everything and barely moves anyone else.
    Without an anchor the ratings are centred on their mean (a gauge choice);
    with one, the anchor is 0 and every covariance is relative to it.
    """
    games = list(outcomes)
    names = (
        list(players)
        if players is not None
        else sorted({g.black for g in games} | {g.white for g in games})
    )
    index = {name: i for i, name in enumerate(names)}
    n = len(names)
    if n == 0:
        raise ValueError("no players to rate")
    if anchor is not None and anchor not in index:
        raise ValueError(f"anchor {anchor!r} is not among the players")
    black = np.array([index[g.black] for g in games], dtype=np.int64)
    white = np.array([index[g.white] for g in games], dtype=np.int64)
    score = np.array([g.score for g in games], dtype=np.float64)
    k = n + int(first_move_advantage)

    def unpack(theta):
        advantage = theta[n] if first_move_advantage else 0.0
        return theta[:n], advantage

    def objective(theta):
        r, adv = unpack(theta)
        d = r[black] - r[white] + adv
        nll = -np.sum(score * log_expit(d) + (1 - score) * log_expit(-d))
        nll -= prior_games * 0.5 * np.sum(log_expit(r) + log_expit(-r))
        p = expit(d)
        grad = np.zeros(k)
        resid = p - score  # d nll / d d
        np.add.at(grad, black, resid)
        np.add.at(grad, white, -resid)
        if first_move_advantage:
            grad[n] = resid.sum()
        grad[:n] += prior_games * (expit(r) - 0.5)
        return nll, grad

    theta = _newton(objective, lambda t: _hessian(t, black, white, n, first_move_advantage,
                                                  prior_games), np.zeros(k))
    hessian = _hessian(theta, black, white, n, first_move_advantage, prior_games)
    cov = np.linalg.inv(hessian)
    r, adv = unpack(theta)
    # Gauge: report ratings relative to the anchor, or to their mean.
    transform = np.eye(n) - (np.eye(n)[[index[anchor]]] if anchor else np.full((n, n), 1.0 / n))
    r = transform @ r
    cov_r = transform @ cov[:n, :n] @ transform.T
    return Ratings(
        players=names,
        elo=r * ELO_PER_NAT,
        covariance=cov_r * ELO_PER_NAT**2,
        first_move_elo=float(adv * ELO_PER_NAT) if first_move_advantage else None,
    )


def _newton(objective, hessian, theta: np.ndarray, tol: float = 1e-10) -> np.ndarray:
    """Minimise a smooth convex function by Newton steps, halved until they descend.

    The prior makes the negative log posterior strictly convex, so this
    converges in a few steps; it also avoids L-BFGS's many tiny BLAS calls,
    which crawl when other processes load the machine.
    """
    value, grad = objective(theta)
    for _ in range(200):
        step = np.linalg.solve(hessian(theta), grad)
        t = 1.0
        while True:
            candidate = theta - t * step
            new_value, new_grad = objective(candidate)
            if new_value <= value - 1e-4 * t * float(grad @ step) or t < 1e-12:
                break
            t /= 2
        theta, value, grad = candidate, new_value, new_grad
        if np.max(np.abs(t * step)) < tol:
            break
    return theta


def _hessian(theta, black, white, n, first_move_advantage, prior_games):
    k = len(theta)
    r = theta[:n]
    adv = theta[n] if first_move_advantage else 0.0
    d = r[black] - r[white] + adv
    w = expit(d) * expit(-d)
    h = np.zeros((k, k))
    np.add.at(h, (black, black), w)
    np.add.at(h, (white, white), w)
    np.add.at(h, (black, white), -w)
    np.add.at(h, (white, black), -w)
    if first_move_advantage:
        col = np.zeros(n)
        np.add.at(col, black, w)
        np.add.at(col, white, -w)
        h[n, :n] = h[:n, n] = col
        h[n, n] = w.sum() + 1e-9
    h[np.arange(n), np.arange(n)] += prior_games * expit(r) * expit(-r)
    return h


def sequential_elo(
    outcomes: Iterable[Outcome], players: Sequence[str] | None = None, *, k: float = 16.0
) -> dict[str, float]:
    """Classic incremental Elo in game order, every player starting at 0."""
    rating = {name: 0.0 for name in players or ()}
    for g in outcomes:
        rb, rw = rating.setdefault(g.black, 0.0), rating.setdefault(g.white, 0.0)
        expected = 1.0 / (1.0 + 10 ** ((rw - rb) / 400.0))
        rating[g.black] = rb + k * (g.score - expected)
        rating[g.white] = rw - k * (g.score - expected)
    return rating


def win_rate(wins: float, games: int) -> tuple[float, float]:
    """Win rate and its binomial standard error (Cazenave's table III)."""
    if games == 0:
        return float("nan"), float("nan")
    p = wins / games
    return p, math.sqrt(p * (1 - p) / games)
