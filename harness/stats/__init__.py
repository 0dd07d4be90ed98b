"""Statistics every stage reports with: intervals, paired tests, readable numbers,
compute frontiers and their fits.

Pure numpy and scipy, no other harness import, so any stage may use it.
"""

from harness.stats.bootstrap import (
    Difference,
    Estimate,
    GroupedMetric,
    bootstrap,
    group_sums,
    holm,
    mean_interval,
    paired_difference,
)
from harness.stats.frontier import (
    FrontierComparison,
    FrontierPoint,
    compare_frontiers,
    frontier,
    frontier_steps,
    higher_is_better_for,
    measured_until,
    value_at,
)
from harness.stats.frontier_fits import (
    BootstrapFit,
    ChangePointFit,
    FamilyFit,
    SigmoidFit,
    aicc,
    bootstrap_fit,
    compute_to_reach,
    fit_change_point,
    fit_curve,
    fit_families,
    fit_sigmoid,
)
from harness.stats.numbers import fmt_number, fmt_p, fmt_percent, fmt_with_interval

__all__ = [
    "BootstrapFit",
    "ChangePointFit",
    "Difference",
    "Estimate",
    "FamilyFit",
    "FrontierComparison",
    "FrontierPoint",
    "GroupedMetric",
    "SigmoidFit",
    "aicc",
    "bootstrap",
    "bootstrap_fit",
    "compare_frontiers",
    "compute_to_reach",
    "fit_change_point",
    "fit_curve",
    "fit_families",
    "fit_sigmoid",
    "fmt_number",
    "fmt_p",
    "fmt_percent",
    "fmt_with_interval",
    "frontier",
    "frontier_steps",
    "group_sums",
    "higher_is_better_for",
    "holm",
    "mean_interval",
    "measured_until",
    "paired_difference",
    "value_at",
]
