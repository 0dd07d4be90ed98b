"""The on-disk schema of a positions file, in one place.

Datasets store a *compact board record* (the stones of each position plus
targets) instead of encoder planes, so one file serves every encoder: planes
are rebuilt at read time from a position and the rows before it in the same
game. ``datasets/README.md`` documents the layout and the measured sizes.

A file is complete only when the root attribute ``complete`` is true; it is
set last, just before the file is renamed from ``NAME.h5.partial``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

FORMAT = "go-harness/positions"
FORMAT_VERSION = 1

SPLITS = ("train", "val", "test")
TRAIN, VAL, TEST = range(3)

# Rows per chunk of the per-position datasets. A chunk of stones is ~370 kB
# raw at 19x19 and ~2-8 kB compressed: big enough for gzip to exploit the
# similarity of consecutive positions, small enough for block reads.
POSITION_CHUNK = 1024
GAME_CHUNK = 4096
COMPRESSION = {"compression": "gzip", "compression_opts": 4}


@dataclass(frozen=True)
class Column:
    """One dataset of a table: its dtype and the per-row shape after the row axis."""

    name: str
    dtype: object
    per_point: bool = False  # shape (P,) per row instead of a scalar


STRING = "str"  # marker dtype: variable-length UTF-8

# /positions/*: one row per stored position (the position before a move).
POSITION_COLUMNS: tuple[Column, ...] = (
    Column("stones", np.int8, per_point=True),  # EMPTY/BLACK/WHITE per point
    Column("to_play", np.int8),  # colour that played ``move``
    Column("move", np.int16),  # policy target: point or P for pass
    Column("value", np.int8),  # final result from to_play's view: +1/-1/0
    Column("value_known", np.uint8),  # 0 where the game's result is unknown
    Column("game_id", np.int32),  # row of /games
    Column("move_number", np.int16),  # moves played before this position
)
# Optional per-position targets that self-play data carries.
OPTIONAL_POSITION_COLUMNS: tuple[Column, ...] = (
    Column("ownership", np.int8, per_point=True),  # final owner from to_play's view: +1/-1/0
    Column("score", np.float32),  # final score margin from to_play's view
)
# /soft_policy/*: visit-count policy targets in CSR form (only where a source has them).
SOFT_OFFSETS = "offsets"  # int64 (N + 1,): row r owns entries offsets[r]:offsets[r+1]
SOFT_INDEX = "index"  # int16: move index (P = pass)
SOFT_PROB = "prob"  # float16: probability

# /games/*: one row per kept game.
GAME_COLUMNS: tuple[Column, ...] = (
    Column("source", STRING),
    Column("index", np.int32),  # game number within its source
    Column("black", STRING),
    Column("white", STRING),
    Column("black_rank", STRING),
    Column("white_rank", STRING),
    Column("date", STRING),
    Column("rules", STRING),
    Column("result", STRING),  # SGF RE form
    Column("winner", np.int8),  # BLACK, WHITE or 0
    Column("result_known", np.uint8),
    Column("komi", np.float32),
    Column("handicap", np.int8),
    Column("length", np.int32),  # main-line moves
    Column("first", np.int64),  # first row in /positions
    Column("positions", np.int32),  # rows in /positions
    Column("digest", "S32"),  # dedupe key: hash of size, setup and moves
    Column("split", np.int8),  # TRAIN, VAL or TEST
    Column("cazenave_row", np.int64),  # the one validation position, -1 if none
)

# /rejects/*: every game not stored, with why.
REJECT_COLUMNS: tuple[Column, ...] = (
    Column("source", STRING),
    Column("index", np.int32),
    Column("kind", STRING),  # "rejected" or "duplicate"
    Column("reason", STRING),
)

# /sources/*: every input file with its checksum.
SOURCE_COLUMNS: tuple[Column, ...] = (
    Column("path", STRING),
    Column("bytes", np.int64),
    Column("sha256", "S64"),
)


class DatasetError(ValueError):
    """A positions file that cannot be used; the message is one line naming the file."""


def numpy_dtype(column: Column) -> np.dtype:
    return np.dtype(object) if column.dtype == STRING else np.dtype(column.dtype)


def column_range(column: Column) -> tuple[float, float] | None:
    """The smallest and largest number ``column`` holds; None for text and bytes columns.

    A value outside it cannot be cast (numpy raises OverflowError, or a float
    becomes inf), and the cast happens in the ingest's writer, where an
    exception ends the whole run; so values are checked against this first.
    """
    dtype = numpy_dtype(column)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return float(info.min), float(info.max)
    if dtype.kind == "f":
        most = float(np.finfo(dtype).max)
        return -most, most
    return None


def split_code(name: str) -> int:
    try:
        return SPLITS.index(name)
    except ValueError:
        raise ValueError(f"unknown split {name!r} (expected one of {', '.join(SPLITS)})") from None
