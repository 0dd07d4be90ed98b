"""A bounded evaluation cache keyed by the whole network input.

Transpositions and re-searched positions (tree reuse misses, the same opening
in many self-play games) need no second forward pass. The table is a fixed
array with open addressing over a short probe window; when the window is full
the home slot is overwritten, so memory never grows and lookups stay O(1).
Entries hold the network's raw outputs (policy logits, value) in the board's
own orientation, so legality masks and symmetries never leak into the cache.
"""

from __future__ import annotations

import numpy as np
from numba import njit

PROBES = 4
_MIX = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True, nogil=True)
def position_keys(rows, to_play, zob, out):
    """64-bit key of each network input: every history row's Zobrist hash and
    the side to move, mixed so that the order of the rows matters."""
    n, history, points = rows.shape
    for i in range(n):
        key = np.uint64(to_play[i]) * np.uint64(0xD6E8FEB86659FD93)
        for t in range(history):
            h = np.uint64(0)
            for p in range(points):
                c = rows[i, t, p]
                if c != 0:
                    h ^= zob[p, c]
            key = (key ^ h) * _MIX + np.uint64(t + 1)
        out[i] = key | np.uint64(1)  # 0 marks an empty slot
    return out


@njit(cache=True, nogil=True)
def _lookup(keys, table_keys, table_logits, table_values, logits, values, hit):
    mask = table_keys.shape[0] - 1
    found = 0
    for i in range(keys.shape[0]):
        k = keys[i]
        home = np.int64(k & np.uint64(mask))
        hit[i] = False
        for j in range(PROBES):
            s = (home + j) & mask
            if table_keys[s] == k:
                logits[i, :] = table_logits[s, :]
                values[i] = table_values[s]
                hit[i] = True
                found += 1
                break
            if table_keys[s] == 0:
                break
    return found


@njit(cache=True, nogil=True)
def _insert(keys, logits, values, table_keys, table_logits, table_values):
    mask = table_keys.shape[0] - 1
    for i in range(keys.shape[0]):
        k = keys[i]
        home = np.int64(k & np.uint64(mask))
        slot = home
        for j in range(PROBES):
            s = (home + j) & mask
            if table_keys[s] == k or table_keys[s] == 0:
                slot = s
                break
        table_keys[slot] = k
        table_logits[slot, :] = logits[i, :]
        table_values[slot] = values[i]


class EvalCache:
    """Raw network outputs for up to ``capacity`` positions (rounded up to a
    power of two)."""

    def __init__(self, capacity: int, moves: int):
        size = 1
        while size < capacity:
            size *= 2
        self.keys = np.zeros(size, np.uint64)
        self.logits = np.zeros((size, moves), np.float32)
        self.values = np.zeros(size, np.float32)
        self.hits = 0
        self.lookups = 0

    @property
    def capacity(self) -> int:
        return self.keys.shape[0]

    def lookup(self, keys: np.ndarray, logits: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Fill ``logits``/``values`` rows for cached keys; returns the hit mask."""
        hit = np.zeros(keys.shape[0], np.bool_)
        self.hits += _lookup(keys, self.keys, self.logits, self.values, logits, values, hit)
        self.lookups += keys.shape[0]
        return hit

    def insert(self, keys: np.ndarray, logits: np.ndarray, values: np.ndarray) -> None:
        _insert(keys, logits, values, self.keys, self.logits, self.values)

    def clear(self) -> None:
        """Forget everything (after the network's weights change)."""
        self.keys[:] = 0
        self.hits = self.lookups = 0
