"""The compute-frontier report: tables, one figure per metric, and its Findings.

What :mod:`harness.stats.frontier` and :mod:`harness.stats.frontier_fits`
compute, put into files a study keeps (``frontier.csv``, ``fits.csv``,
``frontier-<metric>.png``, ``report.md``) and into sentences a report can
include. A sentence says one frontier is above another, that two cross, or
that one rises faster, only where the intervals separate (the points' own
intervals for the frontiers, the bootstrap's for the slopes); otherwise it
says they are not separated, with the numbers.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from harness.figures import save_figure
from harness.files import atomic_write, csv_text, format_table
from harness.stats import (
    Estimate,
    FamilyFit,
    FrontierComparison,
    FrontierPoint,
    compare_frontiers,
    fit_families,
    fmt_number,
)
from harness.stats.frontier_fits import DEFAULT_FIT_REPS, MIN_FIT_COMPUTES
from harness.train.metrics import METRIC_INFO

FRONTIER_COLUMNS = ("family", "model", "params", "flops", "metric", "value", "low", "high")
FITS_COLUMNS = ("family", "metric", "parameter", "value", "low", "high")


@dataclass(frozen=True)
class MetricText:
    """How a metric reads in sentences: its name, the factor and unit of its values."""

    name: str
    scale: float  # a fraction shown in percent: 100
    decimals: int
    unit: str  # after a value
    step: str  # what a difference is counted in, before "per decade"


def metric_text(metric: str) -> MetricText:
    """The validation metrics as the rest of the report names them; Elo; anything else plain."""
    info = METRIC_INFO.get(metric)
    if info is not None and info.percent:
        return MetricText(info.name, 100.0, 1, " %", "points")
    if info is not None:
        return MetricText(info.name, 1.0, 3, "", "")
    if metric == "elo":
        return MetricText("Elo", 1.0, 0, " Elo", "Elo")
    return MetricText(metric, 1.0, 3, "", "")


def default_directions(metrics: Iterable[str]) -> dict[str, bool]:
    """Higher is better for accuracies and Elo, lower for value MSE; others must be stated."""
    out = {}
    for metric in metrics:
        if metric in METRIC_INFO:
            out[metric] = METRIC_INFO[metric].higher_is_better
        elif metric == "elo":
            out[metric] = True
        else:
            raise ValueError(f"say whether higher or lower {metric!r} is better "
                             "(higher_is_better={...})")
    return out


# --- numbers in sentences ----------------------------------------------------------------------


def fmt_flops(flops: float) -> str:
    """``3.2e11``: compute spans many decades, so two digits and the exponent."""
    if math.isnan(flops):
        return ""
    if math.isinf(flops):
        return "not reached"
    if flops == 0:
        return "0"
    return f"{flops:.1e}".replace("e+", "e").replace("e0", "e")


def _flops_interval(e: Estimate) -> str:
    if math.isnan(e.low) or math.isnan(e.high):
        return fmt_flops(e.value)
    return f"{fmt_flops(e.value)} [{fmt_flops(e.low)}, {fmt_flops(e.high)}]"


def _value(v: float, text: MetricText) -> str:
    return fmt_number(v * text.scale, text.decimals)


def _interval(e: Estimate, text: MetricText, sign: float = 1.0) -> str:
    """A value and its interval, times ``sign`` (the interval's ends swap when negative)."""
    low, high = sorted((sign * e.low, sign * e.high))
    body = _value(sign * e.value, text)
    if math.isnan(low) or math.isnan(high):
        return body
    return f"{body} [{_value(low, text)}, {_value(high, text)}]"


def _per_decade(text: MetricText) -> str:
    return f"{text.step} per decade".strip()


def _range(r: tuple[float, float]) -> str:
    start, end = fmt_flops(r[0]), fmt_flops(r[1])
    # A savepoint and the FLOPs its checkpoint recorded differ in the last digits.
    return f"at {start}" if start == end else f"from {start} to {end}"


def _between(first: float, second: float) -> str:
    """Where a lead changes: between two computes, or at one where they print alike."""
    low, high = fmt_flops(first), fmt_flops(second)
    return f"at {low}" if low == high else f"between {low} and {high}"


# --- Findings ----------------------------------------------------------------------------------


def _fit_sentence(f: FamilyFit) -> str:
    text = metric_text(f.metric)
    head = f"`{f.family}`, {text.name}:"
    if f.fit is None:
        return (f"{head} too few measured computes to fit a frontier ({f.computes}; a fit "
                f"with intervals needs {MIN_FIT_COMPUTES}).")
    fit, iv = f.fit.fit, f.fit.intervals()
    slope = iv["slope_per_decade"]
    verb = "rises" if fit.slope >= 0 else "falls"
    sign = 1.0 if fit.slope >= 0 else -1.0
    flat = " (the interval includes no change)" if slope.low <= 0 <= slope.high else ""
    plateau = f"{_interval(iv['plateau'], text)}{text.unit}"
    other = "sigmoid" if fit.kind == "change_point" else "change_point"
    criterion = (f"AICc {fmt_number(f.aicc[fit.kind], 1)} against "
                 f"{fmt_number(f.aicc[other], 1) if math.isfinite(f.aicc[other]) else 'none'} "
                 f"for the {other.replace('_', '-')} fit; read at {f.computes} computes")
    if f.fit.failed:
        criterion += f"; {f.fit.failed} of the bootstrap's refits did not converge"
    if fit.kind == "change_point":
        turn = _power(iv["change_point_log10_flops"])
        if fit.change_point >= math.log10(f.until):
            shape = (f"{verb} {_interval(slope, text, sign)} {_per_decade(text)}{flat} over all "
                     "the measured compute: no plateau is seen (the change point falls at the "
                     "largest compute)")
        else:
            shape = (f"{verb} {_interval(slope, text, sign)} {_per_decade(text)}{flat} up to "
                     f"{_flops_interval(turn)} FLOPs, then plateaus at {plateau}")
        return f"{head} the frontier {shape} (change-point fit, {criterion})."
    mid = _power(iv["midpoint_log10_flops"])
    return (f"{head} the frontier follows a sigmoid in log10 compute that {verb} at most "
            f"{_interval(slope, text, sign)} {_per_decade(text)}{flat} (at "
            f"{_flops_interval(mid)} FLOPs) toward a plateau of {plateau} ({criterion}).")


def _power(e: Estimate) -> Estimate:
    return Estimate(10.0**e.value, 10.0**e.low, 10.0**e.high, e.level)


def _reach_sentences(f: FamilyFit) -> list[str]:
    text = metric_text(f.metric)
    out = []
    for target, e in f.reach:
        goal = f"{_value(target, text)}{text.unit}"
        goal = goal if text.name in text.unit else f"{goal} {text.name}"
        if math.isinf(e.value):
            out.append(f"`{f.family}` does not reach {goal} by its fit: the target "
                       "is at or beyond the plateau its frontier approaches.")
        else:
            outside = (" (extrapolated below the measured compute)"
                       if e.value < f.corners[0].flops else "")
            out.append(f"`{f.family}` reaches {goal} at {_flops_interval(e)} FLOPs "
                       f"by its fit{outside}.")
    return out


def comparison_sentence(c: FrontierComparison) -> str:
    """One sentence on two frontiers: above, crossing, or not separated anywhere both measured."""
    text = metric_text(c.metric)
    where = "above" if c.higher_is_better else "below"
    if math.isnan(c.shared[0]):
        return (f"`{c.a}` and `{c.b}`: their frontiers in {text.name} share no measured compute, "
                "so they are not compared.")
    shared = f"the compute both measured: {_range(c.shared)} FLOPs"
    if c.cross:
        (first, r1), (second, r2) = sorted(((c.a, c.a_better), (c.b, c.b_better)),
                                           key=lambda item: item[1][0][0])
        switch = max(end for _, end in r1 if end <= r2[0][0])
        return (f"The frontiers of `{c.a}` and `{c.b}` cross in {text.name}: `{first}`'s is "
                f"{where} {_ranges(r1)} FLOPs, `{second}`'s {_ranges(r2)} FLOPs, their points' "
                f"intervals separated; the lead changes {_between(switch, r2[0][0])} FLOPs "
                f"({shared}).")
    for winner, loser, ranges in ((c.a, c.b, c.a_better), (c.b, c.a, c.b_better)):
        if ranges:
            return (f"`{winner}`'s frontier is {where} `{loser}`'s in {text.name} "
                    f"{_ranges(ranges)} FLOPs, their points' intervals separated; elsewhere "
                    f"they are not separated ({shared}).")
    return (f"`{c.a}` and `{c.b}`: their frontiers' intervals in {text.name} overlap at every "
            f"compute both measured ({_range(c.shared)} FLOPs), so neither leads.")


def _ranges(ranges: Sequence[tuple[float, float]]) -> str:
    return " and ".join(_range(r) for r in ranges)


def slope_sentence(a: FamilyFit, b: FamilyFit) -> str:
    """Which frontier improves faster per decade, claimed only when the intervals separate."""
    text = metric_text(a.metric)
    sign = 1.0 if a.higher_is_better else -1.0  # improvement per decade

    def gain(f: FamilyFit) -> tuple[Estimate, float, float]:
        e = f.fit.interval("slope_per_decade")
        low, high = sorted((sign * e.low, sign * e.high))
        return e, low, high

    (ea, lo_a, hi_a), (eb, lo_b, hi_b) = gain(a), gain(b)
    kinds = " and ".join(sorted({f.fit.fit.kind.replace("_", "-") for f in (a, b)}))
    if lo_a > hi_b or lo_b > hi_a:
        (fast, ef), (slow, es) = ((a, ea), (b, eb)) if lo_a > hi_b else ((b, eb), (a, ea))
        return (f"`{fast.family}`'s frontier is steeper than `{slow.family}`'s in {text.name}: "
                f"{_interval(ef, text, sign)} against {_interval(es, text, sign)} "
                f"{_per_decade(text)} of improvement ({kinds} fits; intervals separated).")
    return (f"`{a.family}` and `{b.family}`: the slopes of their frontiers in {text.name} are "
            f"not separated ({_interval(ea, text, sign)} against {_interval(eb, text, sign)} "
            f"{_per_decade(text)} of improvement; {kinds} fits).")


def frontier_findings(fits: Sequence[FamilyFit]) -> list[str]:
    """The Findings of a frontier study, in order: how they were made, each family's fit and
    targets, then every two families of a metric: their frontiers and their slopes."""
    if not fits:
        return []
    reps = max((len(f.fit.replicates) + f.fit.failed for f in fits if f.fit), default=0)
    how_fitted = ("Fits are in log10 FLOPs (an incline then a plateau, or a sigmoid, whichever "
                  f"has the lower AICc), with 95% intervals from {reps:,} parametric bootstrap "
                  "refits." if reps else
                  f"No family has the {MIN_FIT_COMPUTES} measured computes a fit with intervals "
                  "needs, so no slope or plateau is claimed.")
    out = ["Each family's frontier is, at every compute, its best checkpoint trained with at "
           "most that compute; frontiers are compared by their points' own 95% intervals. "
           + how_fitted]
    for f in fits:
        out.append(_fit_sentence(f))
        out.extend(_reach_sentences(f))
    metrics = sorted({f.metric for f in fits})
    for metric in metrics:
        members = [f for f in fits if f.metric == metric]
        for a, b in itertools.combinations(members, 2):
            out.append(comparison_sentence(compare_frontiers(
                a.corners, b.corners, a.higher_is_better, a_until=a.until, b_until=b.until)))
            if a.fit is not None and b.fit is not None:
                out.append(slope_sentence(a, b))
    return out


# --- files -------------------------------------------------------------------------------------


def _cell(v: float) -> object:
    return "" if isinstance(v, float) and math.isnan(v) else v


def frontier_rows(fits: Sequence[FamilyFit]) -> list[list[object]]:
    return [[p.family, p.model, p.params, p.flops, p.metric, p.value, _cell(p.low), _cell(p.high)]
            for f in fits for p in f.corners]


def fit_rows(fits: Sequence[FamilyFit]) -> list[list[object]]:
    """Every parameter of the kept fit with its interval, the FLOPs to reach each target,
    and both kinds' AICc (the lower one is the fit kept; its parameter names say which)."""
    rows: list[list[object]] = []
    for f in fits:
        if f.fit is None:
            continue
        for name, e in f.fit.intervals().items():
            rows.append([f.family, f.metric, name, e.value, _cell(e.low), _cell(e.high)])
        for target, e in f.reach:
            rows.append([f.family, f.metric, f"flops_to_reach_{target:g}", e.value,
                         _cell(e.low), _cell(e.high)])
        for kind, score in f.aicc.items():
            rows.append([f.family, f.metric, f"aicc_{kind}", score, "", ""])
    return rows


def _readable_rows(fits: Sequence[FamilyFit]) -> list[list[str]]:
    rows = []
    for f in fits:
        text = metric_text(f.metric)
        if f.fit is None:
            rows.append([f.family, text.name, "none", "", "", "", str(f.computes)])
            continue
        iv = f.fit.intervals()
        turn = iv.get("change_point_log10_flops") or iv["midpoint_log10_flops"]
        rows.append([f.family, text.name, f.fit.fit.kind.replace("_", " "),
                     _interval(iv["slope_per_decade"], text),
                     _interval(iv["plateau"], text), _flops_interval(_power(turn)),
                     str(f.computes)])
    return rows


# What a frontier's FLOPs count, by default: a supervised study's training FLOPs.
TRAINING_COMPUTE = "training compute (FLOPs)"


def plot_frontier(points: Sequence[FrontierPoint], fits: Sequence[FamilyFit], metric: str,
                  path: str | Path, compute: str = TRAINING_COMPUTE) -> Path:
    """Every run faint, each family's frontier bold with its points' intervals, its fit
    dashed; ``compute`` names the x axis."""
    text = metric_text(metric)
    members = [f for f in fits if f.metric == metric]
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    for i, f in enumerate(members):
        colour = colours[i % len(colours)]
        runs: dict[str, list[FrontierPoint]] = {}
        for p in points:
            if p.family == f.family and p.metric == metric and math.isfinite(p.value):
                runs.setdefault(p.model, []).append(p)
        for run in runs.values():
            run.sort(key=lambda p: p.flops)
            ax.plot([p.flops for p in run], [p.value * text.scale for p in run], color=colour,
                    alpha=0.25, lw=1, marker=".", ms=3)
        flops = np.array([p.flops for p in f.corners])
        values = np.array([p.value for p in f.corners]) * text.scale
        ax.step([*flops, f.until], [*values, values[-1]], where="post", color=colour, lw=2.4,
                label=f.family)
        below = np.nan_to_num(values - np.array([p.low for p in f.corners]) * text.scale)
        above = np.nan_to_num(np.array([p.high for p in f.corners]) * text.scale - values)
        ax.errorbar(flops, values, yerr=[np.maximum(below, 0), np.maximum(above, 0)], fmt="o",
                    color=colour, ms=4, capsize=2)
        if f.fit is not None:
            xs = np.linspace(np.log10(flops.min()), np.log10(f.until), 200)
            ax.plot(10.0**xs, f.fit.fit.predict(xs) * text.scale, "--", color=colour, lw=1.5)
    ax.set_xscale("log")
    ax.set_xlabel(compute)
    ax.set_ylabel(f"{text.name}{' (%)' if text.unit == ' %' else ''}")
    better = "higher" if members and members[0].higher_is_better else "lower"
    ax.set_title(f"Compute frontier: {text.name} ({better} is better)")
    ax.grid(True, which="major", alpha=0.3)
    if members:
        ax.legend()
    return save_figure(fig, path)


def _safe(name: str) -> str:
    return re.sub(r"[^\w.-]", "_", name)


def write_frontier_report(points: Sequence[FrontierPoint], out_dir: str | Path, *,
                          targets: Mapping[str, Sequence[float]] | None = None,
                          higher_is_better: Mapping[str, bool] | None = None,
                          reps: int = DEFAULT_FIT_REPS, seed: int = 0,
                          sections: Sequence[str] = (),
                          compute: str = TRAINING_COMPUTE) -> list[str]:
    """Fit every family's frontier and write ``frontier.csv``, ``fits.csv``,
    ``frontier-<metric>.png`` and ``report.md`` (Findings, the fits, then
    ``sections``: Markdown lines a study adds, such as how it rated) into ``out_dir``;
    ``compute`` names what the FLOPs count, on the figures' x axis.

    ``targets`` maps a metric to values (in the metric's own units, e.g.
    0.45 for top-1) whose compute is wanted; ``higher_is_better`` overrides
    or adds metric directions. Returns the Findings, for a larger report.
    """
    points = list(points)
    out = Path(out_dir)
    directions = default_directions(m for m in {p.metric for p in points}
                                    if m not in (higher_is_better or {}))
    directions.update(higher_is_better or {})
    fits = fit_families(points, directions, targets=targets, reps=reps, seed=seed)
    findings = frontier_findings(fits)
    atomic_write(out / "frontier.csv", csv_text(FRONTIER_COLUMNS, frontier_rows(fits)))
    atomic_write(out / "fits.csv", csv_text(FITS_COLUMNS, fit_rows(fits)))
    figures = []
    for metric in sorted({f.metric for f in fits}):
        name = f"frontier-{_safe(metric)}.png"
        plot_frontier(points, fits, metric, out / name, compute)
        figures.append(f"![{metric_text(metric).name}]({name})")
    header = ["family", "metric", "fit", "slope per decade", "plateau", "turns at (FLOPs)",
              "computes"]
    lines = ["# Compute frontier", "", "## Findings", "", *[f"- {s}" for s in findings], "",
             "## Fits", "", format_table(header, _readable_rows(fits)), "",
             "Slope per decade: the incline of a change-point fit, or a sigmoid's steepest "
             "slope; turns at: the change point, or the sigmoid's midpoint. Every number with "
             "its 95% bootstrap interval; all parameters in `fits.csv`, the frontier's points "
             "in `frontier.csv`.", "", *sections, "## Figures", "", *figures, ""]
    atomic_write(out / "report.md", "\n".join(lines))
    return findings
