"""The host's tree work of one search step, spread over threads.

A step's gather (``step.gather``: descend, replay each leaf's path, its
legal moves: most of the search's own work) touches each game's own tree
row and nothing shared, and its kernel releases the GIL. So a slot
group's searching games are cut into contiguous *shares*, one per host
thread, and each thread gathers its share's leaves into that share's own
stretch of the leaf buffer (and of the scratch boards), with its own rules
scratch. Packing the stretches back together in share order gives exactly
the batch one thread gathering every game in slot order builds, so the
evaluator sees the same positions in the same order (same cache hits, same
random symmetries): a search with any number of host threads is the same
search, bit for bit. Expansion and backup (``step.finish``) stay on the
calling thread: a few microseconds a leaf, less than a hand-over costs.

The kernels take index ranges, not array views: numba's dispatch of a call
(typing some forty arrays, under the GIL) already costs tens of
microseconds, and views would add to it on every step.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple, TypeVar

import numpy as np

from harness.game import board as K
from harness.search.step import Leaves

Item = TypeVar("Item")
Out = TypeVar("Out")


class Share(NamedTuple):
    """Contiguous slots whose tree work one thread does."""

    slots: np.ndarray  # bool (G,): the share's slots
    offset: int  # its first leaf in the group's leaf buffer
    capacity: int  # leaves it may gather in a step (slots x leaves per game)
    work: K.Work  # its own rules scratch


def split_group(first: int, stop: int, threads: int, games: int, per_game: int,
                points: int) -> list[Share]:
    """Slots ``first..stop - 1`` (a group whose leaf buffer starts at slot
    ``first``) in at most ``threads`` contiguous shares of near-equal size."""
    shares = []
    for part in np.array_split(np.arange(first, stop), min(threads, stop - first)):
        slots = np.zeros(games, np.bool_)
        slots[part] = True
        shares.append(Share(slots, int(part[0] - first) * per_game,
                            part.size * per_game, K.new_work(points)))
    return shares


def pack(leaves: Leaves, shares: Sequence[Share], counts: Sequence[int]) -> int:
    """Move each share's ``counts`` gathered leaves down behind the previous
    share's, in share order; returns how many leaves there are."""
    stop = 0
    for share, count in zip(shares, counts, strict=True):
        start, stop = stop, stop + count
        if count and share.offset != start:
            source = slice(share.offset, share.offset + count)
            for field in leaves:
                field[start:stop] = field[source]
    return stop


class HostThreads:
    """Runs one job per share: the first on the calling thread, the others on
    a pool, and waits for all (one thread: a plain loop, no pool)."""

    def __init__(self, threads: int):
        self.threads = int(threads)
        self._pool = (ThreadPoolExecutor(self.threads - 1, "search-tree")
                      if self.threads > 1 else None)

    def map(self, job: Callable[[Item], Out], items: Sequence[Item]) -> list[Out]:
        if self._pool is None or len(items) < 2:
            return [job(item) for item in items]
        futures = [self._pool.submit(job, item) for item in items[1:]]
        first = job(items[0])
        return [first, *(future.result() for future in futures)]

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None
