"""Train/validation/test splits by game, reproducible from a seed.

Each game gets a pseudo-random key from (seed, game digest); games are ranked
by key and the first ``n_val`` go to validation, the next ``n_test`` to test.
The split therefore depends only on the seed and on *which* games are kept,
not on their order, the number of workers, or where an ingest was resumed.
A whole game goes to one split, so no position of a validation game is ever
trained on (the condition of the Cazenave protocol).
"""

from __future__ import annotations

import hashlib

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


def assign_splits(digests: np.ndarray, seed: int, n_val: int, n_test: int) -> np.ndarray:
    """int8 split code per game (TRAIN, VAL, TEST)."""
    if n_val + n_test > len(digests):
        raise ValueError(f"{n_val} validation + {n_test} test games > {len(digests)} games")
    order = np.lexsort((np.arange(len(digests)), _keys(seed, digests, b"split")))
    split = np.full(len(digests), TRAIN, np.int8)
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
    "split_count",
]
