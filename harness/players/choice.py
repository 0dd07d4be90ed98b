"""Turning a player's preferences (search visits, a policy) into the move played.

Greedy play makes two fixed networks replay the same game over and over, which
turns a tournament into a handful of distinct games. Cazenave's tournaments
(mobile networks paper, section on making the networks play) break the tie
between near-equal moves at random instead: when the second most visited move
has more than 0.8 times the visits of the best, it is played with probability
``n2 / (n1 + n2)``; otherwise the best move is played.

Players that pick from a distribution pick among :func:`candidate_moves`, and
none of them passes into a loss on the count while a sensible move is left
(:func:`no_losing_pass`).
"""

from __future__ import annotations

import numpy as np

from harness.game.endgame import sensible_moves

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


def candidate_moves(game, endgame: bool) -> np.ndarray:
    """The moves a player that picks from a distribution may pick (bool, P + 1).

    With ``endgame`` (the default of every such player) they are the legal
    moves without the senseless ones of :mod:`harness.game.endgame` (own eyes,
    self-atari in own territory, strings of two or more handed over); without
    it, every legal move, as raw players chose before 2026-11-29.
    """
    if endgame:
        return sensible_moves(game)
    return game.legal_moves()


def fallback_moves(game, endgame: bool, candidates: np.ndarray) -> np.ndarray:
    """The moves :func:`no_losing_pass` may play instead of a pass: the
    candidates themselves, or without ``endgame`` the legal moves less own
    eyes (the rule raw players had before 2026-11-29)."""
    if endgame:
        return candidates
    from harness.search.leaves import drop_own_eyes

    moves = candidates.copy()
    drop_own_eyes(game.boards, 0, game.geo.neighbours, game.geo.diagonals, moves)
    return moves


def no_losing_pass(game, move: int, preference: np.ndarray, allowed: np.ndarray) -> int:
    """Replace a pass that would lose on the count by the best allowed move.

    Under area scoring the opponent may answer a pass with a pass, and the
    game ends with the current Tromp-Taylor count. A player that passes while
    that count loses for it (an undertrained network does, mid-game; a
    network trained on human games does with the opponent's dead stones still
    on its side) hands the game away, so it plays on: Leela Zero does the
    same, and KataGo's "conservative pass" keeps playing until passing
    cannot lose on the count. It plays on only with ``allowed`` moves (ranked
    by ``preference``, policy or visits): when nothing is left but senseless
    moves it passes and accepts the loss rather than fill its own eyes and
    liberties until its groups die, which is how a lost count by a few points
    became a loss by the whole board.
    """
    if move != game.pass_move or game.rules == "nogo":
        return move
    margin = game.score()  # Black - White - komi
    if (margin if game.to_play == 1 else -margin) > 0:
        return move
    candidates = np.flatnonzero(allowed[: game.pass_move])
    if candidates.size == 0:
        return move
    weights = np.asarray(preference, dtype=np.float64)[candidates]
    return int(candidates[int(np.argmax(weights))])
