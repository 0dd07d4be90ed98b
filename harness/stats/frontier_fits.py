"""Fitting a frontier in log10 compute: an incline then a plateau, with bootstrap intervals.

Jones (2021) fits each frontier as a change-point model in log10 FLOPs: a
straight incline (Elo, or accuracy points, per decade of compute) up to a
change point, then a flat plateau. A logistic curve in log10 FLOPs is the
smooth alternative: it bends into its plateau instead of turning a corner,
and may fit a frontier that rounds off better. Both are fitted by weighted
least squares (weights ``1 / se**2`` from the points' own intervals); which
is kept is decided by AICc on the weighted residuals (the change point when
the two tie, as the simpler and the published form). Every parameter, and
the compute needed to reach a stated value, gets a percentile interval from
a parametric bootstrap (:func:`bootstrap_fit` says why that one).

Both curves are monotone, so "the compute to reach a value" is well defined:
the least compute at which the fitted curve is at least that good.
"""

from __future__ import annotations

import contextlib
import math
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from harness.stats.bootstrap import DEFAULT_LEVEL, Estimate
from harness.stats.frontier import (
    Direction,
    FrontierPoint,
    frontier,
    frontier_steps,
    groups,
    higher_is_better_for,
    measured_until,
)

DEFAULT_FIT_REPS = 1000
# The fewest computes at which the change-point fit (three parameters) leaves
# a residual to judge it by: its AICc is finite from k + 2 points on.
MIN_FIT_COMPUTES = 5
KINDS = ("change_point", "sigmoid")


@dataclass(frozen=True)
class ChangePointFit:
    """``value = intercept + slope * min(log10_flops, change_point)``: incline, then plateau.

    A change point at the largest compute fitted means no plateau was seen.
    """

    kind: ClassVar[str] = "change_point"
    n_params: ClassVar[int] = 3

    slope: float  # value per decade of compute on the incline
    intercept: float  # the incline's line at log10 FLOPs = 0 (an extrapolation)
    change_point: float  # log10 FLOPs where the plateau starts
    rss: float  # weighted residual sum of squares
    n: int  # points fitted

    @property
    def plateau(self) -> float:
        return self.intercept + self.slope * self.change_point

    def predict(self, log10_flops) -> np.ndarray:
        x = np.asarray(log10_flops, np.float64)
        return self.intercept + self.slope * np.minimum(x, self.change_point)

    def parameters(self) -> dict[str, float]:
        return {"slope_per_decade": self.slope, "plateau": self.plateau,
                "change_point_log10_flops": self.change_point, "intercept": self.intercept}

    def log10_flops_to_reach(self, target: float, higher_is_better: bool = True) -> float:
        """Least log10 compute where the curve is at least ``target``; inf if never."""
        sign = 1.0 if higher_is_better else -1.0
        if sign * self.slope <= 0:  # more compute is no better by this fit
            return math.inf
        x = (target - self.intercept) / self.slope
        return x if x <= self.change_point else math.inf


@dataclass(frozen=True)
class SigmoidFit:
    """``value = floor + (plateau - floor) / (1 + exp(-rate * (log10_flops - midpoint)))``.

    ``rate > 0``: the curve goes from ``floor`` at little compute to
    ``plateau`` at much; for a lower-is-better metric the plateau is below.
    """

    kind: ClassVar[str] = "sigmoid"
    n_params: ClassVar[int] = 4

    floor: float
    plateau: float
    midpoint: float  # log10 FLOPs halfway between floor and plateau, where it is steepest
    rate: float  # per decade
    rss: float
    n: int

    @property
    def slope(self) -> float:
        """The steepest slope, per decade, reached at the midpoint."""
        return (self.plateau - self.floor) * self.rate / 4

    def predict(self, log10_flops) -> np.ndarray:
        x = np.asarray(log10_flops, np.float64)
        return self.floor + (self.plateau - self.floor) * _logistic(self.rate * (x - self.midpoint))

    def parameters(self) -> dict[str, float]:
        return {"slope_per_decade": self.slope, "plateau": self.plateau,
                "midpoint_log10_flops": self.midpoint, "floor": self.floor, "rate": self.rate}

    def log10_flops_to_reach(self, target: float, higher_is_better: bool = True) -> float:
        """Least log10 compute where the curve is at least ``target``; -inf if it always
        is, inf if never (the plateau is an asymptote: reaching it takes forever)."""
        sign = 1.0 if higher_is_better else -1.0
        span = self.plateau - self.floor
        if sign * span <= 0:
            return math.inf
        frac = (target - self.floor) / span
        if frac <= 0:
            return -math.inf
        if frac >= 1:
            return math.inf
        return self.midpoint + math.log(frac / (1 - frac)) / self.rate


Fit = ChangePointFit | SigmoidFit


def _logistic(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * z))  # 1 / (1 + exp(-z)) without overflow


def _arrays(log10_flops, values, weights):
    x = np.asarray(log10_flops, np.float64).reshape(-1)
    y = np.asarray(values, np.float64).reshape(-1)
    w = np.ones_like(x) if weights is None else np.asarray(weights, np.float64).reshape(-1)
    if not (len(x) == len(y) == len(w)):
        raise ValueError("log10_flops, values and weights must have one entry per point")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("log10_flops and values must be finite")
    if not np.all((w > 0) & np.isfinite(w)):
        raise ValueError("weights must be positive and finite")
    return x, y, w


def _wls(design: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    sw = np.sqrt(w)
    coef, *_ = np.linalg.lstsq(design * sw[:, None], y * sw, rcond=None)
    return coef


def fit_change_point(log10_flops: Sequence[float], values: Sequence[float],
                     weights: Sequence[float] | None = None) -> ChangePointFit:
    """The least-squares incline-then-plateau, found exactly rather than searched for.

    For a change point between two neighbouring computes, the points left of
    it lie on the line and those right of it on the constant, so the best fit
    there is a line through the left points and a mean of the right ones,
    kept when the two meet between the neighbours (Hudson's two-phase
    regression, 1966); a change point at a measured compute is a linear fit
    in ``min(x, x0)``. The best of all these is the global optimum, with no
    starting value and no optimizer to converge, which the bootstrap's
    thousand refits rely on. The change point stays within the measured
    computes; it needs three distinct ones.
    """
    x, y, w = _arrays(log10_flops, values, weights)
    distinct = np.unique(x)
    if len(distinct) < 3:
        raise ValueError("a change-point fit needs points at three or more distinct computes")
    candidates = []
    for x0 in distinct[1:]:
        a, b = _wls(np.stack([np.ones_like(x), np.minimum(x, x0)], axis=1), y, w)
        candidates.append((a, b, float(x0)))
    for k in range(1, len(distinct) - 1):
        left = x <= distinct[k]
        a, b = _wls(np.stack([np.ones(left.sum()), x[left]], axis=1), y[left], w[left])
        c = float(np.sum(w[~left] * y[~left]) / np.sum(w[~left]))
        if b != 0:
            x0 = (c - a) / b
            if distinct[k] < x0 < distinct[k + 1]:
                candidates.append((a, b, float(x0)))
    best = None
    for a, b, x0 in candidates:
        rss = float(np.sum(w * (y - (a + b * np.minimum(x, x0))) ** 2))
        if best is None or rss < best[0]:
            best = (rss, a, b, x0)
    rss, a, b, x0 = best
    return ChangePointFit(float(b), float(a), x0, rss, len(x))


def fit_sigmoid(log10_flops: Sequence[float], values: Sequence[float],
                weights: Sequence[float] | None = None) -> SigmoidFit:
    """The weighted least-squares logistic curve in log10 FLOPs (needs five points).

    Started from the change-point fit (the same plateau, the midpoint halfway
    up its incline, the same slope there), so both fits describe one curve
    and the optimizer starts near it. Raises RuntimeError when it does not
    converge.
    """
    from scipy.optimize import least_squares

    x, y, w = _arrays(log10_flops, values, weights)
    if len(x) < 5 or len(np.unique(x)) < 4:
        raise ValueError("a sigmoid fit needs five points at four or more distinct computes")
    cp = fit_change_point(x, y, w)
    mid = (x.min() + cp.change_point) / 2
    plateau = cp.plateau
    floor = 2 * float(cp.predict(mid)) - plateau
    rate = 4 * cp.slope / (plateau - floor) if plateau != floor else 1.0
    sw = np.sqrt(w)

    def residuals(theta):
        f, p, m, r = theta
        return sw * (y - (f + (p - f) * _logistic(r * (x - m))))

    start = np.array([floor, plateau, mid, min(max(rate, 1e-3), 50.0)])
    result = least_squares(residuals, start, bounds=([-np.inf, -np.inf, -np.inf, 1e-6],
                                                     [np.inf, np.inf, np.inf, 100.0]),
                           x_scale="jac", method="trf")
    if not result.success or not np.all(np.isfinite(result.x)):
        raise RuntimeError(f"the sigmoid fit did not converge: {result.message}")
    f, p, m, r = (float(v) for v in result.x)
    return SigmoidFit(f, p, m, r, float(np.sum(result.fun ** 2)), len(x))


def aicc(fit: Fit) -> float:
    """Akaike's criterion with the small-sample correction, from the weighted residuals.

    ``n log(rss / n) + 2k + 2k(k+1) / (n - k - 1)``: the weights set the
    points' relative precision, their overall scale is estimated (the points
    may scatter more than their intervals say). Infinite where ``n <= k + 1``.
    """
    n, k = fit.n, fit.n_params
    if n <= k + 1:
        return math.inf
    return n * math.log(max(fit.rss / n, 1e-300)) + 2 * k + 2 * k * (k + 1) / (n - k - 1)


def fit_curve(log10_flops: Sequence[float], values: Sequence[float],
              weights: Sequence[float] | None = None, kind: str = "best") -> Fit:
    """One kind of fit, or ``kind="best"``: the change point unless the sigmoid's AICc is lower."""
    if kind == "change_point":
        return fit_change_point(log10_flops, values, weights)
    if kind == "sigmoid":
        return fit_sigmoid(log10_flops, values, weights)
    if kind != "best":
        raise ValueError(f"unknown fit {kind!r}; one of {', '.join(KINDS)} or 'best'")
    cp = fit_change_point(log10_flops, values, weights)
    try:
        sig = fit_sigmoid(log10_flops, values, weights)
    except (ValueError, RuntimeError):
        return cp
    return sig if aicc(sig) < aicc(cp) else cp


def _point_errors(se, n: int) -> np.ndarray | None:
    """Per-point standard errors; missing ones take the median of the others."""
    if se is None:
        return None
    s = np.asarray(se, np.float64).reshape(-1)
    if len(s) != n:
        raise ValueError("se must have one entry per point")
    given = np.isfinite(s) & (s > 0)
    if not given.any():
        return None
    return np.where(given, s, float(np.median(s[given])))


@dataclass(frozen=True)
class BootstrapFit:
    """A fit, its bootstrap refits, and percentile intervals of its parameters."""

    fit: Fit
    replicates: tuple[Fit, ...]
    level: float
    failed: int  # refits that did not converge (left out of the intervals)
    noise_scale: float  # how much the points' errors were scaled up to match their scatter

    def interval(self, name: str) -> Estimate:
        value = self.fit.parameters()[name]
        reps = np.array([r.parameters()[name] for r in self.replicates])
        return Estimate(value, *percentile_interval(reps, self.level), self.level)

    def intervals(self) -> dict[str, Estimate]:
        return {name: self.interval(name) for name in self.fit.parameters()}


def percentile_interval(replicates: np.ndarray, level: float = DEFAULT_LEVEL
                        ) -> tuple[float, float]:
    """The two-sided percentile interval; order statistics, so infinite replicates
    (a target never reached) stay infinite instead of turning into NaN."""
    r = np.asarray(replicates, np.float64)
    r = r[~np.isnan(r)]
    if not len(r):
        return math.nan, math.nan
    tail = (1 - level) / 2
    low, high = np.quantile(r, [tail, 1 - tail], method="inverted_cdf")
    return float(low), float(high)


def bootstrap_fit(log10_flops: Sequence[float], values: Sequence[float],
                  se: Sequence[float] | None = None, *, kind: str = "best",
                  measurement: Sequence[object] | None = None,
                  reps: int = DEFAULT_FIT_REPS, level: float = DEFAULT_LEVEL,
                  seed: int = 0) -> BootstrapFit:
    """Fit, then refit ``reps`` times to data redrawn around the fitted curve.

    Why not resample the points: a frontier has a handful of points, one per
    compute, and the fit's shape rests on which computes are present; a
    resample that drops the few points past the change point has no plateau
    to fit, and the points' own intervals would be ignored. Instead each
    point is redrawn as the fitted value at its compute plus normal noise of
    its own standard error (``se``, from its interval as ``(high - low) /
    3.92``), a parametric bootstrap. When the points scatter about the fit
    more than their errors say (reduced chi-square above one, say from the
    curve's shape being only approximately right), every error is scaled up
    by that factor, never down. Without ``se`` every point gets the fit's
    residual standard deviation. Weighted fits use ``1 / se**2``. The kind
    (for ``"best"``, chosen by AICc on the data) is kept in every refit.
    ``measurement`` names the measurement behind each point: points with one
    name (a frontier's checkpoint carried over several computes) share one
    error draw, as they share one error. Seeded: the same call gives the
    same intervals.
    """
    x = np.asarray(log10_flops, np.float64).reshape(-1)
    y = np.asarray(values, np.float64).reshape(-1)
    errors = _point_errors(se, len(x))
    weights = None if errors is None else 1.0 / errors**2
    fit = fit_curve(x, y, weights, kind)
    dof = fit.n - fit.n_params
    if dof <= 0:
        return BootstrapFit(fit, (), level, 0, math.nan)
    fitted = fit.predict(x)
    if errors is None:
        scale = 1.0
        errors = np.full(len(x), math.sqrt(float(np.sum((y - fitted) ** 2)) / dof))
    else:
        scale = max(1.0, math.sqrt(float(np.sum(((y - fitted) / errors) ** 2)) / dof))
    noise = errors * scale
    if measurement is None:
        same = np.arange(len(x))
    else:
        if len(measurement) != len(x):
            raise ValueError("measurement must have one entry per point")
        _, same = np.unique(np.asarray([str(m) for m in measurement]), return_inverse=True)
    rng = np.random.default_rng(seed)
    out, failed = [], 0
    for _ in range(reps):
        drawn = fitted + noise * rng.standard_normal(same.max() + 1)[same]
        try:
            out.append(fit_curve(x, drawn, weights, fit.kind))
        except (ValueError, RuntimeError):
            failed += 1
    return BootstrapFit(fit, tuple(out), level, failed, scale)


def compute_to_reach(fit: BootstrapFit | Fit, target: float, *,
                     higher_is_better: bool = True) -> Estimate:
    """FLOPs at which the fitted frontier first reaches ``target``, with the bootstrap's interval.

    ``inf`` where the fit never reaches it (beyond the plateau, or a fit that
    does not improve with compute), ``0`` where it is reached at any compute;
    an interval end may be ``inf`` when some refits never reach it. A bare
    fit gives NaN bounds. Values far outside the measured computes are
    extrapolations of the curve, not measurements.
    """
    if not isinstance(fit, BootstrapFit):
        return Estimate(_flops(fit.log10_flops_to_reach(target, higher_is_better)),
                        math.nan, math.nan)
    value = fit.fit.log10_flops_to_reach(target, higher_is_better)
    reps = np.array([r.log10_flops_to_reach(target, higher_is_better)
                     for r in fit.replicates])
    low, high = percentile_interval(reps, fit.level)
    return Estimate(_flops(value), _flops(low), _flops(high), fit.level)


def _flops(log10: float) -> float:
    if math.isnan(log10) or log10 == -math.inf:
        return 0.0 if log10 == -math.inf else math.nan
    return 10.0**log10 if log10 < 308 else math.inf


@dataclass(frozen=True)
class FamilyFit:
    """One family's frontier of one metric, its kept fit with intervals, and its targets.

    The fit is made to the frontier read at every compute the family measured
    (:func:`~harness.stats.frontier.frontier_steps`), each checkpoint one
    measurement however many computes it holds. ``fit`` is None when there
    are fewer than three such computes; ``aicc`` holds both kinds' criterion (inf where a
    kind could not be fitted), the kept one being the lower (change point on
    a tie); ``reach`` pairs each target with the FLOPs to reach it.
    """

    family: str
    metric: str
    higher_is_better: bool
    corners: tuple[FrontierPoint, ...]
    until: float  # the largest compute the family measured: its last corner holds up to here
    computes: int  # distinct computes the frontier was read (and fitted) at
    fit: BootstrapFit | None
    aicc: dict[str, float]
    reach: tuple[tuple[float, Estimate], ...]


def fit_families(points: Iterable[FrontierPoint], higher_is_better: Direction = True, *,
                 targets: Mapping[str, Sequence[float]] | None = None,
                 reps: int = DEFAULT_FIT_REPS, level: float = DEFAULT_LEVEL,
                 seed: int = 0) -> list[FamilyFit]:
    """The frontier of every family and metric in ``points``, fitted and bootstrapped.

    ``targets`` maps a metric to the values whose compute is wanted. Each
    family's bootstrap has its own seed derived from ``seed`` and its name,
    so adding a family does not change another's intervals.
    """
    points = [p for p in points if math.isfinite(p.value)]
    out = []
    until = measured_until(points)
    computes: dict[tuple[str, str], list[float]] = {}
    for key, members in groups(points).items():
        computes[key] = [p.flops for p in members]
    corners_by = groups(frontier(points, higher_is_better))
    for (family, metric), corners in corners_by.items():
        higher = higher_is_better_for(higher_is_better, metric)
        steps = frontier_steps(corners, computes[family, metric])
        x = [math.log10(c) for c, _ in steps]
        y = [p.value for _, p in steps]
        se = [p.se for _, p in steps]
        held = [corners.index(p) for _, p in steps]
        fit, scores = None, {kind: math.inf for kind in KINDS}
        if len(x) >= 3:
            weights = _point_errors(se, len(x))
            weights = None if weights is None else 1.0 / weights**2
            for kind in KINDS:
                with contextlib.suppress(ValueError, RuntimeError):
                    scores[kind] = aicc(fit_curve(x, y, weights, kind))
            kept = "sigmoid" if scores["sigmoid"] < scores["change_point"] else "change_point"
            # A curve through as many points as it has parameters leaves no
            # residual to judge it by (AICc infinite) and nothing for the
            # bootstrap to resample: no fit rather than one without intervals.
            if math.isfinite(scores[kept]):
                own_seed = seed + zlib.crc32(f"{family}\0{metric}".encode())
                fit = bootstrap_fit(x, y, se, kind=kept, measurement=held, reps=reps,
                                    level=level, seed=own_seed)
        reach = tuple((float(t), compute_to_reach(fit, t, higher_is_better=higher))
                      for t in (targets or {}).get(metric, ())) if fit else ()
        out.append(FamilyFit(family, metric, higher, tuple(corners), until[family, metric],
                             len(x), fit, scores, reach))
    return out
