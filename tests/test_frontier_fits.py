"""The compute frontier, its fits and its Findings: known laws in, known answers out."""

from __future__ import annotations

import csv
import math

import numpy as np
import pytest

from harness.report.frontier import (
    FITS_COLUMNS,
    FRONTIER_COLUMNS,
    comparison_sentence,
    fmt_flops,
    frontier_findings,
    write_frontier_report,
)
from harness.stats import (
    FrontierPoint,
    bootstrap_fit,
    compare_frontiers,
    compute_to_reach,
    fit_change_point,
    fit_curve,
    fit_families,
    frontier,
    frontier_steps,
    value_at,
)

DECADES = np.arange(8.0, 15.01, 0.5)  # log10 FLOPs: 1e8 to 1e15, two checkpoints a decade


def law(x, slope=10.0, change_point=12.0, plateau=45.0):
    """Jones's frontier: ``slope`` per decade up to ``change_point``, then ``plateau``."""
    return plateau + slope * (np.minimum(x, change_point) - change_point)


def run(family, model, xs, values, half_width=0.0, metric="elo"):
    """One run's checkpoints, each with a symmetric interval of ``half_width``."""
    return [FrontierPoint(family, model, 1_000, 10.0**x, metric, float(v), float(v) - half_width,
                          float(v) + half_width) for x, v in zip(xs, values, strict=True)]


# --- the fit -----------------------------------------------------------------------------------


def test_a_noiseless_law_is_fitted_exactly_even_between_two_checkpoints():
    fit = fit_change_point(DECADES, law(DECADES, change_point=11.7))
    assert fit.slope == pytest.approx(10.0)
    assert fit.change_point == pytest.approx(11.7)  # between the checkpoints at 11.5 and 12
    assert fit.plateau == pytest.approx(45.0)
    assert fit.rss == pytest.approx(0.0, abs=1e-18)


def test_the_bootstrap_covers_the_law_the_noisy_points_came_from():
    rng = np.random.default_rng(7)
    se = np.full(len(DECADES), 0.8)
    values = law(DECADES) + rng.normal(0.0, se)
    boot = bootstrap_fit(DECADES, values, se, kind="change_point", reps=400, seed=1)
    slope = boot.interval("slope_per_decade")
    assert slope.covers(10.0)
    assert boot.interval("change_point_log10_flops").covers(12.0)
    assert boot.interval("plateau").covers(45.0)
    assert slope.high - slope.low < slope.value  # the slope is measured, not just its sign
    assert boot.failed == 0
    reach = compute_to_reach(boot, 25.0)  # 45 - 10 * 2 decades: 1e10 FLOPs
    assert reach.low < 1e10 < reach.high
    assert compute_to_reach(boot, 60.0).value == math.inf  # above the plateau


def test_points_that_are_one_measurement_move_together_in_the_bootstrap():
    values = law(DECADES)
    boot = bootstrap_fit(DECADES, values, np.ones(len(DECADES)), kind="change_point",
                         measurement=["one"] * len(DECADES), reps=50)
    slope = boot.interval("slope_per_decade")  # every refit: the same curve, shifted
    assert slope.high - slope.low == pytest.approx(0.0, abs=1e-9)
    assert boot.interval("plateau").high - boot.interval("plateau").low > 1.0


def test_the_bootstrap_is_seeded():
    values = law(DECADES) + np.random.default_rng(3).normal(0.0, 1.0, len(DECADES))
    one = bootstrap_fit(DECADES, values, np.ones(len(DECADES)), reps=50, seed=5)
    two = bootstrap_fit(DECADES, values, np.ones(len(DECADES)), reps=50, seed=5)
    assert one.intervals() == two.intervals()


def test_the_sigmoid_is_kept_only_for_a_curve_that_bends_into_its_plateau():
    sigmoid = 10 + 40 / (1 + np.exp(-1.5 * (DECADES - 11)))
    rng = np.random.default_rng(2)
    kept = fit_curve(DECADES, sigmoid + rng.normal(0, 0.2, len(DECADES)))
    assert kept.kind == "sigmoid"
    assert kept.midpoint == pytest.approx(11.0, abs=0.1)
    assert kept.plateau == pytest.approx(50.0, abs=0.5)
    assert kept.slope == pytest.approx(40 * 1.5 / 4, rel=0.05)  # steepest, at the midpoint
    corner = fit_curve(DECADES, law(DECADES) + rng.normal(0, 0.2, len(DECADES)))
    assert corner.kind == "change_point"


def test_a_lower_is_better_metric_falls_to_its_floor_and_is_reached_from_above():
    mse = law(DECADES, slope=-0.05, plateau=0.55)  # 0.75 at 1e8 FLOPs, 0.55 from 1e12
    points = run("a", "a.1", DECADES, mse, metric="value_mse")
    assert [p.value for p in frontier(points, higher_is_better=False)] == sorted(
        set(mse), reverse=True)  # every improvement, none of the plateau's repeats
    fit = fit_change_point(DECADES, mse)
    assert fit.slope == pytest.approx(-0.05)
    assert compute_to_reach(fit, 0.65, higher_is_better=False).value == pytest.approx(1e10)
    assert compute_to_reach(fit, 0.5, higher_is_better=False).value == math.inf  # below floor
    assert compute_to_reach(fit, 0.65, higher_is_better=True).value == math.inf  # never "higher"


# --- the frontier ------------------------------------------------------------------------------


def test_the_frontier_of_two_runs_is_their_upper_envelope_and_switches_where_the_big_one_leads():
    xs = [8, 9, 10, 11, 12]
    small = run("f", "small", xs, [20, 30, 35, 35.5, 35.6])  # plateaus early
    big = run("f", "big", xs, [10, 20, 32, 40, 45])  # starts lower, ends higher
    corners = frontier(small + big)
    assert [(p.model, p.log10_flops) for p in corners] == [
        ("small", 8), ("small", 9), ("small", 10), ("big", 11), ("big", 12)]
    assert value_at(corners, 5e10).model == "small"  # between checkpoints: the last one below
    assert value_at(corners, 1e7) is None


def test_a_plateau_is_read_at_every_measured_compute_though_no_new_corner_appears():
    points = run("f", "a", DECADES, law(DECADES))  # flat from 1e12: no corner after it
    corners = frontier(points)
    assert corners[-1].log10_flops == 12
    steps = frontier_steps(corners, [p.flops for p in points])
    assert [(round(math.log10(c), 1), p.log10_flops) for c, p in steps[-3:]] == [
        (14.0, 12), (14.5, 12), (15.0, 12)]
    (fit,) = fit_families(points, reps=20)
    assert fit.computes == len(DECADES)
    assert fit.fit.fit.change_point == pytest.approx(12.0)


def test_two_sizes_savepoints_a_batch_apart_are_one_compute_to_the_fit():
    # Both sizes aim at the same savepoints; the smaller one's land 1% short
    # (a batch), so its points sit just below the larger one's.
    small = run("f", "small", DECADES - 0.004, law(DECADES, change_point=11.0) + 1.0)
    big = run("f", "big", DECADES, law(DECADES))
    steps = frontier_steps(frontier(small + big), [p.flops for p in small + big])
    assert [round(math.log10(c), 2) for c, _ in steps] == [round(x, 2) for x in DECADES]
    (fit,) = fit_families(small + big, reps=20)
    assert fit.computes == len(DECADES)


def test_a_checkpoint_no_better_than_an_earlier_one_is_not_on_the_frontier():
    points = run("f", "a", [8, 9, 10], [30, 30, 29])
    assert [p.log10_flops for p in frontier(points)] == [8]


# --- Findings ----------------------------------------------------------------------------------


def family(name, shift, half_width, slope=10.0, metric="elo"):
    """A family of two runs following ``law`` (plus ``shift``), the second from 1e10 on."""
    low, high = DECADES[DECADES <= 12], DECADES[DECADES >= 10]
    return (run(name, f"{name}.small", low, law(low, slope) + shift, half_width, metric)
            + run(name, f"{name}.big", high, law(high, slope) + shift + 0.5, half_width, metric))


def findings(points, **kwargs):
    return frontier_findings(fit_families(points, True, reps=150, **kwargs))


def test_separated_frontiers_give_an_above_sentence_with_its_compute_range():
    text = findings(family("wide", 8.0, 1.0) + family("narrow", 0.0, 1.0))
    above = [s for s in text if "frontier is above" in s]
    assert above == ["`wide`'s frontier is above `narrow`'s in Elo from 1.0e8 to 1.0e15 FLOPs, "
                     "their points' intervals separated; elsewhere they are not separated "
                     "(the compute both measured: from 1.0e8 to 1.0e15 FLOPs)."]
    assert not any("cross" in s for s in text)


def test_overlapping_frontiers_give_no_claim():
    text = findings(family("a", 0.0, 3.0) + family("b", 1.0, 3.0))
    assert not any("is above" in s or "cross" in s or "is steeper" in s for s in text)
    assert ("`a` and `b`: their frontiers' intervals in Elo overlap at every compute both "
            "measured (from 1.0e8 to 1.0e15 FLOPs), so neither leads.") in text
    assert any(s.startswith("`a` and `b`: the slopes of their frontiers in Elo are not separated")
               for s in text)


def test_crossing_frontiers_give_a_cross_sentence_and_the_steeper_family():
    early = family("early", 0.0, 0.5, slope=5.0)  # plateau 45, five per decade
    late = family("late", 15.0, 0.5, slope=15.0)  # plateau 60, fifteen per decade
    text = findings(early + late)
    cross = [s for s in text if "cross" in s]
    assert len(cross) == 1
    assert cross[0].startswith("The frontiers of `early` and `late` cross in Elo: `early`'s is "
                               "above from 1.0e8 to ")
    assert any(s.startswith("`late`'s frontier is steeper than `early`'s in Elo: 15 [")
               for s in text)


def test_each_family_gets_its_fit_and_its_targets_in_a_sentence():
    text = findings(run("a", "a.1", DECADES, law(DECADES), 0.5), targets={"elo": [25.0, 100.0]})
    assert text[1].startswith("`a`, Elo: the frontier rises 10 [")
    assert "up to 1.0e12 [" in text[1]
    assert "then plateaus at 45 [" in text[1]
    assert text[2].startswith("`a` reaches 25 Elo at 1.0e10 [")
    assert text[3] == ("`a` does not reach 100 Elo by its fit: the target is at or beyond "
                       "the plateau its frontier approaches.")


def test_a_frontier_that_bends_into_its_plateau_is_described_as_a_sigmoid():
    values = 10 + 40 / (1 + np.exp(-1.5 * (DECADES - 11)))
    text = findings(run("a", "a.1", DECADES, values, 0.2))
    assert text[1].startswith("`a`, Elo: the frontier follows a sigmoid in log10 compute that "
                              "rises at most 15 [")
    assert "(at 1.0e11 [" in text[1]
    assert "toward a plateau of 50 [" in text[1]


def test_a_frontier_too_short_to_fit_says_so():
    text = findings(run("a", "a.1", [8, 9], [1.0, 2.0], 0.1))
    assert text[1] == ("`a`, Elo: too few measured computes to fit a frontier "
                       "(2; a fit with intervals needs 5).")


def test_three_computes_give_no_fit_without_intervals():
    # A change point through three points fits them exactly: no residual, no
    # interval, so no slope is claimed (the bundled study's three savepoints).
    (fit,) = fit_families(run("a", "a.1", [10, 10.5, 11], [1.0, 2.0, 2.5], 0.1), reps=20)
    assert fit.fit is None and fit.computes == 3
    text = findings(run("a", "a.1", [10, 10.5, 11], [1.0, 2.0, 2.5], 0.1))
    assert "No family has the 5 measured computes a fit with intervals needs" in text[0]
    assert text[1].startswith("`a`, Elo: too few measured computes to fit a frontier (3;")


def test_savepoints_a_batch_apart_are_compared_at_one_compute():
    # Both families aimed at 1e10, 1e11 and 1e12 FLOPs; at 1e11 their
    # checkpoints landed 1% apart, `a`'s first. Read between the two, `a`'s new
    # point would face `b`'s old one and win a sliver of compute that was never
    # measured apart; at one compute `b` is above from 1e11 on, and that is all.
    a = frontier(run("a", "a.1", [10.0, 10.998, 12.0], [1.0, 3.0, 4.0], 0.5))
    b = frontier(run("b", "b.1", [10.0, 11.002, 12.0], [1.0, 5.0, 6.0], 0.5))
    compared = compare_frontiers(a, b)
    assert compared.a_better == ()
    assert compared.b_better == ((10.0 ** 11.002, 10.0 ** 12),)


def test_frontiers_that_share_no_compute_are_not_compared():
    a = frontier(run("a", "a.1", [8, 9], [1.0, 2.0], 0.1))
    b = frontier(run("b", "b.1", [10, 11], [5.0, 6.0], 0.1))
    assert math.isnan(compare_frontiers(a, b).shared[0])


def test_flops_read_as_two_digits_and_an_exponent():
    assert [fmt_flops(v) for v in (3.16e11, 1e8, math.inf, 0.0)] == [
        "3.2e11", "1.0e8", "not reached", "0"]


# --- files -------------------------------------------------------------------------------------


def test_the_writer_makes_the_tables_the_figure_and_a_report_opening_with_findings(tmp_path):
    points = (run("a", "a.1", DECADES, law(DECADES, 0.10, 12, 0.45), 0.01, "policy_top1")
              + run("b", "b.1", DECADES, law(DECADES, 0.08, 11, 0.35), 0.01, "policy_top1")
              + run("b", "b.1", DECADES, law(DECADES, -0.10, 12, 0.30), 0.01, "value_mse"))
    returned = write_frontier_report(points, tmp_path, targets={"policy_top1": [0.4]}, reps=60)
    with open(tmp_path / "frontier.csv", newline="") as f:
        rows = list(csv.reader(f))
    assert tuple(rows[0]) == FRONTIER_COLUMNS
    assert {r[4] for r in rows[1:]} == {"policy_top1", "value_mse"}
    with open(tmp_path / "fits.csv", newline="") as f:
        fits = list(csv.DictReader(f))
    assert tuple(fits[0]) == FITS_COLUMNS
    slopes = {(r["family"], r["metric"]): float(r["value"]) for r in fits
              if r["parameter"] == "slope_per_decade"}
    assert slopes == {("a", "policy_top1"): pytest.approx(0.10),
                      ("b", "policy_top1"): pytest.approx(0.08),
                      ("b", "value_mse"): pytest.approx(-0.10)}
    assert "flops_to_reach_0.4" in {r["parameter"] for r in fits if r["family"] == "a"}
    for metric in ("policy_top1", "value_mse"):
        assert (tmp_path / f"frontier-{metric}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    report = (tmp_path / "report.md").read_text()
    assert report.startswith("# Compute frontier\n\n## Findings\n\n- ")
    assert report.index("## Findings") < report.index("## Fits")
    assert all(f"- {s}" in report for s in returned)
    assert "`b`, value MSE: the frontier falls 0.100 [" in report


def test_a_metric_without_a_stated_direction_is_refused(tmp_path):
    with pytest.raises(ValueError, match="higher or lower"):
        write_frontier_report(run("a", "a.1", [8, 9, 10], [1, 2, 3], metric="loss"), tmp_path)


def test_a_lead_that_changes_at_a_savepoint_is_said_to_change_there():
    a = frontier(run("a", "a.1", [10, 11, 12], [5.0, 5.0, 5.0], 0.5))
    b = frontier(run("b", "b.1", [10, 11, 12], [1.0, 9.0, 9.0], 0.5))
    sentence = comparison_sentence(compare_frontiers(a, b, a_until=1e12, b_until=1e12))
    assert "the lead changes at 1.0e11 FLOPs" in sentence and "between" not in sentence


def test_last_savepoints_a_batch_apart_are_compared_with_each_other():
    # Both end at 1e11 FLOPs, `a`'s checkpoint 1% past `b`'s: at the end `a`'s
    # last point (9) faces `b`'s last (2), not `a`'s previous one (3).
    a = frontier(run("a", "a.1", [10.0, 11.002], [3.0, 9.0], 0.5))
    b = frontier(run("b", "b.1", [10.0, 10.998], [1.0, 2.0], 0.5))
    compared = compare_frontiers(a, b)
    assert compared.b_better == ()
    assert compared.a_better == ((1e10, 10.0 ** 11.002),)
