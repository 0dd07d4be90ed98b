"""Intervals for per-position metrics, resampling whole games.

Positions of one game are correlated (same players, same opening, same
mistakes), so treating 12,000 positions of 200 games as 12,000 independent
draws gives intervals that are too narrow. The unit that is sampled
independently is the game: every metric here is a ratio of sums (hits over
weighted positions), and the bootstrap redraws games with replacement and
recomputes that ratio. Two models evaluated on the same positions are
compared the same way, redrawing the same games for both (a paired
bootstrap), which removes the shared difficulty of the positions from the
difference.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

DEFAULT_REPS = 2000
DEFAULT_LEVEL = 0.95
_CHUNK = 250  # bootstrap replicates drawn at once (bounds memory: chunk x games)


@dataclass(frozen=True)
class Estimate:
    """A point estimate with a two-sided interval at ``level``."""

    value: float
    low: float
    high: float
    level: float = DEFAULT_LEVEL

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2

    def covers(self, x: float) -> bool:
        return self.low <= x <= self.high


@dataclass(frozen=True)
class GroupedMetric:
    """A metric as per-game sums: ``sums[g]`` of weighted values, ``counts[g]`` of weights."""

    sums: np.ndarray  # (G,)
    counts: np.ndarray  # (G,)

    @property
    def value(self) -> float:
        total = float(self.counts.sum())
        return float(self.sums.sum()) / total if total > 0 else math.nan

    @property
    def games(self) -> int:
        return int(np.count_nonzero(self.counts))


def group_sums(values: np.ndarray, weights: np.ndarray | None,
               groups: np.ndarray | None) -> GroupedMetric:
    """Per-game sums of one metric; ``groups=None`` treats each position as its own game."""
    values = np.asarray(values, np.float64).reshape(-1)
    weights = np.ones_like(values) if weights is None else np.asarray(weights, np.float64)
    weights = weights.reshape(-1)
    if groups is None:
        keep = weights > 0
        return GroupedMetric(values[keep] * weights[keep], weights[keep])
    _, labels = np.unique(np.asarray(groups).reshape(-1), return_inverse=True)
    sums = np.bincount(labels, weights=values * weights)
    counts = np.bincount(labels, weights=weights)
    keep = counts > 0
    return GroupedMetric(sums[keep], counts[keep])


def _replicate_weights(n_groups: int, reps: int, seed: int):
    """Chunks of multinomial resampling counts, (chunk, G), for ``reps`` replicates."""
    rng = np.random.default_rng(seed)
    done = 0
    while done < reps:
        k = min(_CHUNK, reps - done)
        yield rng.multinomial(n_groups, np.full(n_groups, 1.0 / n_groups), size=k).astype(
            np.float64)
        done += k


def _ratio_replicates(metrics: Sequence[GroupedMetric], reps: int, seed: int) -> np.ndarray:
    """(reps, len(metrics)) bootstrap replicates; the metrics must share their games."""
    n = len(metrics[0].sums)
    if any(len(m.sums) != n for m in metrics):
        raise ValueError("metrics compared by a paired bootstrap must cover the same games")
    sums = np.stack([m.sums for m in metrics], axis=1)
    counts = np.stack([m.counts for m in metrics], axis=1)
    out = []
    for w in _replicate_weights(n, reps, seed):
        with np.errstate(invalid="ignore", divide="ignore"):
            out.append((w @ sums) / (w @ counts))
    return np.concatenate(out, axis=0)


def _percentiles(replicates: np.ndarray, level: float) -> tuple[float, float]:
    finite = replicates[np.isfinite(replicates)]
    if not len(finite):
        return math.nan, math.nan
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(finite, [tail, 100 - tail])
    return float(low), float(high)


def bootstrap(metric: GroupedMetric, *, reps: int = DEFAULT_REPS, level: float = DEFAULT_LEVEL,
              seed: int = 0) -> Estimate:
    """Percentile interval of a ratio metric, resampling games."""
    if metric.games < 2:
        return Estimate(metric.value, math.nan, math.nan, level)
    low, high = _percentiles(_ratio_replicates([metric], reps, seed)[:, 0], level)
    return Estimate(metric.value, low, high, level)


@dataclass(frozen=True)
class Difference:
    """``a - b`` on the same positions, its interval and a two-sided bootstrap p-value."""

    estimate: Estimate
    p_value: float


def paired_difference(a: GroupedMetric, b: GroupedMetric, *, reps: int = DEFAULT_REPS,
                      level: float = DEFAULT_LEVEL, seed: int = 0) -> Difference:
    """The difference of two metrics measured on the same games, resampled together.

    The p-value is the smallest ``1 - level`` at which the percentile interval
    of the difference excludes zero, so an interval and its p-value never
    disagree.
    """
    value = a.value - b.value
    if a.games < 2:
        return Difference(Estimate(value, math.nan, math.nan, level), math.nan)
    reps_ab = _ratio_replicates([a, b], reps, seed)
    diff = reps_ab[:, 0] - reps_ab[:, 1]
    diff = diff[np.isfinite(diff)]
    low, high = _percentiles(diff, level)
    below, above = np.mean(diff <= 0), np.mean(diff >= 0)
    p = min(1.0, 2 * min(below, above))
    p = max(p, 1.0 / len(diff)) if len(diff) else math.nan
    return Difference(Estimate(value, low, high, level), float(p))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values (family-wise error control, any dependence)."""
    p = np.asarray(p_values, np.float64)
    order = np.argsort(p, kind="stable")
    m = len(p)
    adjusted = np.empty(m)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        adjusted[i] = running
    return adjusted.tolist()


def mean_interval(values: Sequence[float], level: float = DEFAULT_LEVEL) -> Estimate:
    """Mean over independent repeats (random seeds) with a Student-t interval."""
    from scipy.stats import t

    x = np.asarray([v for v in values if v is not None and math.isfinite(v)], np.float64)
    if len(x) == 0:
        return Estimate(math.nan, math.nan, math.nan, level)
    mean = float(x.mean())
    if len(x) < 2:
        return Estimate(mean, math.nan, math.nan, level)
    half = float(t.ppf(0.5 + level / 2, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x)))
    return Estimate(mean, mean - half, mean + half, level)
