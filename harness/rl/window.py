"""How big the replay window is after each generation.

Mattisson (section 3.3) starts with a small buffer and grows it so that a
target fraction ``p`` of its contents is replaced over the next stretch of
training, ``p`` decaying over time: early games, whose targets come from a
nearly random network, leave the window fast, and later the window is large
enough that a generation's games are a small part of it. Here the stretch is
one generation: the window becomes big enough that the games just added are
at most ``p`` of it. It never shrinks and stays within [initial, maximum].
"""

from __future__ import annotations

import math

from harness.rl.config import WindowConfig


def replace_fraction(generation: int, config: WindowConfig) -> float:
    """``p`` for ``generation`` (0-based): decays geometrically to a floor."""
    p = config.replace_fraction * config.fraction_decay ** max(generation, 0)
    return max(p, config.fraction_min)


def next_window(current: int, added: int, generation: int, config: WindowConfig) -> int:
    """The window size after ``generation`` added ``added`` games (or positions)."""
    wanted = math.ceil(added / replace_fraction(generation, config)) if added > 0 else 0
    return int(min(config.maximum, max(config.initial, current, wanted)))
