"""What the trainer reads: anything that yields ``(x, targets, weights)`` batches.

The trainer never sees files. A source only has to produce batches for a
given seed, so that the stream of an epoch is a pure function of (run seed,
epoch number): a run resumed after a kill replays exactly the batches an
uninterrupted run would have seen.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from typing import Any, Protocol

import numpy as np

from harness.train.value_targets import to_head

Batch = tuple[np.ndarray, dict[str, np.ndarray], Any]


class BatchSource(Protocol):
    """A split of a dataset. Value targets are signed, from the side to move."""

    def __len__(self) -> int:
        """Number of samples in one pass."""

    def batches(self, batch_size: int, *, seed: int, augment: bool) -> Iterator[Batch]:
        """One pass. ``augment``: shuffled with random symmetries; else fixed order."""


def derive_seed(*parts: int) -> int:
    """A well-mixed 31-bit seed from a tuple of integers (run seed, epoch, pass)."""
    return int(np.random.SeedSequence([int(p) & 0xFFFFFFFF for p in parts]).generate_state(1)[0]
               & 0x7FFFFFFF)


def epoch_batches(source: BatchSource, batch_size: int, steps: int, *, seed: int, epoch: int,
                  start: int = 0) -> Iterator[Batch]:
    """The ``steps`` training batches of ``epoch``, from batch ``start`` on.

    An epoch is a number of samples, not a pass over the data: passes are
    chained, each shuffled with its own derived seed.
    """
    def passes():
        for n in itertools.count():
            yield from source.batches(batch_size, seed=derive_seed(seed, epoch, n), augment=True)
    return itertools.islice(passes(), start, steps)


def to_head_targets(batch: Batch, value_loss: str) -> Batch:
    """Convert the value target to the convention of the model's value head."""
    x, targets, weights = batch
    targets = dict(targets)
    if "value" in targets:
        targets["value"] = to_head(np.asarray(targets["value"]).reshape(-1, 1), value_loss)
    return x, targets, weights


class ArraySource:
    """An in-memory split (tests, small generated datasets)."""

    def __init__(self, x: np.ndarray, targets: Mapping[str, np.ndarray], weights=None):
        self.x = np.asarray(x)
        self.targets = {k: np.asarray(v) for k, v in targets.items()}
        self.weights = None if weights is None else np.asarray(weights)

    def __len__(self) -> int:
        return len(self.x)

    def batches(self, batch_size: int, *, seed: int, augment: bool) -> Iterator[Batch]:
        order = np.arange(len(self.x))
        if augment:
            np.random.default_rng(seed).shuffle(order)
        for i in range(0, len(order), batch_size):
            idx = order[i:i + batch_size]
            w = None if self.weights is None else self.weights[idx]
            yield self.x[idx], {k: v[idx] for k, v in self.targets.items()}, w
