"""Compiled writers of single input planes, shared by every encoder kernel.

Each writer fills channel ``ch`` of one position's output ``o`` (shape
``(P, C)``, already zeroed), so that an encoder kernel is only a list of
writer calls and no two encoders carry their own copy of a plane.
"""

from __future__ import annotations

from numba import njit

from harness.game.geometry import BLACK, WHITE


@njit(cache=True, inline="always")
def stones(o, row, color, ch):
    """1 where ``row`` holds a stone of ``color``."""
    for p in range(row.shape[0]):
        if row[p] == color:
            o[p, ch] = 1.0


@njit(cache=True, inline="always")
def constant(o, ch, value):
    for p in range(o.shape[0]):
        o[p, ch] = value


@njit(cache=True, inline="always")
def is_stone(v):
    return v in (BLACK, WHITE)


@njit(cache=True)
def last_move(o, before, after, ch):
    """1 on the stone that appeared between the two positions; none after a pass.

    Captures only remove stones, so a move adds exactly one; setup edits
    (handicap) may add several, and then no single point is the last move.
    """
    found = -1
    for p in range(after.shape[0]):
        if is_stone(after[p]) and not is_stone(before[p]):
            if found >= 0:
                return
            found = p
    if found >= 0:
        o[found, ch] = 1.0


@njit(cache=True)
def liberty_counts(o, board, head, libs, ch_first, count):
    """One-hot liberties of each stone's string: ``count`` planes, the last is "or more"."""
    top = count - 1
    for p in range(board.shape[0]):
        h = head[p]
        if h >= 0 and libs[h] > 0:  # no liberty only in corrupt positions
            n = libs[h] - 1
            o[p, ch_first + (n if n < top else top)] = 1.0


@njit(cache=True)
def liberty_points(o, head, libs, lib0, lib1, color_of, color, ch_one, ch_two):
    """Mark the liberties of ``color``'s strings that have one (``ch_one``) or two liberties."""
    for h in range(head.shape[0]):
        if head[h] != h or color_of[h] != color:
            continue
        if libs[h] == 1:
            o[lib0[h], ch_one] = 1.0
        elif libs[h] == 2:
            o[lib0[h], ch_two] = 1.0
            o[lib1[h], ch_two] = 1.0
