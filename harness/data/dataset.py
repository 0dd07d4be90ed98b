"""Read access to a complete positions file, with history rebuilt from rows.

Encoders need the T positions ending at the current one; in the file those
are the previous rows of the same game (``move_number`` says how many rows
back the game starts; earlier history rows are all EMPTY). History is
gathered by one compiled kernel from contiguous slices, because random single
row reads from a compressed file would decompress a chunk per row.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import h5py
import numpy as np
from numba import njit

from harness.data.layout import (
    FORMAT,
    FORMAT_VERSION,
    POSITION_COLUMNS,
    SOFT_INDEX,
    SOFT_OFFSETS,
    SOFT_PROB,
    SPLITS,
    VAL,
    DatasetError,
    split_code,
)
from harness.data.tables import read_columns

REQUIRED = (*tuple(f"positions/{c.name}" for c in POSITION_COLUMNS), "games/first", "games/split")
SCALAR_COLUMNS = ("to_play", "move", "value", "value_known", "game_id", "move_number")


def check_file(path: str | Path) -> None:
    """Raise :class:`DatasetError` (one line, naming the file) unless it is a complete dataset."""
    path = Path(path)
    if path.name.endswith(".partial"):
        raise DatasetError(f"{path}: incomplete ingest output (temporary file); rerun ingest")
    if not path.exists():
        journal = path.with_name(path.name + ".journal")
        hint = (
            f" (an interrupted ingest left {journal.name}; rerun with --resume)"
            if journal.exists()
            else ""
        )
        raise DatasetError(f"{path}: no such dataset{hint}")
    if not path.is_file() or not h5py.is_hdf5(path):
        raise DatasetError(f"{path}: not an HDF5 file")
    try:
        with h5py.File(path, "r") as f:
            _check_open(path, f)
    except OSError as e:
        raise DatasetError(f"{path}: unreadable HDF5 file ({_one_line(e)})") from None


def _one_line(error: Exception) -> str:
    return " ".join(str(error).split())[:200]


def _check_open(path: Path, f: h5py.File) -> None:
    fmt = f.attrs.get("format")
    if fmt != FORMAT:
        raise DatasetError(f"{path}: not a go-harness positions file (format attribute {fmt!r})")
    version = int(f.attrs.get("format_version", -1))
    if version > FORMAT_VERSION:
        raise DatasetError(
            f"{path}: format version {version} is newer than this harness reads ({FORMAT_VERSION})"
        )
    if not bool(f.attrs.get("complete", False)):
        raise DatasetError(f"{path}: incomplete (its ingest did not finish); rerun ingest")
    for name in REQUIRED:
        if name not in f:
            raise DatasetError(f"{path}: damaged, /{name} missing")


@njit(cache=True, nogil=True)
def gather_history(block, at, move_number, symmetry, perms, out):
    """``out[i, j]`` = stones ``T-1-j`` rows before ``block[at[i]]``, mapped by symmetry.

    Rows before the game start (more than ``move_number[i]`` back) are EMPTY.
    ``perms[k, p]`` is where point ``p`` goes under symmetry ``k``.
    """
    n, t, points = out.shape
    for i in range(n):
        k = symmetry[i]
        for j in range(t):
            back = t - 1 - j
            if back > move_number[i]:
                out[i, j, :] = 0
                continue
            src = at[i] - back
            for p in range(points):
                out[i, j, perms[k, p]] = block[src, p]
    return out


def identity_perms(points: int) -> np.ndarray:
    return np.arange(points, dtype=np.int32)[None, :]


@dataclass
class Slice:
    """Rows ``[lo, hi)`` of every per-position column, with ``lead`` rows before ``lo``."""

    lo: int
    hi: int
    lead: int
    stones: np.ndarray  # (lead + hi - lo, P)
    columns: dict[str, np.ndarray]  # (hi - lo,) each, without the lead rows


class PositionDataset:
    """A complete positions file opened for reading (use as a context manager)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        check_file(self.path)
        self.file = h5py.File(self.path, "r")
        self.attrs = {k: _attr(v) for k, v in self.file.attrs.items()}
        self.size = int(self.attrs["board_size"])
        self.points = self.size * self.size
        self.encoder = str(self.attrs.get("encoder", ""))
        self.n_positions = int(self.file["positions/move"].shape[0])
        self._games: dict[str, np.ndarray] | None = None

    def __enter__(self) -> PositionDataset:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.file.close()

    def has(self, column: str) -> bool:
        if column == "soft_policy":
            return "soft_policy" in self.file
        return f"positions/{column}" in self.file

    @property
    def games(self) -> dict[str, np.ndarray]:
        if self._games is None:
            self._games = read_columns(self.file["games"])
        return self._games

    @property
    def n_games(self) -> int:
        return int(self.file["games/first"].shape[0])

    def split_games(self, split: str) -> np.ndarray:
        return np.flatnonzero(self.games["split"] == split_code(split))

    def split_rows(self, split: str, cazenave: bool | None = None) -> np.ndarray:
        """Sorted position rows of a split.

        ``cazenave`` (default: as recorded at ingest, for ``val`` only) keeps
        the one recorded position per validation game.
        """
        code = split_code(split)
        games = self.split_games(split)
        if cazenave is None:
            cazenave = code == VAL and bool(self.attrs.get("cazenave_val", False))
        if cazenave:
            rows = self.games["cazenave_row"][games]
            if np.any(rows < 0):
                raise DatasetError(
                    f"{self.path}: no Cazenave positions recorded for split {split!r}"
                )
            return np.sort(rows.astype(np.int64))
        first = self.games["first"][games].astype(np.int64)
        counts = self.games["positions"][games].astype(np.int64)
        if counts.sum() == 0:
            return np.zeros(0, np.int64)
        starts = np.repeat(first - np.concatenate(([0], np.cumsum(counts)[:-1])), counts)
        return starts + np.arange(counts.sum(), dtype=np.int64)

    def read_slice(self, lo: int, hi: int, history: int, columns=SCALAR_COLUMNS) -> Slice:
        """Contiguous rows plus the ``history - 1`` rows before them."""
        lead = min(lo, max(0, history - 1))
        stones = self.file["positions/stones"][lo - lead : hi]
        cols = {}
        for name in columns:
            if name == "soft_policy":
                continue
            cols[name] = self.file[f"positions/{name}"][lo:hi]
        return Slice(lo, hi, lead, stones, cols)

    def soft_policy(self, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """CSR soft targets of rows ``[lo, hi)``: offsets relative to the returned arrays."""
        if "soft_policy" not in self.file:
            return None
        group = self.file["soft_policy"]
        offsets = group[SOFT_OFFSETS][lo : hi + 1]
        a, b = int(offsets[0]), int(offsets[-1])
        return offsets - a, group[SOFT_INDEX][a:b], group[SOFT_PROB][a:b]

    def positions(self, rows: np.ndarray, history: int = 1) -> dict[str, np.ndarray]:
        """Random access to rows (any order): stones history (N, T, P) and the scalar columns.

        Sorted rows are read in contiguous runs (a run ends where the gap to
        the next wanted row exceeds a few chunks).
        """
        rows = np.asarray(rows, np.int64)
        if len(rows) and (rows.min() < 0 or rows.max() >= self.n_positions):
            raise IndexError(f"rows outside 0..{self.n_positions - 1}")
        order = np.argsort(rows, kind="stable")
        out = {
            "stones": np.zeros((len(rows), history, self.points), np.int8),
            **{
                name: np.zeros(len(rows), self.file[f"positions/{name}"].dtype)
                for name in SCALAR_COLUMNS
            },
        }
        sorted_rows = rows[order]
        breaks = np.flatnonzero(np.diff(sorted_rows) > 4096) + 1
        perms = identity_perms(self.points)
        for run in np.split(np.arange(len(rows)), breaks):
            if not len(run):
                continue
            lo, hi = int(sorted_rows[run[0]]), int(sorted_rows[run[-1]]) + 1
            block = self.read_slice(lo, hi, history)
            local = sorted_rows[run] - lo
            dest = order[run]
            mn = block.columns["move_number"][local].astype(np.int64)
            tmp = np.zeros((len(run), history, self.points), np.int8)
            gather_history(
                block.stones, local + block.lead, mn, np.zeros(len(run), np.int64), perms, tmp
            )
            out["stones"][dest] = tmp
            for name in SCALAR_COLUMNS:
                out[name][dest] = block.columns[name][local]
        return out

    def describe(self) -> str:
        games = json.loads(self.attrs.get("split_games", "{}"))
        splits = ", ".join(f"{s} {games.get(s, 0)}" for s in SPLITS)
        return (
            f"{self.path}: {self.size}x{self.size}, {self.n_positions} positions, "
            f"{self.n_games} games ({splits}), encoder {self.encoder}"
        )


def _attr(value):
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, np.generic):
        return value.item()
    return value


def open_dataset(path: str | Path) -> PositionDataset:
    """Open a complete positions file; a bad file raises a one-line :class:`DatasetError`."""
    return PositionDataset(path)
