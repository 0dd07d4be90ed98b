"""Statistics every stage reports with: intervals, paired tests, readable numbers.

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
from harness.stats.numbers import fmt_number, fmt_p, fmt_percent, fmt_with_interval

__all__ = [
    "Difference",
    "Estimate",
    "GroupedMetric",
    "bootstrap",
    "fmt_number",
    "fmt_p",
    "fmt_percent",
    "fmt_with_interval",
    "group_sums",
    "holm",
    "mean_interval",
    "paired_difference",
]
