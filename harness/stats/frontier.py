"""The compute frontier of a family of networks, and where two frontiers separate.

Jones ("Scaling Scaling Laws with Board Games", 2021) measures every run of a
family at log-spaced amounts of training compute and asks, for each amount,
how good the best network trained with at most that much compute is. Here
that is a step function over the family's measured checkpoints: its value at
compute ``C`` is the best value among all checkpoints (of any run of the
family) whose compute is at or below ``C``. Its corners, the checkpoints that
beat every checkpoint at the same or lower compute, are what :func:`frontier`
returns; nothing between two checkpoints is interpolated, so every point of
a frontier is a measured number with its own interval, which the fits and
the comparisons use as they are.

One caution the numbers cannot remove: the best of several noisy values is
biased upward, so where many checkpoints compete (a plateau, runs that
overlap) the frontier sits a little above what any one network would score
again. The intervals of the frontier's points are each point's own interval.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

Z95_WIDTH = 3.92  # a 95% normal interval is 2 x 1.96 standard errors wide


@dataclass(frozen=True)
class FrontierPoint:
    """One checkpoint of one run: its compute, one metric, and that metric's own interval.

    ``low`` and ``high`` are the point's interval (95% unless the caller says
    otherwise); NaN where the measurement has none.
    """

    family: str
    model: str
    params: int
    flops: float  # training compute spent to reach this checkpoint
    metric: str
    value: float
    low: float = math.nan
    high: float = math.nan

    @property
    def log10_flops(self) -> float:
        return math.log10(self.flops)

    @property
    def se(self) -> float:
        """The standard error implied by a 95% interval, NaN without one."""
        width = self.high - self.low
        return width / Z95_WIDTH if math.isfinite(width) and width > 0 else math.nan


Direction = bool | Mapping[str, bool]


def higher_is_better_for(direction: Direction, metric: str) -> bool:
    """The direction of ``metric``: one bool for every metric, or a mapping per metric."""
    if isinstance(direction, bool):
        return direction
    if metric not in direction:
        raise ValueError(f"no direction given for metric {metric!r} (higher or lower is better?)")
    return bool(direction[metric])


def is_better(a: float, b: float, higher_is_better: bool) -> bool:
    """``a`` strictly better than ``b``."""
    return a > b if higher_is_better else a < b


def groups(points: Iterable[FrontierPoint]) -> dict[tuple[str, str], list[FrontierPoint]]:
    """Points by (family, metric), keys sorted, so every caller sees the same order."""
    out: dict[tuple[str, str], list[FrontierPoint]] = {}
    for p in points:
        out.setdefault((p.family, p.metric), []).append(p)
    return {key: out[key] for key in sorted(out)}


def frontier(points: Iterable[FrontierPoint],
             higher_is_better: Direction = True) -> list[FrontierPoint]:
    """The corners of each family's frontier, per metric, in increasing compute.

    A checkpoint is on the frontier when no checkpoint of its family at the
    same or lower compute is at least as good: it is the first to reach the
    best value so far. Of several checkpoints at one compute only the best
    can be (the first in input order on a tie). NaN values are left out.
    """
    out: list[FrontierPoint] = []
    for (_, metric), members in groups(points).items():
        higher = higher_is_better_for(higher_is_better, metric)
        sign = -1.0 if higher else 1.0
        ordered = sorted((p for p in members if math.isfinite(p.value)),
                         key=lambda p: (p.flops, sign * p.value))
        best = None
        for p in ordered:
            if best is None or is_better(p.value, best.value, higher):
                out.append(p)
                best = p
    return out


def measured_until(points: Iterable[FrontierPoint]) -> dict[tuple[str, str], float]:
    """The largest compute measured per (family, metric): where each frontier's knowledge ends."""
    return {key: max(p.flops for p in members) for key, members in groups(points).items()}


def value_at(corners: Sequence[FrontierPoint], flops: float) -> FrontierPoint | None:
    """The frontier's checkpoint in force at ``flops``: the last corner at or below it."""
    found = None
    for p in corners:
        if p.flops <= flops:
            found = p
        else:
            break
    return found


def frontier_steps(corners: Sequence[FrontierPoint],
                   computes: Iterable[float]) -> list[tuple[float, FrontierPoint]]:
    """The frontier read at each of ``computes``: (compute, the checkpoint in force there).

    This is what a fit sees. The corners alone lose a plateau: once a family
    stops improving no new corner appears, however much more compute it
    measured, so a fit to the corners would end at the change point. Read at
    every compute the family measured, the plateau is there as the last
    corner carried on. Computes below the first corner are left out, and
    near-equal computes (:data:`SAME_COMPUTE_DECADES`: two sizes' savepoints
    aimed at one compute land a batch apart) are read once, at the largest,
    so a fit counts the computes that were measured apart.
    """
    out = []
    for c in _merged(computes):
        p = value_at(corners, c)
        if p is not None:
            out.append((c, p))
    return out


@dataclass(frozen=True)
class FrontierComparison:
    """Where two frontiers of one metric separate, over the compute both measured.

    ``a_better`` and ``b_better`` are ranges of compute ``(start, end)`` in
    FLOPs over which one frontier's point interval lies wholly on the better
    side of the other's; ``start == end`` is a single compute at the end of
    the shared range. ``shared`` is that range, NaN when the two do not overlap.
    """

    a: str
    b: str
    metric: str
    higher_is_better: bool
    shared: tuple[float, float]
    a_better: tuple[tuple[float, float], ...]
    b_better: tuple[tuple[float, float], ...]

    @property
    def cross(self) -> bool:
        """Each frontier is separated above the other somewhere: they cross."""
        return bool(self.a_better) and bool(self.b_better)


def _separated(x: FrontierPoint, y: FrontierPoint, higher: bool) -> bool:
    """``x``'s interval wholly on the better side of ``y``'s (no claim without intervals)."""
    if higher:
        return x.low > y.high
    return x.high < y.low


# Computes closer than this (in decades; 0.01 is 2.3%) are one compute when two
# frontiers are compared or a frontier is fitted: savepoints aimed at the same
# FLOPs land a batch apart per network, and reading the step functions between
# them would give a family a lead, or a fit a point, at a sliver of compute
# that nobody measured apart.
SAME_COMPUTE_DECADES = 0.01


def _merged(computes: Iterable[float]) -> list[float]:
    """Sorted computes with each run of near-equal ones (SAME_COMPUTE_DECADES)
    kept as its largest, where every checkpoint of the run is in force."""
    out: list[float] = []
    for c in sorted(computes):
        if out and math.log10(c / out[-1]) < SAME_COMPUTE_DECADES:
            out[-1] = c
        else:
            out.append(c)
    return out


def _ranges(flags: Sequence[bool], grid: Sequence[float]) -> tuple[tuple[float, float], ...]:
    """Runs of true flags as (first compute, compute where the run stops or the last one)."""
    out = []
    start = None
    for i, flag in enumerate(flags):
        if flag and start is None:
            start = grid[i]
        if not flag and start is not None:
            out.append((start, grid[i]))
            start = None
    if start is not None:
        out.append((start, grid[-1]))
    return tuple(out)


def compare_frontiers(a: Sequence[FrontierPoint], b: Sequence[FrontierPoint],
                      higher_is_better: bool = True, *, a_until: float | None = None,
                      b_until: float | None = None) -> FrontierComparison:
    """Compare two frontiers (each one family's corners of one metric, in increasing
    compute as :func:`frontier` returns them) at every compute.

    Both step functions are constant between their corners, so comparing them
    at every corner inside the compute range both measured compares them
    everywhere there. ``a_until`` and ``b_until`` are the largest compute
    each family measured (its last corner when not given): a frontier holds
    its last corner's value up to there, and beyond it nothing was measured
    and nothing is claimed.
    """
    if not a or not b:
        raise ValueError("both frontiers need at least one point")
    names = {(p.family, p.metric) for p in a}, {(p.family, p.metric) for p in b}
    if len(names[0]) != 1 or len(names[1]) != 1:
        raise ValueError("each frontier must hold one family and one metric")
    (fa, metric), (fb, metric_b) = next(iter(names[0])), next(iter(names[1]))
    if metric != metric_b:
        raise ValueError(f"frontiers of different metrics: {metric} and {metric_b}")
    lo = max(a[0].flops, b[0].flops)
    hi = min(a[-1].flops if a_until is None else max(a_until, a[-1].flops),
             b[-1].flops if b_until is None else max(b_until, b[-1].flops))
    # A last checkpoint a batch past the other family's is the same compute.
    near = 10.0 ** SAME_COMPUTE_DECADES
    hi = max([hi, *(p.flops for p in (*a, *b) if hi < p.flops < hi * near)])
    if lo > hi:
        return FrontierComparison(fa, fb, metric, higher_is_better, (math.nan, math.nan), (), ())
    grid = _merged({p.flops for p in (*a, *b) if lo <= p.flops <= hi} | {lo, hi})
    hi = grid[-1]
    at = [(value_at(a, c), value_at(b, c)) for c in grid]
    a_flags = [_separated(x, y, higher_is_better) for x, y in at]
    b_flags = [_separated(y, x, higher_is_better) for x, y in at]
    return FrontierComparison(fa, fb, metric, higher_is_better, (lo, hi),
                              _ranges(a_flags, grid), _ranges(b_flags, grid))
