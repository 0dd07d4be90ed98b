"""Which legal moves a player that picks from a distribution should never pick.

A raw policy (or a uniform random player) has no reading: once the board is
settled its most probable legal move is often inside its own territory, and
under area scoring such a move gains nothing and can only lose. Left alone it
fills its own liberties until the opponent captures the group. Three kinds of
move are *senseless* here:

1. an own true eye (:func:`harness.game.board.is_eye`, the search's rule);
2. a move inside the mover's own Tromp-Taylor territory (an empty region that
   touches only its stones) that leaves the new stone's string in atari or
   without liberties: nothing can be captured there, so it only gives stones
   away;
3. anywhere, a move that leaves a string of two or more of the mover's stones
   in atari (or without liberties) and captures nothing: it hands over the
   string, and it is how a player plays into a seki (filling a shared
   liberty). A lone stone in atari (a throw-in, a snapback's bait) stays
   allowed; what this costs is the rare tesuji that sacrifices two stones on
   purpose (a two-stone nakade, "sacrifice two, not one").

Everything else stays allowed, including moves in own territory that keep
two liberties: they cost nothing under area scoring and are sometimes the
move that makes life. A player with nothing but senseless moves passes.
NoGo, where passing is forbidden and eyes are the game, keeps its legal moves.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from harness.game import board as K
from harness.game.board import _HOT
from harness.game.geometry import BLACK, EMPTY


@njit(**_HOT)
def leaves_in_atari(b, g, p, color, nbr):
    """(True when ``color`` at ``p`` keeps at most one liberty and captures
    nothing, True when it joins another stone of its colour).

    Counts distinct liberties of the string the move would make and stops at
    the second, so a large string costs only the walk to its second liberty.
    """
    other = 3 - color
    for k in range(4):
        q = nbr[p, k]
        if q >= 0 and b.stones[g, q] == other and K.in_atari(b, g, b.head[g, q]):
            return False, False  # a capture frees liberties
    first = -1
    joins = False
    for k in range(4):
        q = nbr[p, k]
        if q < 0:
            continue
        c = b.stones[g, q]
        if c == EMPTY:
            if first < 0:
                first = q
            elif q != first:
                return False, False
        elif c == color:
            joins = True
    if not joins:
        return True, False  # a lone stone with at most one empty neighbour
    for k in range(4):
        q = nbr[p, k]
        if q < 0 or b.stones[g, q] != color:
            continue
        h = b.head[g, q]
        s = h
        while True:
            for j in range(4):
                r = nbr[s, j]
                if r >= 0 and r != p and b.stones[g, r] == EMPTY:
                    if first < 0:
                        first = r
                    elif r != first:
                        return False, True
            s = b.nxt[g, s]
            if s == h:
                break
    return True, True


@njit(**_HOT)
def is_senseless(b, g, p, color, nbr, diag, owner):
    """Whether ``color`` playing the empty point ``p`` is one of the module's
    three senseless moves; ``owner`` is :func:`harness.game.board.area_into`'s
    Tromp-Taylor owner of the current position."""
    if K.is_eye(b, g, p, color, nbr, diag):
        return True
    atari, joins = leaves_in_atari(b, g, p, color, nbr)
    if not atari:
        return False
    own = 1 if color == BLACK else -1
    return joins or owner[p] == own


@njit(**_HOT)
def drop_senseless(b, g, nbr, diag, legal, work):
    """Clear the side to move's senseless moves from ``legal`` (bool, P + 1);
    pass is left as it was. ``work``: a :class:`harness.game.board.Work`.
    NoGo positions are left unchanged."""
    if b.meta[g, K.RULE] == K.NOGO:
        return
    K.area_into(b, g, nbr, work.owner, work.stack, work.region, work.flooded)
    color = b.meta[g, K.TO_PLAY]
    for p in range(legal.shape[0] - 1):
        if legal[p] and is_senseless(b, g, p, color, nbr, diag, work.owner):
            legal[p] = False


def sensible_moves(game) -> np.ndarray:
    """The legal moves of ``game``'s side to move without its senseless ones
    (bool, P + 1, pass last as the rules allow it)."""
    legal = game.legal_moves()
    geo = game.geo
    drop_senseless(game.boards, 0, geo.neighbours, geo.diagonals, legal,
                   K.new_work(geo.points))
    return legal
