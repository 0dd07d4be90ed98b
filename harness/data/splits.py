"""Train/validation/test splits by game, reproducible from a seed.

Each game gets a pseudo-random key from (seed, game digest); games are ranked
by key and the first ``n_val`` go to validation, the next ``n_test`` to test.
The split therefore depends only on the seed and on *which* games are kept,
not on their order, the number of workers, or where an ingest was resumed.
A whole game goes to one split, so no position of a validation game is ever
trained on (the condition of the Cazenave protocol).

Splits by source as well: games whose source matches a ``--test-source``
pattern (a month of kifu, an archive, a folder) are all test games, so a
test set can come from another month, server or period than the training
games; the validation and test counts are then drawn from the other games.
"""

from __future__ import annotations

import hashlib
from fnmatch import fnmatchcase

import numpy as np

from harness.data.layout import TEST, TRAIN, VAL


def parse_split_size(text: str | float | int) -> float | int:
    """``"500"`` is a count of games, ``"0.05"`` a fraction of the kept games."""
    value = float(text)
    if value < 0:
        raise ValueError(f"split size must not be negative: {text!r}")
    if (isinstance(text, str) and ("." in text or "e" in text.lower())) or 0 < value < 1:
        if value >= 1:
            raise ValueError(f"split fraction must be below 1: {text!r}")
        return value
    if value != int(value):
        raise ValueError(f"split size must be a count or a fraction: {text!r}")
    return int(value)


def split_count(size: float | int, games: int) -> int:
    if isinstance(size, float):
        return min(games, round(size * games))
    return min(games, size)


def _keys(seed: int, digests: np.ndarray, salt: bytes) -> np.ndarray:
    prefix = salt + int(seed).to_bytes(8, "little", signed=True)
    keys = np.empty(len(digests), np.uint64)
    for i, digest in enumerate(digests):
        h = hashlib.blake2b(prefix + str(digest).encode("ascii"), digest_size=8)
        keys[i] = int.from_bytes(h.digest(), "little")
    return keys


def source_mask(sources: np.ndarray, patterns: tuple[str, ...]) -> np.ndarray:
    """Games whose source matches any pattern (a shell glob found anywhere in the source).

    ``2011-06`` matches ``.../Kifu/2011-06.zip!2011-06``; ``Kifu/2011-0[56]``
    two months. Each distinct source is matched once (a dataset has few).
    """
    if not patterns or len(sources) == 0:
        return np.zeros(len(sources), bool)
    names, inverse = np.unique(np.asarray(sources, dtype=object).astype(str), return_inverse=True)
    hit = np.array([any(fnmatchcase(n, f"*{p}*") for p in patterns) for n in names], bool)
    return hit[inverse.reshape(-1)]


def assign_splits(
    digests: np.ndarray, seed: int, n_val: int, n_test: int, held_out: np.ndarray | None = None
) -> np.ndarray:
    """int8 split code per game (TRAIN, VAL, TEST).

    ``held_out`` games (see :func:`source_mask`) are TEST whatever their key;
    ``n_val`` and ``n_test`` are drawn from the others, by key as always.
    """
    free = np.ones(len(digests), bool) if held_out is None else ~np.asarray(held_out, bool)
    if n_val + n_test > int(free.sum()):
        raise ValueError(f"{n_val} validation + {n_test} test games > {int(free.sum())} games")
    order = np.lexsort((np.arange(len(digests)), _keys(seed, digests, b"split")))
    order = order[free[order]]
    split = np.full(len(digests), TRAIN, np.int8)
    split[~free] = TEST
    split[order[:n_val]] = VAL
    split[order[n_val : n_val + n_test]] = TEST
    return split


def cazenave_rows(
    digests: np.ndarray, first: np.ndarray, positions: np.ndarray, split: np.ndarray, seed: int
) -> np.ndarray:
    """One random position row per validation game (-1 for the other games)."""
    rows = np.full(len(digests), -1, np.int64)
    val = np.flatnonzero((split == VAL) & (positions > 0))
    if len(val):
        keys = _keys(seed, digests[val], b"cazenave")
        rows[val] = first[val] + (keys % positions[val].astype(np.uint64)).astype(np.int64)
    return rows


__all__ = [
    "TEST",
    "TRAIN",
    "VAL",
    "assign_splits",
    "cazenave_rows",
    "parse_split_size",
    "source_mask",
    "split_count",
]
