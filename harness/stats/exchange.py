"""How much search one decade of training compute is worth, from one pooled rating.

Jones (2021, Hex) found that 10x training compute bought as much Elo as about
15x test-time search. With both measured in the same Bradley-Terry rating the
exchange rate is a ratio of two slopes: Elo per decade of training compute
(each model's savepoints, at the evaluation search) over Elo per decade of
playouts (each model's last savepoint at several playouts). A slope is the
within-model one (every model its own intercept, one common slope: the
models differ in level, the question is the rate), fitted by least squares
in log10. The factor of playouts worth 10x training compute is then
``10 ** (training slope / search slope)``.

The ratings are correlated (one fit, shared opponents), so the intervals come
from redrawing the whole Elo vector from the fit's normal approximation
(mean and covariance) and refitting both slopes: a parametric bootstrap of
the rating. The factor is only estimated where both slopes' intervals lie
above zero; otherwise it is not estimable and the reason says which slope
failed. Pure numpy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from harness.stats.bootstrap import DEFAULT_LEVEL, Estimate


@dataclass(frozen=True)
class Observation:
    """One rated player as a point of a slope: its index in the rating, its
    group (the model) and x (log10 of its compute, or of its playouts)."""

    index: int
    group: str
    x: float


@dataclass(frozen=True)
class ExchangeRate:
    train_slope: Estimate | None  # Elo per decade of training compute
    search_slope: Estimate | None  # Elo per decade of playouts
    factor: Estimate | None  # playouts factor worth 10x training compute
    reason: str  # why the factor is not estimated; "" when it is


def within_slope(observations: Sequence[Observation], elo: np.ndarray) -> np.ndarray:
    """The common slope of Elo on x with one intercept per group, for each row
    of ``elo`` (shape (draws, players) or (players,)); NaN with no spread in x."""
    elo = np.atleast_2d(elo)
    x = np.array([o.x for o in observations], dtype=float)
    index = np.array([o.index for o in observations])
    groups = [o.group for o in observations]
    xd = x.copy()
    yd = elo[:, index].astype(float)
    for g in set(groups):
        mask = np.array([name == g for name in groups])
        xd[mask] -= x[mask].mean()
        yd[:, mask] -= yd[:, mask].mean(axis=1, keepdims=True)
    sxx = float(xd @ xd)
    if sxx <= 1e-12:
        return np.full(len(elo), np.nan)
    return (yd @ xd) / sxx


def exchange_rate(elo: np.ndarray, covariance: np.ndarray, train: Sequence[Observation],
                  search: Sequence[Observation], *, reps: int = 2000, seed: int = 0,
                  level: float = DEFAULT_LEVEL) -> ExchangeRate:
    """Both slopes with their intervals and, where both are above zero, the
    factor of playouts that buys what 10x training compute buys."""
    elo = np.asarray(elo, dtype=float)
    point_train = within_slope(train, elo)[0] if train else np.nan
    point_search = within_slope(search, elo)[0] if search else np.nan
    if np.isnan(point_train) or np.isnan(point_search):
        which = "training compute" if np.isnan(point_train) else "playouts"
        return ExchangeRate(None, None, None,
                            f"not estimable: fewer than two {which} values within a model")
    rng = np.random.default_rng(seed)
    draws = rng.multivariate_normal(elo, np.asarray(covariance, dtype=float), size=reps,
                                    check_valid="ignore", method="eigh")
    train_draws, search_draws = within_slope(train, draws), within_slope(search, draws)
    tail = 100 * (1 - level) / 2
    t = _estimate(point_train, train_draws, tail, level)
    s = _estimate(point_search, search_draws, tail, level)
    if t.low <= 0 or s.low <= 0:
        which = "training compute" if t.low <= 0 else "playouts"
        return ExchangeRate(t, s, None, f"not estimable: the Elo per decade of {which} is "
                            "not separated from zero")
    ok = search_draws > 0
    ratio = train_draws[ok] / search_draws[ok]
    factor = Estimate(float(10 ** (point_train / point_search)),
                      float(10 ** np.percentile(ratio, tail)),
                      float(10 ** np.percentile(ratio, 100 - tail)), level)
    return ExchangeRate(t, s, factor, "")


def _estimate(point: float, draws: np.ndarray, tail: float, level: float) -> Estimate:
    return Estimate(float(point), float(np.percentile(draws, tail)),
                    float(np.percentile(draws, 100 - tail)), level)
