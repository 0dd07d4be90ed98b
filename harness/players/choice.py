"""Turning search visit counts into the move actually played.

Greedy play makes two fixed networks replay the same game over and over, which
turns a tournament into a handful of distinct games. Cazenave's tournaments
(mobile networks paper, section on making the networks play) break the tie
between near-equal moves at random instead: when the second most visited move
has more than 0.8 times the visits of the best, it is played with probability
``n2 / (n1 + n2)``; otherwise the best move is played.
"""

from __future__ import annotations

import numpy as np

CAZENAVE_RATIO = 0.8


def most_visited(visits: np.ndarray) -> int:
    return int(np.argmax(visits))


def tournament_choice(
    visits: np.ndarray, rng: np.random.Generator, ratio: float = CAZENAVE_RATIO
) -> int:
    """The best move, or the runner-up when it is close (Cazenave's randomised choice)."""
    visits = np.asarray(visits, dtype=np.float64)
    if visits.size < 2:
        return most_visited(visits)
    second, best = np.argsort(visits, kind="stable")[-2:]
    n1, n2 = visits[best], visits[second]
    if n2 > 0 and n2 > ratio * n1 and rng.random() < n2 / (n1 + n2):
        return int(second)
    return int(best)
