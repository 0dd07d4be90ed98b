"""Numbers as people read them: no float noise, no scientific notation in tables.

A rating fitted relative to an anchor comes back as ``-5.79e-14`` rather than
0, and ``%.3g`` turns it into exactly that string; a reader then wonders what
the tiny number means. Every table of the harness goes through these.
"""

from __future__ import annotations

import math

from harness.stats.bootstrap import Estimate


def fmt_number(value: float | int | None, decimals: int | None = None) -> str:
    """Fixed-point, thousands separated; decimals by magnitude unless given."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    value = float(value)
    if math.isnan(value):
        return ""
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if decimals is None:
        size = abs(value)
        decimals = 0 if size >= 100 else 1 if size >= 10 else 2 if size >= 1 else 3
    text = f"{value:,.{decimals}f}"
    if float(text.replace(",", "")) == 0:
        return f"{0:.{decimals}f}"  # no "-0.000"
    return text


def fmt_percent(fraction: float | None, decimals: int = 1) -> str:
    """A fraction in [0, 1] as percent without the sign (the column header has the unit)."""
    if fraction is None or math.isnan(float(fraction)):
        return ""
    return fmt_number(100 * float(fraction), decimals)


def fmt_with_interval(estimate: Estimate, *, percent: bool = False, decimals: int = 1) -> str:
    """``41.2 [39.8, 42.6]``: value and interval in one cell."""
    fmt = (lambda v: fmt_percent(v, decimals)) if percent else (
        lambda v: fmt_number(v, decimals))
    if math.isnan(estimate.low) or math.isnan(estimate.high):
        return fmt(estimate.value)
    return f"{fmt(estimate.value)} [{fmt(estimate.low)}, {fmt(estimate.high)}]"


def fmt_p(p: float) -> str:
    """A p-value: three decimals; ``<=0.001`` at the bootstrap's resolution or below."""
    if p is None or math.isnan(p):
        return ""
    return "<=0.001" if p <= 0.001 else f"{p:.3f}"
