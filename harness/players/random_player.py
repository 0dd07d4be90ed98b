"""The weakest baseline: a uniformly random sensible move.

Refusing to fill eyes is what lets random games end: without it a random
player would eventually kill its own groups and games would run to the move
cap. With ``endgame`` (the default) it also never hands over a string or
self-ataris in its own territory (:mod:`harness.game.endgame`), so it plays
into no seki and its games end by two passes with its living groups alive;
without it (and in NoGo, where an eye is a move only its owner can play) it
only keeps out of its own eyes, as before 2026-11-29. Each player owns a
NumPy generator, so a seeded game replays exactly no matter how many other
random players run in the same process (numba's global generator is not
used here).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from harness.game import board as K
from harness.game.endgame import sensible_moves
from harness.game.geometry import EMPTY
from harness.game.position import Game


@njit(cache=True)
def first_fitting_move(b, g, nbr, diag, zob, order, allow_eyes):
    """The first point of ``order`` that is legal and (unless allowed) no own eye.

    ``order`` is a random permutation of the points, so the first fit is a
    uniform choice among the fitting points. Returns the pass index if none fits.
    """
    points = b.stones.shape[1]
    color = b.meta[g, K.TO_PLAY]
    for i in range(order.shape[0]):
        p = order[i]
        if b.stones[g, p] != EMPTY:
            continue
        if not allow_eyes and K.is_eye(b, g, p, color, nbr, diag):
            continue
        if K.check_move(b, g, p, color, nbr, zob) == K.LEGAL:
            return p
    return points


class RandomPlayer:
    """Uniform over the sensible moves; passes when nothing else is left.

    In NoGo, where passing is illegal, an eye is filled rather than passing.
    """

    def __init__(self, seed: int | None = None, name: str = "random", endgame: bool = True):
        self.name = name
        self.endgame = endgame
        self._rng = np.random.default_rng(seed)

    def reset(self, size: int, komi: float, rules: str) -> None:
        pass

    def reseed(self, seed: int) -> None:
        self._rng = np.random.default_rng(seed)

    def select_move(self, game: Game) -> int:
        if self.endgame and game.rules != "nogo":
            moves = np.flatnonzero(sensible_moves(game)[: game.pass_move])
            return int(self._rng.choice(moves)) if moves.size else game.pass_move
        geo = game.geo
        order = self._rng.permutation(geo.points).astype(np.int32)
        move = first_fitting_move(
            game.boards, 0, geo.neighbours, geo.diagonals, geo.zobrist, order, False
        )
        if move == geo.pass_move and game.rules == "nogo":
            move = first_fitting_move(
                game.boards, 0, geo.neighbours, geo.diagonals, geo.zobrist, order, True
            )
        return int(move)

    def close(self) -> None:
        pass
