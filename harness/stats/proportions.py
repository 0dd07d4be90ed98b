"""A win rate's interval: Wilson's score interval for a binomial proportion.

A match between two raw networks is a handful to a few hundred games, and a
normal-approximation interval around 0.8 over 40 games leaks past 1; Wilson's
stays inside [0, 1] and keeps its coverage near the ends.
"""

from __future__ import annotations

import math

from scipy.stats import norm


def wilson_interval(wins: float, games: int, level: float = 0.95) -> tuple[float, float]:
    """The ``level`` interval of the win rate ``wins / games`` (draws count
    half, so ``wins`` may be a half-integer); (nan, nan) without games."""
    if games <= 0:
        return float("nan"), float("nan")
    if not 0 <= wins <= games:
        raise ValueError(f"wins must be in [0, {games}], got {wins}")
    z = float(norm.ppf(0.5 + level / 2))
    p = wins / games
    centre = (p + z * z / (2 * games)) / (1 + z * z / games)
    half = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games)) / (1 + z * z / games)
    return max(0.0, centre - half), min(1.0, centre + half)
