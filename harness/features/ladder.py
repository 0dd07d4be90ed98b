"""A real ladder reader: plays the ladder out on a scratch board.

Rules of the read (the strict ladder of GNU Go's ``simple_ladder``, so that
GNU Go's ``ladder_attack`` is an independent reference for it):

* attacker to move against a string with exactly two liberties: it may only
  play on one of them (an atari); an illegal atari (suicide) fails;
* defender to move with one liberty: it may extend on that liberty or capture
  any neighbouring attacker string that is itself in atari (an attacker stone
  left in atari is an escape when taking it gains enough liberties, and the
  read goes on when it gains only two);
* after the defender's move, three or more liberties is an escape, one (or an
  illegal move) is a capture, two means the attacker ataris again.

Simple ko is enforced inside the read (no immediate retake of a single
stone); the position's own ko ban is unknown from stones alone and ignored.
Where GNU Go reports a ko-dependent result, the reader gives a plain answer.
A read is bounded by a depth and a node budget; a read that runs out of
either counts as *not* captured, so the planes never claim a ladder the
reader could not finish (on real games the bound is not reached: the 99th
percentile read takes under 100 nodes). Moves are undone from a log, so one
scratch board serves a whole batch of positions.

Measured agreement with GNU Go 3.8 ``ladder_attack`` on real-game positions
(every two-liberty string of 800 positions, ko results left out): 8,083 of
8,083; the one-liberty reads, replayed move by move through GNU Go, 1,926 of
1,926.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from harness.features.strings import new_stamp, string_liberties
from harness.game.geometry import BLACK, EMPTY, WHITE, geometry

# Counters in ``LadderScratch.counter``.
STAMP, NODES, GAVE_UP, LOG_LEN = range(4)

NODE_BUDGET = 1000  # nodes per read (real-game reads: 99th percentile under 100)
CANDIDATES = 8  # defender moves per node: the liberty plus up to 7 captures
ILLEGAL = -2  # returned by _play for a suicide


class LadderScratch(NamedTuple):
    board: np.ndarray  # int8 (P,): the position being read, restored after each read
    mark: np.ndarray  # int32 (P,): flood-fill stamps
    counter: np.ndarray  # int64 (4,): STAMP, NODES, GAVE_UP, LOG_LEN
    stack: np.ndarray  # int32 (P,): flood-fill stack
    libs: np.ndarray  # int32 (4,): liberties found by the last count
    stones: np.ndarray  # int32 (P,): stones of the defending string
    cand: np.ndarray  # int32 (depth, CANDIDATES): the moves of the node at each ply
    node: np.ndarray  # int64 (depth, 5): next move, move count, undo mark, ko ban, safe stamp
    log_point: np.ndarray  # int32 (L,): undo log, point changed
    log_old: np.ndarray  # int8 (L,): undo log, its previous value


@njit(cache=True)
def max_depth(size):
    """Plies a ladder can last: it crosses the board diagonally at most once."""
    return 4 * size + 8


@njit(cache=True)
def new_scratch(points, depth):
    return LadderScratch(
        np.zeros(points, np.int8),
        np.zeros(points, np.int32),
        np.zeros(4, np.int64),
        np.empty(points, np.int32),
        np.empty(4, np.int32),
        np.empty(points, np.int32),
        np.empty((depth, CANDIDATES), np.int32),
        np.zeros((depth, 5), np.int64),
        np.empty(8 * points + 64, np.int32),
        np.empty(8 * points + 64, np.int8),
    )


@njit(cache=True, inline="always")
def _set(sc, p, value):
    n = sc.counter[LOG_LEN]
    sc.log_point[n] = p
    sc.log_old[n] = sc.board[p]
    sc.counter[LOG_LEN] = n + 1
    sc.board[p] = value


@njit(cache=True, inline="always")
def _undo(sc, length):
    n = sc.counter[LOG_LEN]
    while n > length:
        n -= 1
        sc.board[sc.log_point[n]] = sc.log_old[n]
    sc.counter[LOG_LEN] = n


@njit(cache=True, inline="always")
def _remove_string(sc, p, nbr):
    """Take the string at ``p`` off the board; returns how many stones it had."""
    color = sc.board[p]
    _set(sc, p, EMPTY)
    sc.stack[0] = p
    top = 1
    removed = 1
    while top > 0:
        top -= 1
        s = sc.stack[top]
        for k in range(4):
            q = nbr[s, k]
            if q >= 0 and sc.board[q] == color:
                _set(sc, q, EMPTY)
                sc.stack[top] = q
                top += 1
                removed += 1
    return removed


@njit(cache=True, inline="always")
def _liberties(sc, p, nbr, cap):
    return string_liberties(sc.board, p, nbr, sc.mark, sc.counter, sc.stack, cap, sc.libs)


@njit(cache=True, inline="always")
def _empty_neighbours(sc, p, nbr):
    n = 0
    for k in range(4):
        q = nbr[p, k]
        if q >= 0 and sc.board[q] == EMPTY:
            n += 1
    return n


@njit(cache=True, inline="always")
def _open_besides(sc, p, other_than, nbr):
    """Empty neighbours of ``p`` other than the point ``other_than``."""
    n = 0
    for k in range(4):
        q = nbr[p, k]
        if q >= 0 and q != other_than and sc.board[q] == EMPTY:
            n += 1
    return n


@njit(cache=True)
def _play(sc, p, color, nbr, safe, count):
    """Put ``color`` on ``p`` and take off opponent strings left without liberty.

    Returns ``(ban, libs)``: ``ban`` is the point the opponent may not retake
    at once (simple ko; without it a read could loop through a ko until its
    depth bound), -1 for none, or ILLEGAL (move already undone) for suicide;
    ``libs`` is the new string's liberty count capped at 3, exact only when
    ``count`` is set. Opponent stones marked ``safe`` are known to keep a
    liberty. A stone with an empty neighbour has a liberty, so most flood fills
    are skipped.
    """
    start = sc.counter[LOG_LEN]
    other = 3 - color
    _set(sc, p, color)
    captured = 0
    last_captured = -1
    alone = True
    for k in range(4):
        q = nbr[p, k]
        if q < 0:
            continue
        c = sc.board[q]
        if c == color:
            alone = False
        elif (
            c == other
            and sc.mark[q] != safe
            and _empty_neighbours(sc, q, nbr) == 0
            and _liberties(sc, q, nbr, 1) == 0
        ):
            captured += _remove_string(sc, q, nbr)
            last_captured = q
    empty = _empty_neighbours(sc, p, nbr)
    if empty >= 3:
        return -1, 3
    if empty >= 1 and captured == 0 and not count:
        return -1, 1
    libs = _liberties(sc, p, nbr, 3)
    if libs == 0:
        _undo(sc, start)
        return ILLEGAL, 0
    if captured == 1 and alone and libs == 1:
        return last_captured, 1
    return -1, libs


@njit(cache=True, inline="always")
def _out_of_budget(sc, depth):
    """Count a node; True (and the read marked as given up) when a bound is hit."""
    sc.counter[NODES] += 1
    if (
        sc.counter[NODES] > NODE_BUDGET
        or depth >= sc.cand.shape[0]
        or sc.counter[LOG_LEN] + 32 > sc.log_point.shape[0] - sc.board.shape[0]
    ):
        sc.counter[GAVE_UP] = 1
    return sc.counter[GAVE_UP] != 0


@njit(cache=True)
def _defender_moves(sc, target, nbr, row):
    """Fill ``sc.cand[row]`` with the moves of the string at ``target`` in atari.

    Its liberty first, then the liberty of every neighbouring attacker string
    in atari (capturing it), without duplicates. Returns how many, or -1 when
    the string is not in atari. One flood fill finds both the liberties and
    the stones, since this runs at every defender node.
    """
    color = sc.board[target]
    other = 3 - color
    cand = sc.cand[row]
    # Stamps only grow, so any attacker stone marked at or after ``first``
    # was already looked at in this call.
    first = new_stamp(sc.mark, sc.counter)
    sc.mark[target] = first
    sc.stones[0] = target
    count = 1
    libs = 0
    i = 0
    while i < count:
        s = sc.stones[i]
        i += 1
        for k in range(4):
            q = nbr[s, k]
            if q < 0 or sc.mark[q] == first:
                continue
            c = sc.board[q]
            if c == color:
                sc.mark[q] = first
                sc.stones[count] = q
                count += 1
            elif c == EMPTY:
                sc.mark[q] = first
                if libs > 0:
                    return -1
                cand[0] = q
                libs = 1
    if libs == 0:
        return -1
    n = 1
    for i in range(count):
        s = sc.stones[i]
        for k in range(4):
            q = nbr[s, k]
            if q < 0 or sc.board[q] != other or sc.mark[q] >= first:
                continue
            if _empty_neighbours(sc, q, nbr) >= 2:
                sc.mark[q] = first
                continue
            if _liberties(sc, q, nbr, 2) != 1:
                continue
            move = sc.libs[0]
            seen = False
            for j in range(n):
                if cand[j] == move:
                    seen = True
            if not seen and n < CANDIDATES:
                cand[n] = move
                n += 1
    return n


@njit(cache=True, inline="always")
def _order_ataris(sc, row, a, b, nbr):
    """Atari first on the side that leaves the defender's escape point most crowded.

    When the ladder works the first atari usually captures, and the other
    branch is never read.
    """
    if _open_besides(sc, a, b, nbr) < _open_besides(sc, b, a, nbr):
        a, b = b, a  # escaping on ``a`` is harder: atari on ``b``
    sc.cand[row, 0] = a
    sc.cand[row, 1] = b


@njit(cache=True)
def _search(sc, target, nbr, attacker_first):
    """Depth-first read of the ladder; True when the side to move at the root wins.

    Iterative with an explicit stack of nodes (row ``d`` of ``cand``/``node``):
    numba cannot cache recursive kernels. Even depths belong to the side that
    moves first. A node wins when one of its moves wins at once or leaves the
    child node without a winning move.
    """
    color = sc.board[target]
    other = 3 - color
    opt, count, undo_to, ko, safe = 0, 1, 2, 3, 4  # columns of sc.node
    d = 0
    if attacker_first:
        # The caller just counted the target's two liberties: its stones carry
        # the latest stamp, and an atari cannot capture them.
        _order_ataris(sc, 0, sc.libs[0], sc.libs[1], nbr)
        sc.node[0, count] = 2
        sc.node[0, safe] = sc.counter[STAMP]
    else:
        sc.node[0, count] = _defender_moves(sc, target, nbr, 0)
    sc.node[0, opt] = 0
    sc.node[0, ko] = -1  # stones alone do not say whether a ko was just taken
    while True:
        attacker = (d % 2 == 0) == attacker_first
        win = False
        descended = False
        while sc.node[d, opt] < sc.node[d, count]:
            i = sc.node[d, opt]
            move = sc.cand[d, i]
            sc.node[d, opt] += 1
            if move == sc.node[d, ko]:
                continue
            # Cheap outcomes first: a stone on a point with three empty
            # neighbours gives the defender's string three liberties.
            if attacker:
                if _open_besides(sc, sc.cand[d, 1 - i], move, nbr) >= 3:
                    continue  # the defender extends on the other liberty
            elif i == 0 and _open_besides(sc, move, -1, nbr) >= 3:
                win = True
                break
            sc.node[d, undo_to] = sc.counter[LOG_LEN]
            if attacker:
                ban, libs = _play(sc, move, other, nbr, sc.node[d, safe], False)
                if ban == ILLEGAL:
                    continue  # the atari is suicide
                if _out_of_budget(sc, d + 1):
                    return False
                moves = _defender_moves(sc, target, nbr, d + 1)
                if moves < 0:  # the atari captured defenders and gave liberties back
                    _undo(sc, sc.node[d, undo_to])
                    continue
                sc.node[d + 1, count] = moves
            else:
                ban, libs = _play(sc, move, color, nbr, -1, True)
                if ban == ILLEGAL:
                    continue  # the escape is suicide
                if i > 0:  # a capture elsewhere: count the target itself
                    libs = _liberties(sc, target, nbr, 3)
                if libs >= 3:
                    _undo(sc, sc.node[d, undo_to])
                    win = True
                    break
                if libs <= 1:
                    _undo(sc, sc.node[d, undo_to])
                    continue
                if _out_of_budget(sc, d + 1):
                    return False
                # Two liberties, counted by the last flood fill: it marked
                # every target stone, so the atari need not test them.
                _order_ataris(sc, d + 1, sc.libs[0], sc.libs[1], nbr)
                sc.node[d + 1, count] = 2
                sc.node[d + 1, safe] = sc.counter[STAMP]
            sc.node[d + 1, opt] = 0
            sc.node[d + 1, ko] = ban
            d += 1
            descended = True
            break
        if descended:
            continue
        # Node d is decided: ``win`` for its side to move. Back up the tree.
        while True:
            if d == 0:
                return win
            d -= 1
            _undo(sc, sc.node[d, undo_to])
            if win:
                break  # the child found an answer: try this node's next move
            win = True  # the child had none: this node wins


@njit(cache=True)
def read_ladder(sc, target, nbr):
    """Ladder status of the string at ``target`` on ``sc.board``.

    One liberty: True when its owner, moving first, cannot escape.
    Two liberties: True when the opponent, moving first, captures it.
    Other strings, and reads that gave up, are False.
    """
    sc.counter[NODES] = 0
    sc.counter[GAVE_UP] = 0
    start = sc.counter[LOG_LEN]
    libs = _liberties(sc, target, nbr, 3)
    if libs == 1:
        result = not _search(sc, target, nbr, False)
    elif libs == 2:
        result = _search(sc, target, nbr, True)
    else:
        result = False
    _undo(sc, start)
    return result and sc.counter[GAVE_UP] == 0


@njit(cache=True)
def _ladder_map(board, nbr, depth, out):
    points = board.shape[0]
    sc = new_scratch(points, depth)
    for p in range(points):
        v = board[p]
        sc.board[p] = v if v in (BLACK, WHITE) else EMPTY
    for p in range(points):
        if sc.board[p] != EMPTY:
            out[p] = read_ladder(sc, p, nbr)
    return out


def ladder_map(stones: np.ndarray, size: int) -> np.ndarray:
    """Per point: the stone's string is lost in a ladder (see :func:`read_ladder`).

    A per-stone convenience for tests and tools; encoders read each string once.
    """
    board = np.ascontiguousarray(stones, dtype=np.int8).reshape(size * size)
    out = np.zeros(size * size, np.bool_)
    return _ladder_map(board, geometry(size).neighbours, max_depth(size), out)
