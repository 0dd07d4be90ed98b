"""Named input encoders: stones history in, channels-last float planes out.

An encoder is a pure function of a position and the positions before it.
Datasets store only stones, so every plane (liberties, ladders, last move) is
rebuilt from a ``(N, T, P)`` int8 history by one compiled kernel per encoder
that loops over the whole batch; Python only checks shapes once per call.

"Own" and "opponent" always mean the side to move in the *current* position
and the other colour, also in the history planes, as in AlphaGo Zero.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from numba import njit

from harness.features import planes
from harness.features.ladder import max_depth, new_scratch, read_ladder
from harness.features.strings import label_strings
from harness.game.geometry import BLACK, EMPTY, WHITE, geometry


@dataclass(frozen=True)
class Encoder:
    """A registered encoder; ``plane_names[c]`` says what channel ``c`` holds."""

    name: str
    planes: int  # C
    history: int  # T: positions needed, the current one included
    plane_names: tuple[str, ...]
    source: str  # the paper section the planes follow
    kernel: Callable = field(repr=False, compare=False)

    def encode(
        self,
        stones_history: np.ndarray,
        to_play: np.ndarray,
        size: int,
        out: np.ndarray | None = None,
    ) -> np.ndarray:
        """Planes ``(N, size, size, C)`` float32 for a batch of positions.

        ``stones_history`` is ``(N, T', P)`` with ``T' >= history``; ``[:, -1]``
        is the current position and rows before the game started are empty.
        ``out``, when given, is filled in place (C-contiguous float32).
        """
        hist = np.ascontiguousarray(stones_history, dtype=np.int8)
        if hist.ndim != 3:
            raise ValueError(f"stones_history must be (N, T, P), got shape {hist.shape}")
        n, t, points = hist.shape
        if points != size * size:
            raise ValueError(
                f"stones_history has {points} points, a {size}x{size} board has {size * size}"
            )
        if t < self.history:
            raise ValueError(f"{self.name} needs {self.history} positions of history, got {t}")
        colors = np.ascontiguousarray(to_play, dtype=np.int8).reshape(-1)
        if colors.shape != (n,):
            raise ValueError(f"to_play must have one colour per position ({n}), got {colors.shape}")
        if np.any((colors != BLACK) & (colors != WHITE)):
            raise ValueError("to_play values must be BLACK (1) or WHITE (2)")
        shape = (n, size, size, self.planes)
        if out is None:
            out = np.empty(shape, np.float32)
        elif out.shape != shape or out.dtype != np.float32 or not out.flags.c_contiguous:
            raise ValueError(f"out must be a C-contiguous float32 array of shape {shape}")
        geo = geometry(size)
        self.kernel(hist, colors, geo.neighbours, size, out.reshape(n, points, self.planes))
        return out

    def describe(self) -> str:
        """The plane list, numbered, with the source it follows (for docs and reports)."""
        lines = [f"{self.name}: {self.planes} planes, {self.history} positions", self.source]
        lines += [f"  {c:2d} {name}" for c, name in enumerate(self.plane_names)]
        return "\n".join(lines)

    def encode_game(self, game) -> np.ndarray:
        """Planes ``(B, B, C)`` for the current position of a :class:`harness.game.Game`."""
        return self.encode(
            history_window(game.history, self.history, game.size * game.size)[None],
            np.array([game.to_play], np.int8),
            game.size,
        )[0]


def history_window(history: list[np.ndarray], length: int, points: int) -> np.ndarray:
    """The last ``length`` positions of a game, oldest first, padded with empty boards."""
    window = np.full((length, points), EMPTY, np.int8)
    recent = history[-length:]
    if recent:
        window[length - len(recent) :] = np.asarray(recent, dtype=np.int8)
    return window


# --- plane groups shared by several encoders --------------------------------


@njit(cache=True, nogil=True)
def _load(board, row):
    """Copy a stored position, treating any value but BLACK/WHITE as empty."""
    for p in range(row.shape[0]):
        v = row[p]
        board[p] = v if v in (BLACK, WHITE) else EMPTY


@njit(cache=True, nogil=True)
def _own_opponent_history(o, hist, me, steps, ch):
    """Own then opponent stones for the last ``steps`` positions, newest first.

    Writes zeros too, and point by point: channels-last rows are contiguous,
    so this fills each output row in one sweep instead of one sweep per plane.
    """
    t_last = hist.shape[0] - 1
    opp = 3 - me
    for p in range(hist.shape[1]):
        for t in range(steps):
            v = hist[t_last - t, p]
            o[p, ch + 2 * t] = 1.0 if v == me else 0.0
            o[p, ch + 2 * t + 1] = 1.0 if v == opp else 0.0


@njit(cache=True, nogil=True)
def _new_labels(points):
    """Arrays :func:`label_strings` fills: head, liberty count, first two liberties."""
    return (
        np.empty(points, np.int32),  # head
        np.zeros(points, np.int32),  # libs
        np.empty(points, np.int32),  # lib0
        np.empty(points, np.int32),  # lib1
    )


# --- agz17 -------------------------------------------------------------------

_AGZ_NAMES = (
    *tuple(
        f"{who} stones t-{t}" if t else f"{who} stones now"
        for t in range(8)
        for who in ("own", "opponent")
    ),
    "ones if Black to play",
)


@njit(cache=True, nogil=True)
def _agz17(hist, to_play, nbr, size, out):
    """AlphaGo Zero inputs (Methods, 'Neural network architecture'): see ``AGZ17.source``."""
    for n in range(hist.shape[0]):
        o = out[n]
        _own_opponent_history(o, hist[n], to_play[n], 8, 0)
        planes.constant(o, 16, 1.0 if to_play[n] == BLACK else 0.0)


AGZ17 = Encoder(
    name="agz17",
    planes=17,
    history=8,
    plane_names=_AGZ_NAMES,
    source=(
        "AlphaGo Zero (Silver et al. 2017), Methods 'Neural network architecture', "
        "as restated in qiqiao-go-policy-value-net section 1: s_t = [X_t, Y_t, ..., "
        "X_t-7, Y_t-7, C], X own stones, Y opponent stones, C = 1 when Black is to play"
    ),
    kernel=_agz17,
)

# --- cazenave21 ----------------------------------------------------------------

_CAZENAVE_NAMES = (
    "ones if Black to play",
    "lost ladder: own strings in atari that cannot escape",
    "lost ladder: opponent strings in atari that could not escape",
    "unsettled ladder: own two-liberty strings the opponent can ladder",
    "unsettled ladder: opponent two-liberty strings we can ladder",
    "stones of strings with 1 liberty",
    "stones of strings with 2 liberties",
    "stones of strings with 3 liberties",
    "stones of strings with 4 liberties",
    "stones of strings with 5 liberties",
    "stones of strings with 6 or more liberties",
    "own stones now",
    "opponent stones now",
    "own stones t-1",
    "opponent stones t-1",
    "own stones t-2",
    "opponent stones t-2",
    "own stones t-3",
    "opponent stones t-3",
    "own stones t-4",
    "opponent stones t-4",
)


@njit(cache=True, nogil=True)
def _cazenave21(hist, to_play, nbr, size, out):
    """Golois inputs (cazenave-mobile-networks-go III and IV.E): see ``CAZENAVE21.source``.

    The paper counts the planes (2 lost-ladder, 2 unsettled-ladder, 6 liberty
    planes "from 1 to 6 or more") without defining them further. Read here:
    a *lost* ladder is a string in atari whose owner, moving first, cannot get
    out; an *unsettled* one has two liberties and is captured by a ladder if
    the opponent moves first (so whoever moves first decides it). Both are
    split by owner, own = side to move. Liberty planes count the liberties of
    each stone's string whatever its colour, the colour being in the stone
    planes next to them.
    """
    points = hist.shape[2]
    sc = new_scratch(points, max_depth(size))
    head, libs, lib0, lib1 = _new_labels(points)
    ladder_plane = np.zeros(points, np.int32)  # per string head: its ladder channel, 0 if none
    board = sc.board
    for n in range(hist.shape[0]):
        o = out[n]
        o[:, :] = 0.0
        me = to_play[n]
        h_n = hist[n]
        _load(board, h_n[h_n.shape[0] - 1])
        label_strings(board, nbr, head, libs, lib0, lib1, sc.mark, sc.counter, sc.stack)
        if me == BLACK:
            planes.constant(o, 0, 1.0)
        for h in range(points):
            ladder_plane[h] = 0
            if head[h] == h and libs[h] <= 2 and read_ladder(sc, h, nbr):
                ladder_plane[h] = (1 if libs[h] == 1 else 3) + (0 if board[h] == me else 1)
        for p in range(points):
            h = head[p]
            if h >= 0 and ladder_plane[h] > 0:
                o[p, ladder_plane[h]] = 1.0
        planes.liberty_counts(o, board, head, libs, 5, 6)
        _own_opponent_history(o, h_n, me, 5, 11)


CAZENAVE21 = Encoder(
    name="cazenave21",
    planes=21,
    history=5,
    plane_names=_CAZENAVE_NAMES,
    source=(
        "cazenave-mobile-networks-go section III (21 planes: colour to play 1, "
        "ladders 4 = 2 lost + 2 unsettled, liberties 6 = 1..6-or-more, current "
        "state 2, four previous states 8) and section IV.E (ladder status of the stones)"
    ),
    kernel=_cazenave21,
)

# --- qiqiao10 ------------------------------------------------------------------

_QIQIAO_NAMES = (
    tuple(f"black stones t-{t}" if t else "black stones now" for t in (3, 2, 1, 0))
    + tuple(f"white stones t-{t}" if t else "white stones now" for t in (3, 2, 1, 0))
    + ("ones if White to play", "last move")
)


@njit(cache=True, nogil=True)
def _qiqiao10(hist, to_play, nbr, size, out):
    """Qiqiao inputs (qiqiao-go-policy-value-net section 1): see ``QIQIAO10.source``.

    Stones by colour, not by side to move, and a to-play plane that is 1 for
    White, as the paper states (the reverse of AlphaGo Zero's C plane). The
    reference engine keeps the last four positions after each colour's own
    moves; here they are the last four positions, the contract every encoder
    shares.
    """
    for n in range(hist.shape[0]):
        o = out[n]
        o[:, :] = 0.0
        h_n = hist[n]
        last = h_n.shape[0] - 1
        for i in range(4):  # oldest first, as the reference engine stacks them
            row = h_n[last - 3 + i]
            planes.stones(o, row, BLACK, i)
            planes.stones(o, row, WHITE, 4 + i)
        if to_play[n] == WHITE:
            planes.constant(o, 8, 1.0)
        planes.last_move(o, h_n[last - 1], h_n[last], 9)


QIQIAO10 = Encoder(
    name="qiqiao10",
    planes=10,
    history=4,
    plane_names=_QIQIAO_NAMES,
    source=(
        "qiqiao-go-policy-value-net section 1: four positions of black stones, four "
        "of white stones, a to-play plane (0 for Black, 1 for White), the last move "
        "(all zero after a pass)"
    ),
    kernel=_qiqiao10,
)

# --- mao3 ------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _mao3(hist, to_play, nbr, size, out):
    """MAO inputs (mao-network-go section 2.2, a 19x19x3 tensor): see ``MAO3.source``."""
    for n in range(hist.shape[0]):
        o = out[n]
        _own_opponent_history(o, hist[n], to_play[n], 1, 0)
        planes.constant(o, 2, 1.0 if to_play[n] == BLACK else 0.0)


MAO3 = Encoder(
    name="mao3",
    planes=3,
    history=1,
    plane_names=("own stones now", "opponent stones now", "ones if Black to play"),
    source=(
        "mao-network-go section 2.2: a 19x19x3 state tensor; the paper does not list "
        "the planes, so they are the AlphaGo Zero planes without history (the method "
        "the paper trains with): own stones, opponent stones, colour to play"
    ),
    kernel=_mao3,
)

# --- nogo ------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _nogo(hist, to_play, nbr, size, out):
    """NoGoZero+ inputs (nogozero-plus-garb 3.2.4): AlphaZero planes + 4 liberty planes.

    The paper does not say how many history steps its AlphaZero planes use;
    the AlphaGo Zero eight are kept, so ``nogo`` is ``agz17`` plus four planes.
    """
    points = hist.shape[2]
    head, libs, lib0, lib1 = _new_labels(points)
    board = np.zeros(points, np.int8)
    mark = np.zeros(points, np.int32)
    counter = np.zeros(1, np.int64)
    stack = np.empty(points, np.int32)
    for n in range(hist.shape[0]):
        o = out[n]
        o[:, :] = 0.0
        me = to_play[n]
        h_n = hist[n]
        _own_opponent_history(o, h_n, me, 8, 0)
        if me == BLACK:
            planes.constant(o, 16, 1.0)
        _load(board, h_n[h_n.shape[0] - 1])
        label_strings(board, nbr, head, libs, lib0, lib1, mark, counter, stack)
        planes.liberty_points(o, head, libs, lib0, lib1, board, me, 17, 18)
        planes.liberty_points(o, head, libs, lib0, lib1, board, 3 - me, 19, 20)


NOGO = Encoder(
    name="nogo",
    planes=21,
    history=8,
    plane_names=(
        *_AGZ_NAMES,
        "liberty of an own string with 1 liberty",
        "liberties of own strings with 2 liberties",
        "liberty of an opponent string with 1 liberty",
        "liberties of opponent strings with 2 liberties",
    ),
    source=(
        "nogozero-plus-garb section 3.2.4: the AlphaZero (agz17) planes plus four "
        "liberty planes, marking the liberty points of own/opponent strings with "
        "one or two liberties ('half-dead', 'near-dead', 'half-kill', 'near-kill')"
    ),
    kernel=_nogo,
)

# --- registry --------------------------------------------------------------------

_REGISTRY: dict[str, Encoder] = {e.name: e for e in (AGZ17, CAZENAVE21, QIQIAO10, MAO3, NOGO)}


def encoder_names() -> list[str]:
    return list(_REGISTRY)


def get_encoder(name: str) -> Encoder:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown encoder {name!r} (known: {', '.join(_REGISTRY)})") from None
