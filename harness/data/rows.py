"""What one game contributes to a dataset: its table row and its position rows.

These are the only things that cross from the ingest workers to the writer,
and what self-play hands to the same writer, so they hold plain numpy arrays
and strings (cheap to pickle between processes, nothing to replay).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np

from harness.game.geometry import BLACK


@dataclass
class GameInfo:
    """One row of ``/games`` (``first``, ``split`` and ``cazenave_row`` are set by the writer)."""

    source: str
    index: int
    digest: str  # 32 hex characters, see :func:`game_digest`
    length: int  # main-line moves
    black: str = ""
    white: str = ""
    black_rank: str = ""
    white_rank: str = ""
    date: str = ""
    rules: str = ""
    result: str = "?"  # SGF RE form
    winner: int = 0
    result_known: bool = False
    komi: float = 0.0
    handicap: int = 0


@dataclass
class GamePositions:
    """The positions of one game, each the position *before* the move stored with it.

    ``ownership`` and ``score`` are from the side to move's view, like
    ``value``; ``soft_policy`` is CSR (offsets (n+1,), index, prob).
    """

    stones: np.ndarray  # int8 (n, P)
    to_play: np.ndarray  # int8 (n,)
    move: np.ndarray  # int16 (n,)
    value: np.ndarray  # int8 (n,)
    value_known: bool
    soft_policy: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
    ownership: np.ndarray | None = None  # int8 (n, P)
    score: np.ndarray | None = None  # float32 (n,)

    def __len__(self) -> int:
        return len(self.move)


@dataclass
class RecordOutcome:
    """What became of one game record: ``kept`` (with rows) or ``rejected`` (with why)."""

    source: str
    index: int
    kind: str  # "kept" or "rejected"
    reason: str = ""
    info: GameInfo | None = None
    positions: GamePositions | None = field(default=None, repr=False)


def game_digest(size: int, setup: tuple, moves: np.ndarray) -> str:
    """Identity of a game for dedupe: board size, setup stones and the main line.

    Setup point lists are sorted (their order in the SGF means nothing);
    players, komi and result are left out on purpose: the same game copied
    into two folders often differs only in those.
    """
    h = hashlib.blake2b(digest_size=16)
    h.update(np.int16(size).tobytes())
    h.update(b"".join(b"|" + np.sort(np.asarray(points, np.int16)).tobytes()
                      for points in setup))
    h.update(b"|")
    h.update(np.ascontiguousarray(moves, np.int16).tobytes())
    return h.hexdigest()


def values_from_result(to_play: np.ndarray, winner: int) -> np.ndarray:
    """+1 where the side to move won, -1 where it lost, 0 for draws and unknowns."""
    if winner == 0:
        return np.zeros(len(to_play), np.int8)
    return np.where(to_play == winner, 1, -1).astype(np.int8)


def ownership_for_side_to_move(owner_black: np.ndarray, to_play: np.ndarray) -> np.ndarray:
    """Turn Black's-view ownership (n, P) into each row's side-to-move view."""
    sign = np.where(to_play == BLACK, 1, -1).astype(np.int8)
    return (owner_black.astype(np.int8) * sign[:, None]).astype(np.int8)
