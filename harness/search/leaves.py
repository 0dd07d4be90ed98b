"""Positions of search leaves: what the encoder and the rules need per leaf.

The tree stores only moves. A leaf's position is rebuilt by copying the root
game into a scratch board slot and replaying the path's moves with the
compiled rules; while replaying, the last T positions are written as the
encoder's history rows (the rows before the root come from the root's own
history). Replaying ~10 moves costs a few microseconds, far less than keeping
a board per node, and it gives exact legality (ko, superko) for free.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from harness.game import board as K
from harness.game.geometry import BLACK
from harness.search.tree import HOT


@njit(**HOT)
def load_leaf(roots, g, root_rows, moves_row, path, depth, scratch, slot, rows):
    """Position at the end of ``path`` into ``scratch`` slot ``slot`` and its
    last T positions into ``rows[slot]`` (oldest first, current last).

    ``moves_row`` is the tree's ``move`` row of game ``g``; ``root_rows[g]``
    holds the root's T history rows.
    """
    K.copy_game(roots, g, scratch, slot)
    history = rows.shape[1]
    moved = depth - 1
    points = rows.shape[2]
    for j in range(history - moved):
        for p in range(points):
            rows[slot, j, p] = root_rows[g, j + moved, p]
    return moved


@njit(**HOT)
def replay_path(moves_row, path, depth, scratch, slot, rows, nbr, zob):
    """Play the path's moves in the scratch slot, filling the newest rows."""
    history = rows.shape[1]
    moved = depth - 1
    for i in range(1, depth):
        K.play(scratch, slot, moves_row[path[i]], nbr, zob)
        j = history - 1 - moved + i
        if j >= 0:
            for p in range(rows.shape[2]):
                rows[slot, j, p] = scratch.stones[slot, p]


@njit(**HOT)
def area_value(b, slot, komi, nbr, work):
    """Exact result of a finished Go game for the side to move: +1, -1 or 0
    (``work``: a :class:`harness.game.board.Work`)."""
    score = K.area_into(b, slot, nbr, work.owner, work.stack, work.region, work.flooded) - komi
    if b.meta[slot, K.TO_PLAY] != BLACK:
        score = -score
    if score > 0:
        return 1.0
    if score < 0:
        return -1.0
    return 0.0


PASS_FREE, PASS_FINISHED = 0, 1
PASS_RULES = {"free": PASS_FREE, "finished": PASS_FINISHED}


@njit(**HOT)
def restrict_pass(b, slot, komi, nbr, diag, legal, work):
    """Take pass out of ``legal`` while the game is not finished.

    Pass stays legal when the side to move has nothing left but filling its
    own eyes, or when the opponent has just passed and passing now ends the
    game in a Tromp-Taylor win. Without this rule self-play teaches networks
    to pass whenever they think they are ahead: the opponent's reply pass then
    scores dead stones as alive and the games (and the value targets) turn
    into noise. Random playouts use the same eye rule to end their games.
    """
    points = legal.shape[0] - 1
    if not legal[points]:
        return
    color = b.meta[slot, K.TO_PLAY]
    playable = False
    for p in range(points):
        if legal[p] and not K.is_eye(b, slot, p, color, nbr, diag):
            playable = True
            break
    if not playable:
        return
    if b.meta[slot, K.PASSES] == 1 and area_value(b, slot, komi, nbr, work) > 0:
        return
    legal[points] = False


@njit(**HOT)
def drop_own_eyes(b, slot, nbr, diag, legal):
    """Take the side to move's own true eyes out of ``legal``.

    Under area scoring an eye filled is never a point gained, only a step
    towards a group with one eye. Pass is left alone: with nothing but eyes
    left, :func:`restrict_pass` keeps it legal.
    """
    color = b.meta[slot, K.TO_PLAY]
    for p in range(legal.shape[0] - 1):
        if legal[p] and K.is_eye(b, slot, p, color, nbr, diag):
            legal[p] = False


@njit(**HOT)
def restrict_moves(b, slot, komi, nbr, diag, legal, work, pass_rule, fill_eyes):
    """The search's own limits on the legal moves of a Go position (not
    NoGo): unless ``fill_eyes``, no move into an own eye, and the pass rule
    (:func:`restrict_pass` under ``PASS_FINISHED``). Eyes go first: the pass
    rule then meets no eye and tests one point, not every eye again."""
    if b.meta[slot, K.RULE] == K.NOGO:
        return
    if not fill_eyes:
        drop_own_eyes(b, slot, nbr, diag, legal)
    if pass_rule == PASS_FINISHED:
        restrict_pass(b, slot, komi, nbr, diag, legal, work)


@njit(**HOT)
def leaf_outcome(b, slot, komi, nbr, diag, zob, legal, work, pass_rule, fill_eyes):
    """(is_terminal, value for the side to move) of the position in ``slot``.

    Fills ``legal`` (bool, P + 1) for positions that go on, limited by
    :func:`restrict_moves`. Go ends after two passes (scored by area with
    komi); NoGo ends when the side to move has no legal move, and that side
    has lost.
    """
    if b.meta[slot, K.RULE] != K.NOGO and b.meta[slot, K.PASSES] >= 2:
        return True, area_value(b, slot, komi, nbr, work)
    K.legal_into(b, slot, nbr, zob, legal, work.superko)
    restrict_moves(b, slot, komi, nbr, diag, legal, work, pass_rule, fill_eyes)
    if b.meta[slot, K.RULE] == K.NOGO:
        for m in range(legal.shape[0]):
            if legal[m]:
                return False, 0.0
        return True, -1.0
    return False, 0.0


@njit(**HOT)
def root_moves(src, roots, g, komi, nbr, diag, zob, legal, work, pass_rule, fill_eyes):
    """Copy a game's position (slot 0 of ``src``) into root slot ``g`` and fill
    ``legal`` with the moves a search may consider there: the legal moves,
    limited by :func:`restrict_moves` as a leaf's are. Returns how many."""
    K.copy_game(src, 0, roots, g)
    K.legal_into(roots, g, nbr, zob, legal, work.superko)
    restrict_moves(roots, g, komi, nbr, diag, legal, work, pass_rule, fill_eyes)
    count = 0
    for m in range(legal.shape[0]):
        if legal[m]:
            count += 1
    return count


def history_rows(game, history: int, out: np.ndarray | None = None) -> np.ndarray:
    """The last ``history`` positions of a :class:`Game`, oldest first, with
    empty boards before the start (the encoder contract)."""
    points = game.size * game.size
    if out is None:
        out = np.zeros((history, points), np.int8)
    past = game.history[-history:]
    out[: history - len(past)] = 0
    out[history - len(past) :] = past
    return out
