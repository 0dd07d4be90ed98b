"""Self-play games that start from positions of a dataset (KataGo's
``startPosesFromSgfDir``).

A network continued from human games would otherwise see only the openings
its own search prefers, and its games drift away from the positions the
network knew; a share of games starting from the first moves of real games
keeps the middle game of those games in the window. The moves before the
start are kept as history rows without a training target.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from harness.config_io import ConfigError


class DatasetOpenings:
    """With probability ``probability``, the first ``k`` moves of a random game
    of the dataset's train split, ``k`` uniform in ``[min_moves, max_moves]``
    (cut at the game's end and before its first pass); otherwise no moves.

    Games with a handicap or setup stones are left out: a game is replayed
    from the empty board."""

    def __init__(self, path: str | Path, probability: float, min_moves: int, max_moves: int,
                 board_size: int):
        from harness.data.dataset import check_file, open_dataset
        from harness.data.layout import DatasetError

        try:
            check_file(path)
        except DatasetError as exc:
            raise ConfigError(f"[selfplay] start_dataset: {exc}") from None
        self.probability = probability
        self.min_moves, self.max_moves = min_moves, max_moves
        with open_dataset(path) as data:
            if data.size != board_size:
                raise ConfigError(f"[selfplay] start_dataset {path}: {data.size}x{data.size} "
                                  f"positions, the run plays {board_size}x{board_size}")
            first, length = replayable_games(data, "train", min_moves)
            self.moves = data.file["positions/move"][...].astype(np.int64)
        if not len(first):
            raise ConfigError(f"[selfplay] start_dataset {path}: no train game of at least "
                              f"{min_moves} moves from an empty board")
        self.first, self.length = first, length
        self.passing = board_size * board_size

    def __call__(self, rng: np.random.Generator) -> list[int]:
        if self.probability <= 0 or rng.random() >= self.probability:
            return []
        g = int(rng.integers(len(self.first)))
        k = int(rng.integers(self.min_moves, min(self.max_moves, int(self.length[g])) + 1))
        moves = self.moves[self.first[g]:self.first[g] + k]
        passes = np.flatnonzero(moves == self.passing)
        return moves[: passes[0] if len(passes) else k].tolist()


def replayable_games(data, split: str, min_moves: int) -> tuple[np.ndarray, np.ndarray]:
    """The first position and length of ``split``'s games that can be replayed
    move by move from the empty board: no handicap, no setup stones, at least
    ``min_moves`` (and one) moves."""
    games = data.split_games(split)
    info = data.games
    first = info["first"][games].astype(np.int64)
    length = info["length"][games].astype(np.int64)
    keep = (info["handicap"][games] == 0) & (length >= max(1, min_moves))
    first, length = first[keep], length[keep]
    if len(first):
        empty = ~data.positions(first)["stones"][:, 0].any(axis=1)
        first, length = first[empty], length[empty]
    return first, length


@functools.lru_cache(maxsize=4)
def dataset_openings(path: str, probability: float, min_moves: int, max_moves: int,
                     board_size: int) -> DatasetOpenings:
    """One reader per dataset and setting in a process (a generation plays many units)."""
    return DatasetOpenings(path, probability, min_moves, max_moves, board_size)
