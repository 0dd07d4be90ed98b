"""Board geometry: point numbering, neighbour tables and Zobrist keys.

Points are numbered ``row * size + col`` with row 0 at the top (SGF's ``a``
row), which is also the policy index; ``pass`` is ``size * size``. The tables
are plain arrays so that compiled kernels can use them without objects.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

EMPTY, BLACK, WHITE = 0, 1, 2
MIN_SIZE, MAX_SIZE = 5, 19
COLUMNS = "ABCDEFGHJKLMNOPQRST"  # GTP skips the letter I


def opponent(color: int) -> int:
    return 3 - color


@dataclass(frozen=True)
class Geometry:
    """Everything about a board size that never changes during a game."""

    size: int
    neighbours: np.ndarray  # int32 (P, 4), -1 off the board
    diagonals: np.ndarray  # int32 (P, 4), -1 off the board
    zobrist: np.ndarray  # uint64 (P, 3): key for a stone of each colour at a point

    @property
    def points(self) -> int:
        return self.size * self.size

    @property
    def pass_move(self) -> int:
        return self.size * self.size


def _offset_table(size: int, offsets: tuple[tuple[int, int], ...]) -> np.ndarray:
    table = np.full((size * size, len(offsets)), -1, dtype=np.int32)
    for r in range(size):
        for c in range(size):
            for k, (dr, dc) in enumerate(offsets):
                rr, cc = r + dr, c + dc
                if 0 <= rr < size and 0 <= cc < size:
                    table[r * size + c, k] = rr * size + cc
    return table


@cache
def geometry(size: int) -> Geometry:
    if not MIN_SIZE <= size <= MAX_SIZE:
        raise ValueError(f"board size {size} unsupported (must be {MIN_SIZE}..{MAX_SIZE})")
    # Fixed seed: hashes must be identical across processes and runs (caches,
    # superko histories, dedupe keys stored on disk).
    rng = np.random.default_rng(0x60D0 + size)
    zobrist = rng.integers(1, 2**63 - 1, size=(size * size, 3), dtype=np.int64).astype(np.uint64)
    zobrist[:, EMPTY] = 0
    return Geometry(
        size=size,
        neighbours=_offset_table(size, ((-1, 0), (1, 0), (0, -1), (0, 1))),
        diagonals=_offset_table(size, ((-1, -1), (-1, 1), (1, -1), (1, 1))),
        zobrist=zobrist,
    )


def point_to_gtp(move: int, size: int) -> str:
    """GTP vertex: column letter (no I) and row number counted from the bottom."""
    if move == size * size:
        return "pass"
    row, col = divmod(move, size)
    return f"{COLUMNS[col]}{size - row}"


def gtp_to_point(vertex: str, size: int) -> int:
    text = vertex.strip().upper()
    if text == "PASS":
        return size * size
    ascii_row = text[1:].isascii() and text[1:].isdigit()  # int() would also read "D٣"
    if len(text) < 2 or text[0] not in COLUMNS[:size] or not ascii_row:
        raise ValueError(f"invalid vertex {vertex!r}")
    col = COLUMNS.index(text[0])
    row = size - int(text[1:])
    if not 0 <= row < size:
        raise ValueError(f"vertex {vertex!r} is off a {size}x{size} board")
    return row * size + col
