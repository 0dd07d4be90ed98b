"""Compiled Go/NoGo rules over plain arrays, for many games at once.

A batch of games is a :class:`Boards` tuple of arrays whose first axis is the
game; every kernel takes the batch and a game index, so self-play, search and
ingest can advance hundreds of games in one compiled loop without objects.

Groups are kept incrementally as rings of stones (``nxt``) with a head stone
(``head``). Liberties are *pseudo-liberties*: one count per (stone, empty
neighbour) adjacency, plus the sum and the sum of squares of the liberty
points. A group is in atari exactly when every pseudo-liberty is the same
point, i.e. ``n * sum(q^2) == sum(q)^2`` — this makes captures, suicide and
atari O(1) checks instead of flood fills.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from harness.game.geometry import BLACK, EMPTY, WHITE

# Per-move kernels are compiled without numba's reference counting (NRT): with
# it, every call increfs and decrefs each of the ten ``Boards`` arrays (atomic
# operations), which measured about two thirds of random-playout time; without
# it playouts run about 3x faster. Such kernels must never allocate, nor create
# or return arrays: they only read and write the arrays they are given.
# ``_nrt`` is a private numba option, hence the exact numba pin.
_HOT = {"cache": True, "_nrt": False}

# Rule sets, stored per game so one batch may mix them.
SIMPLE_KO, POSITIONAL_SUPERKO, NOGO = 0, 1, 2

# Columns of ``Boards.meta``.
TO_PLAY, KO, PASSES, MOVES, LAST, CAPS_BLACK, CAPS_WHITE, HIST_LEN, RULE, SIZE = range(10)
META_COLUMNS = 10

# Words of the superko filter ``legal_into`` builds (4096 bits).
SUPERKO_FILTER_WORDS = 64

# Legality codes returned by ``check_move``; ``ILLEGAL_REASONS`` names them.
LEGAL, OCCUPIED, KO_BAN, SUICIDE, SUPERKO, NOGO_CAPTURE, OFF_BOARD, NO_PASS = range(8)
ILLEGAL_REASONS = (
    "legal",
    "occupied point",
    "ko",
    "suicide",
    "positional superko",
    "capture (forbidden in NoGo)",
    "off the board",
    "pass (forbidden in NoGo)",
)


class Boards(NamedTuple):
    stones: np.ndarray  # int8 (G, P): EMPTY/BLACK/WHITE
    head: np.ndarray  # int32 (G, P): head stone of the point's group, -1 if empty
    nxt: np.ndarray  # int32 (G, P): next stone in the group's ring
    libs: np.ndarray  # int32 (G, P): pseudo-liberty count, valid at heads
    lib_sum: np.ndarray  # int64 (G, P): sum of (q + 1) over pseudo-liberties q
    lib_sq: np.ndarray  # int64 (G, P): sum of (q + 1)^2
    group_size: np.ndarray  # int32 (G, P): stones in the group, valid at heads
    meta: np.ndarray  # int32 (G, META_COLUMNS)
    hash: np.ndarray  # uint64 (G,): Zobrist hash of the stones (positional)
    history: np.ndarray  # uint64 (G, H): hashes of every position so far


class Work(NamedTuple):
    """Scratch arrays for the rules kernels that must not allocate (one per
    thread: two threads must never share one)."""

    owner: np.ndarray  # int32 (P,): area_into's owner by point
    stack: np.ndarray  # int32 (P,): area_into's flood stack
    region: np.ndarray  # int32 (P,): area_into's current region
    flooded: np.ndarray  # bool (P,): area_into's visited points
    superko: np.ndarray  # uint64 (SUPERKO_FILTER_WORDS,): legal_into's filter


def new_work(points: int) -> Work:
    return Work(
        owner=np.zeros(points, np.int32),
        stack=np.zeros(points, np.int32),
        region=np.zeros(points, np.int32),
        flooded=np.zeros(points, np.bool_),
        superko=np.zeros(SUPERKO_FILTER_WORDS, np.uint64),
    )


def history_capacity(points: int) -> int:
    """Room for the position hashes of a game; longer games stop recording."""
    return 4 * points + 64


def new_boards(count: int, size: int, rule: int = POSITIONAL_SUPERKO) -> Boards:
    points = size * size
    boards = Boards(
        stones=np.zeros((count, points), np.int8),
        head=np.full((count, points), -1, np.int32),
        nxt=np.full((count, points), -1, np.int32),
        libs=np.zeros((count, points), np.int32),
        lib_sum=np.zeros((count, points), np.int64),
        lib_sq=np.zeros((count, points), np.int64),
        group_size=np.zeros((count, points), np.int32),
        meta=np.zeros((count, META_COLUMNS), np.int32),
        hash=np.zeros(count, np.uint64),
        history=np.zeros((count, history_capacity(points)), np.uint64),
    )
    for g in range(count):
        reset(boards, g, size, rule)
    return boards


@njit(cache=True)
def reset(b, g, size, rule):
    b.stones[g, :] = EMPTY
    b.head[g, :] = -1
    b.nxt[g, :] = -1
    b.libs[g, :] = 0
    b.lib_sum[g, :] = 0
    b.lib_sq[g, :] = 0
    b.group_size[g, :] = 0
    b.meta[g, :] = 0
    b.meta[g, TO_PLAY] = BLACK
    b.meta[g, KO] = -1
    b.meta[g, LAST] = -1
    b.meta[g, RULE] = rule
    b.meta[g, SIZE] = size
    b.hash[g] = 0
    b.history[g, 0] = 0
    b.meta[g, HIST_LEN] = 1


@njit(**_HOT)
def copy_game(src, gs, dst, gd):
    """Copy game ``gs`` of ``src`` into slot ``gd`` of ``dst`` (same board size)."""
    for p in range(src.stones.shape[1]):
        dst.stones[gd, p] = src.stones[gs, p]
        dst.head[gd, p] = src.head[gs, p]
        dst.nxt[gd, p] = src.nxt[gs, p]
        dst.libs[gd, p] = src.libs[gs, p]
        dst.lib_sum[gd, p] = src.lib_sum[gs, p]
        dst.lib_sq[gd, p] = src.lib_sq[gs, p]
        dst.group_size[gd, p] = src.group_size[gs, p]
    for c in range(src.meta.shape[1]):
        dst.meta[gd, c] = src.meta[gs, c]
    dst.hash[gd] = src.hash[gs]
    for i in range(src.meta[gs, HIST_LEN]):
        dst.history[gd, i] = src.history[gs, i]


@njit(cache=True, inline="always")
def in_atari(b, g, h):
    n = np.int64(b.libs[g, h])
    s = b.lib_sum[g, h]
    return n > 0 and n * b.lib_sq[g, h] == s * s


@njit(cache=True, inline="always")
def atari_point(b, g, h):
    """The single liberty of a group in atari."""
    return b.lib_sum[g, h] // b.libs[g, h] - 1


@njit(cache=True, inline="always")
def _add_lib(b, g, h, q):
    v = np.int64(q + 1)
    b.libs[g, h] += 1
    b.lib_sum[g, h] += v
    b.lib_sq[g, h] += v * v


@njit(cache=True, inline="always")
def _remove_lib(b, g, h, q):
    v = np.int64(q + 1)
    b.libs[g, h] -= 1
    b.lib_sum[g, h] -= v
    b.lib_sq[g, h] -= v * v


@njit(**_HOT)
def count_liberties(b, g, h, nbr, mark):
    """Exact number of distinct liberties of the group headed by ``h``.

    Pseudo-liberties overcount shared points; features need the true count.
    ``mark`` is a zeroed int8 scratch array of length P, left zeroed.
    """
    count = 0
    s = h
    while True:
        for k in range(4):
            q = nbr[s, k]
            if q >= 0 and b.stones[g, q] == EMPTY and mark[q] == 0:
                mark[q] = 1
                count += 1
        s = b.nxt[g, s]
        if s == h:
            break
    s = h
    while True:
        for k in range(4):
            q = nbr[s, k]
            if q >= 0:
                mark[q] = 0
        s = b.nxt[g, s]
        if s == h:
            break
    return count


@njit(**_HOT)
def _remove_group(b, g, h, nbr, zob):
    """Take a group off the board, giving its points back as liberties."""
    color = b.stones[g, h]
    removed = 0
    s = h
    while True:
        b.hash[g] ^= zob[s, color]
        b.stones[g, s] = EMPTY
        removed += 1
        s = b.nxt[g, s]
        if s == h:
            break
    s = h
    while True:
        nxt = b.nxt[g, s]
        for k in range(4):
            q = nbr[s, k]
            if q >= 0 and b.stones[g, q] != EMPTY:
                _add_lib(b, g, b.head[g, q], s)
        b.head[g, s] = -1
        b.nxt[g, s] = -1
        s = nxt
        if s == h:
            break
    return removed


@njit(**_HOT)
def _merge(b, g, big, small):
    """Merge group ``small`` into ``big`` (both heads)."""
    s = small
    while True:
        b.head[g, s] = big
        s = b.nxt[g, s]
        if s == small:
            break
    # Splice the two rings.
    t = b.nxt[g, big]
    b.nxt[g, big] = b.nxt[g, small]
    b.nxt[g, small] = t
    b.libs[g, big] += b.libs[g, small]
    b.lib_sum[g, big] += b.lib_sum[g, small]
    b.lib_sq[g, big] += b.lib_sq[g, small]
    b.group_size[g, big] += b.group_size[g, small]


@njit(**_HOT)
def _place(b, g, p, color, nbr, zob):
    """Put a stone down, update liberties and merge with friendly groups."""
    b.stones[g, p] = color
    b.hash[g] ^= zob[p, color]
    b.head[g, p] = p
    b.nxt[g, p] = p
    b.libs[g, p] = 0
    b.lib_sum[g, p] = 0
    b.lib_sq[g, p] = 0
    b.group_size[g, p] = 1
    for k in range(4):
        q = nbr[p, k]
        if q < 0:
            continue
        if b.stones[g, q] == EMPTY:
            _add_lib(b, g, p, q)
        else:
            _remove_lib(b, g, b.head[g, q], p)
    for k in range(4):
        q = nbr[p, k]
        if q < 0 or b.stones[g, q] != color:
            continue
        hq = b.head[g, q]
        hp = b.head[g, p]
        if hq == hp:
            continue
        if b.group_size[g, hq] >= b.group_size[g, hp]:
            _merge(b, g, hq, hp)
        else:
            _merge(b, g, hp, hq)


@njit(**_HOT, inline="always")
def _captures_and_hash(b, g, p, color, nbr, zob):
    """(stones captured, hash after the move) without changing the board."""
    other = 3 - color
    h = b.hash[g] ^ zob[p, color]
    captured = 0
    seen0 = -1
    seen1 = -1
    seen2 = -1
    for k in range(4):
        q = nbr[p, k]
        if q < 0 or b.stones[g, q] != other:
            continue
        hq = b.head[g, q]
        if hq == seen0 or hq == seen1 or hq == seen2:  # noqa: SIM109 (plain ints for numba)
            continue
        if k == 0:
            seen0 = hq
        elif k == 1:
            seen1 = hq
        else:
            seen2 = hq
        if in_atari(b, g, hq):
            s = hq
            while True:
                h ^= zob[s, other]
                captured += 1
                s = b.nxt[g, s]
                if s == hq:
                    break
    return captured, h


@njit(**_HOT, inline="always")
def _is_suicide(b, g, p, color, nbr):
    """True when the stone at ``p`` would have no liberty and capture nothing."""
    other = 3 - color
    for k in range(4):
        q = nbr[p, k]
        if q < 0:
            continue
        c = b.stones[g, q]
        if c == EMPTY:
            return False
        hq = b.head[g, q]
        if c == color:
            if not in_atari(b, g, hq):
                return False  # friendly group keeps another liberty
        elif c == other and in_atari(b, g, hq):
            return False  # captures
    return True


@njit(**_HOT, inline="always")
def _check_local(b, g, p, color, nbr):
    """Legality code of ``p`` by every rule but positional superko."""
    points = b.stones.shape[1]
    rule = b.meta[g, RULE]
    if p == points:
        return NO_PASS if rule == NOGO else LEGAL
    if p < 0 or p > points:
        return OFF_BOARD
    if b.stones[g, p] != EMPTY:
        return OCCUPIED
    if _is_suicide(b, g, p, color, nbr):
        return SUICIDE
    if rule == NOGO:
        other = 3 - color
        for k in range(4):
            q = nbr[p, k]
            if q >= 0 and b.stones[g, q] == other and in_atari(b, g, b.head[g, q]):
                return NOGO_CAPTURE
        return LEGAL
    if p == b.meta[g, KO] and color == b.meta[g, TO_PLAY]:
        # The ban binds the side whose stone was just taken, not the capturer
        # (who may fill the point, e.g. when a record has it move twice).
        return KO_BAN
    return LEGAL


@njit(**_HOT)
def _repeats(b, g, h):
    """Whether the position with hash ``h`` occurred before in game ``g``."""
    for i in range(b.meta[g, HIST_LEN]):  # noqa: SIM110 (a loop: no generators without NRT)
        if b.history[g, i] == h:
            return True
    return False


@njit(**_HOT)
def check_move(b, g, p, color, nbr, zob):
    """Legality code for ``color`` playing ``p`` (``P`` is pass) in game ``g``."""
    code = _check_local(b, g, p, color, nbr)
    if code == LEGAL and p != b.stones.shape[1] and b.meta[g, RULE] == POSITIONAL_SUPERKO:
        # Any move may close a cycle (a throw-in that is later recaptured),
        # so every move is checked against the whole history.
        _, h = _captures_and_hash(b, g, p, color, nbr, zob)
        if _repeats(b, g, h):
            return SUPERKO
    return code


@njit(**_HOT)
def play(b, g, p, nbr, zob):
    """Play ``p`` for the side to move (``P`` = pass); returns stones captured.

    The move must be legal (``check_move``); kernels trust their callers so
    the hot loop pays for one legality check, not two.
    """
    points = b.stones.shape[1]
    color = b.meta[g, TO_PLAY]
    other = 3 - color
    captured = 0
    if p == points:
        b.meta[g, PASSES] += 1
        b.meta[g, KO] = -1
    else:
        b.meta[g, PASSES] = 0
        single = -1
        for k in range(4):
            q = nbr[p, k]
            if q >= 0 and b.stones[g, q] == other:
                hq = b.head[g, q]
                if in_atari(b, g, hq):
                    n = _remove_group(b, g, hq, nbr, zob)
                    if n == 1:
                        single = q
                    captured += n
        _place(b, g, p, color, nbr, zob)
        hp = b.head[g, p]
        # Simple ko: one stone captured by a lone stone left with one liberty.
        if captured == 1 and b.group_size[g, hp] == 1 and in_atari(b, g, hp):
            b.meta[g, KO] = single
        else:
            b.meta[g, KO] = -1
        if color == BLACK:
            b.meta[g, CAPS_BLACK] += captured
        else:
            b.meta[g, CAPS_WHITE] += captured
    n = b.meta[g, HIST_LEN]
    if n < b.history.shape[1]:
        b.history[g, n] = b.hash[g]
        b.meta[g, HIST_LEN] = n + 1
    b.meta[g, TO_PLAY] = other
    b.meta[g, MOVES] += 1
    b.meta[g, LAST] = p
    return captured


@njit(cache=True)
def legal_mask(b, g, nbr, zob, out):
    """Fill ``out`` (bool, length P + 1) with the legal moves of the side to move."""
    legal_into(b, g, nbr, zob, out, np.empty(SUPERKO_FILTER_WORDS, np.uint64))
    return out


@njit(**_HOT)
def legal_into(b, g, nbr, zob, out, seen):
    """:func:`legal_mask` without allocating: ``seen`` (uint64,
    ``SUPERKO_FILTER_WORDS``) is overwritten as its superko filter.

    Under positional superko every move's hash is looked up in the game's
    history. A 4096-bit filter of the history's hashes, built once, answers
    most lookups without the scan (the move loop would otherwise cost P times
    the game's length: 361 x 300 comparisons late in a 19x19 game). Compiled
    without reference counting and with the per-point checks inlined, it
    fills a 9x9 mask in about 1.0 us, against 6.6 us as an allocating kernel
    (where every read of a ``Boards`` array increfs it) calling the checks
    with the ten-array tuple; either change alone gained little.
    """
    color = b.meta[g, TO_PLAY]
    points = b.stones.shape[1]
    superko = b.meta[g, RULE] == POSITIONAL_SUPERKO
    if superko:
        for w in range(seen.shape[0]):
            seen[w] = 0
        for i in range(b.meta[g, HIST_LEN]):
            h = b.history[g, i]
            seen[(h >> np.uint64(6)) & np.uint64(63)] |= np.uint64(1) << (h & np.uint64(63))
    for p in range(points + 1):
        code = _check_local(b, g, p, color, nbr)
        if code == LEGAL and superko and p != points:
            _, h = _captures_and_hash(b, g, p, color, nbr, zob)
            bit = np.uint64(1) << (h & np.uint64(63))
            if seen[(h >> np.uint64(6)) & np.uint64(63)] & bit and _repeats(b, g, h):
                code = SUPERKO
        out[p] = code == LEGAL


@njit(cache=True)
def rebuild(b, g, nbr, zob):
    """Recompute groups, liberties and hash from ``stones`` (after setup edits).

    Setup positions (SGF ``AB``/``AW``/``AE``) may be anything, so groups are
    rebuilt from scratch; history restarts at this position.
    """
    points = b.stones.shape[1]
    saved = b.stones[g, :].copy()
    b.stones[g, :] = EMPTY
    b.head[g, :] = -1
    b.nxt[g, :] = -1
    b.libs[g, :] = 0
    b.lib_sum[g, :] = 0
    b.lib_sq[g, :] = 0
    b.group_size[g, :] = 0
    b.hash[g] = 0
    for p in range(points):
        if saved[p] != EMPTY:
            _place(b, g, p, saved[p], nbr, zob)
    b.meta[g, KO] = -1
    b.history[g, 0] = b.hash[g]
    b.meta[g, HIST_LEN] = 1


@njit(cache=True)
def area_score(b, g, nbr, owner):
    """Tromp-Taylor area: ``owner`` gets +1 Black, -1 White, 0 neutral per point.

    Returns Black's area minus White's area (komi not included).
    """
    points = b.stones.shape[1]
    return area_into(b, g, nbr, owner, np.empty(points, np.int32), np.empty(points, np.int32),
                     np.empty(points, np.bool_))


@njit(**_HOT)
def area_into(b, g, nbr, owner, stack, region, seen):
    """:func:`area_score` in the caller's scratch arrays (each of length P)."""
    points = b.stones.shape[1]
    for p in range(points):
        seen[p] = False
    total = 0
    for p in range(points):
        c = b.stones[g, p]
        if c == BLACK:
            owner[p] = 1
            total += 1
        elif c == WHITE:
            owner[p] = -1
            total -= 1
        elif not seen[p]:
            # Flood the empty region, noting which colours it touches.
            top = 0
            count = 0
            stack[top] = p
            top += 1
            seen[p] = True
            touches = 0
            while top > 0:
                top -= 1
                s = stack[top]
                region[count] = s
                count += 1
                for k in range(4):
                    q = nbr[s, k]
                    if q < 0:
                        continue
                    cq = b.stones[g, q]
                    if cq == EMPTY:
                        if not seen[q]:
                            seen[q] = True
                            stack[top] = q
                            top += 1
                    else:
                        touches |= cq
            value = 1 if touches == BLACK else (-1 if touches == WHITE else 0)
            for i in range(count):
                owner[region[i]] = value
            total += value * count
    return total


@njit(**_HOT, inline="always")
def is_eye(b, g, p, color, nbr, diag):
    """A point whose neighbours are all ``color`` and not a false eye.

    Random playouts never fill these, so that games end with living groups.
    """
    for k in range(4):
        q = nbr[p, k]
        if q >= 0 and b.stones[g, q] != color:
            return False
    bad = 0
    edge = 0
    for k in range(4):
        q = diag[p, k]
        if q < 0:
            edge = 1
        elif b.stones[g, q] == 3 - color:
            bad += 1
    return bad + edge < 2


@njit(**_HOT)
def random_move(b, g, nbr, diag, zob, scratch):
    """A uniformly random legal move that fills no own eye; pass if none.

    NoGo has no pass, and filling an own eye is often its only legal move
    left, so there an eye is chosen before giving up: ``P`` then means the
    side to move has no legal move at all (and has lost). Before this, a third
    of NoGo playouts stopped with eye moves still legal and the wrong loser.
    """
    points = b.stones.shape[1]
    color = b.meta[g, TO_PLAY]
    total = 0
    for p in range(points):
        if b.stones[g, p] == EMPTY:
            scratch[total] = p
            total += 1
    n = total
    while n > 0:
        i = np.random.randint(n)
        p = scratch[i]
        if not is_eye(b, g, p, color, nbr, diag) and check_move(b, g, p, color, nbr, zob) == LEGAL:
            return p
        n -= 1
        scratch[i] = scratch[n]
        scratch[n] = p  # keep the rejected points for the NoGo second round
    if b.meta[g, RULE] == NOGO:
        n = total
        while n > 0:
            i = np.random.randint(n)
            p = scratch[i]
            if check_move(b, g, p, color, nbr, zob) == LEGAL:
                return p
            n -= 1
            scratch[i] = scratch[n]
            scratch[n] = p
    return points


@njit(cache=True)
def playout(b, g, nbr, diag, zob, max_moves):
    """Random moves until two passes (Go) or no legal move (NoGo).

    Returns the number of moves played. In NoGo the side left to move has
    lost when this returns.
    """
    points = b.stones.shape[1]
    scratch = np.empty(points, np.int32)
    played = 0
    while played < max_moves and b.meta[g, PASSES] < 2:
        p = random_move(b, g, nbr, diag, zob, scratch)
        if p == points and b.meta[g, RULE] == NOGO:
            break
        play(b, g, p, nbr, zob)
        played += 1
    return played


@njit(cache=True)
def seed_rng(seed):
    """Seed numba's own generator (separate from NumPy's)."""
    np.random.seed(seed)
