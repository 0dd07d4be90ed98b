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


def no_losing_pass(game, move: int, preference: np.ndarray) -> int:
    """Replace a pass that would lose on the spot by the best other move.

    Under area scoring the opponent may answer a pass with a pass, and the
    game ends with the current Tromp-Taylor count. A network that passes
    while that count loses for it (an undertrained one does, mid-game) hands
    the game away; Leela Zero plays on in that case too. ``preference`` ranks
    the moves (policy or visits); own-eye fills are never chosen instead.
    """
    if move != game.pass_move or game.rules == "nogo":
        return move
    margin = game.score()  # Black - White - komi
    if (margin if game.to_play == 1 else -margin) > 0:
        return move
    legal = game.legal_moves()
    legal[game.pass_move] = False
    order = np.argsort(-np.asarray(preference, dtype=np.float64)[: game.pass_move], kind="stable")
    for p in order:
        if legal[p] and not _fills_own_eye(game, int(p)):
            return int(p)
    return move


def _fills_own_eye(game, point: int) -> bool:
    from harness.game import board as K

    geo = game.geo
    return bool(K.is_eye(game.boards, 0, point, game.to_play, geo.neighbours, geo.diagonals))
