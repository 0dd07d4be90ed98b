"""Strings (connected groups) and their exact liberties, rebuilt from bare stones.

Datasets keep only the stones of each position, so the encoders cannot use the
incremental group records of :mod:`harness.game.board`; rebuilding a whole
``Boards`` per position would also pay for hashes and superko history that
features never need. One flood fill per string over a flat int8 board is the
lightest exact labelling, and the same stamp-marked flood fill serves the
ladder reader, which re-counts liberties after every move it tries.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from harness.game.geometry import BLACK, EMPTY, WHITE, geometry

_STAMP_LIMIT = 2**31 - 2


@njit(cache=True, inline="always")
def new_stamp(mark, counter):
    """A value never yet written to ``mark``: no clearing between flood fills."""
    counter[0] += 1
    if counter[0] >= _STAMP_LIMIT:
        mark[:] = 0
        counter[0] = 1
    return counter[0]


@njit(cache=True, inline="always")
def string_liberties(board, p, nbr, mark, counter, stack, cap, libs_out):
    """Distinct liberties of the string at ``p``, counting stopped at ``cap``.

    The first liberties found are written to ``libs_out`` (as many as fit).
    Stopping early matters: the ladder reader only asks "1, 2 or more?", and
    attacker walls can be long.
    """
    color = board[p]
    stamp = new_stamp(mark, counter)
    mark[p] = stamp
    stack[0] = p
    top = 1
    n = 0
    room = libs_out.shape[0]
    while top > 0:
        top -= 1
        s = stack[top]
        for k in range(4):
            q = nbr[s, k]
            if q < 0 or mark[q] == stamp:
                continue
            c = board[q]
            if c == EMPTY:
                mark[q] = stamp
                if n < room:
                    libs_out[n] = q
                n += 1
                if n >= cap:
                    return n
            elif c == color:
                mark[q] = stamp
                stack[top] = q
                top += 1
    return n


@njit(cache=True)
def label_strings(board, nbr, head, libs, lib0, lib1, mark, counter, stack):
    """Label every string of ``board`` and count its liberties exactly.

    ``head[p]`` is the first point (lowest index) of the string at ``p`` (-1 if
    empty); ``libs[h]``, ``lib0[h]``, ``lib1[h]`` hold the liberty count and
    the first two liberties of the string headed by ``h``. Stones whose value
    is not BLACK or WHITE are treated as empty (bad input must not crash).
    """
    points = board.shape[0]
    head[:] = -1
    for p in range(points):
        color = board[p]
        if (color != BLACK and color != WHITE) or head[p] >= 0:
            continue
        stamp = new_stamp(mark, counter)
        mark[p] = stamp
        head[p] = p
        stack[0] = p
        top = 1
        n = 0
        first = -1
        second = -1
        while top > 0:
            top -= 1
            s = stack[top]
            for k in range(4):
                q = nbr[s, k]
                if q < 0 or mark[q] == stamp:
                    continue
                c = board[q]
                if c == color:
                    mark[q] = stamp
                    head[q] = p
                    stack[top] = q
                    top += 1
                elif c != BLACK and c != WHITE:
                    mark[q] = stamp
                    if n == 0:
                        first = q
                    elif n == 1:
                        second = q
                    n += 1
        libs[p] = n
        lib0[p] = first
        lib1[p] = second


@njit(cache=True)
def _liberty_map(board, nbr, out):
    points = board.shape[0]
    head = np.empty(points, np.int32)
    libs = np.zeros(points, np.int32)
    lib0 = np.empty(points, np.int32)
    lib1 = np.empty(points, np.int32)
    mark = np.zeros(points, np.int32)
    counter = np.zeros(1, np.int64)
    stack = np.empty(points, np.int32)
    label_strings(board, nbr, head, libs, lib0, lib1, mark, counter, stack)
    for p in range(points):
        out[p] = libs[head[p]] if head[p] >= 0 else 0
    return out


def liberty_map(stones: np.ndarray, size: int) -> np.ndarray:
    """Liberties of the string through each point (0 where empty), for tests and tools."""
    board = np.ascontiguousarray(stones, dtype=np.int8).reshape(size * size)
    out = np.zeros(size * size, np.int32)
    return _liberty_map(board, geometry(size).neighbours, out)
