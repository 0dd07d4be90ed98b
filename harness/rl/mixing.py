"""A share of every training batch drawn from a supervised dataset.

Leela Zero's warning about training long on a small window ("it will just
start remembering the outcome of those games") is what happens to a
supervised network continued on a few hundred self-play games: its value head
fits the window's outcomes and its policy forgets the human moves. Rows of
the dataset it was trained on (their moves as one-hot policy targets, their
game outcomes as value targets) in every batch keep both anchored to data
that does not run out.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np

from harness.config_io import ConfigError

Batch = tuple[np.ndarray, dict[str, np.ndarray], dict[str, np.ndarray]]

SHUFFLE_POSITIONS = 32_768  # positions read per window of the stream: seconds, not minutes


def mixed_rows(batch_size: int, share: float) -> int:
    """How many rows of a batch of ``batch_size`` come from the dataset."""
    return round(batch_size * share) if share > 0 else 0


class SupervisedMix:
    """Batches of ``rows`` positions from a dataset's train split, forever.

    ``seed`` fixes the order (a generation's training is replayed exactly on
    resume); the encoder and board size must be the run's.
    """

    def __init__(self, path: str | Path, rows: int, *, encoder: str, board_size: int,
                 seed: int):
        from harness.data.dataset import check_file
        from harness.data.layout import DatasetError
        from harness.data.pipeline import BatchStream, PipelineConfig

        try:
            check_file(path)
        except DatasetError as exc:
            raise ConfigError(f"[train] mix_dataset: {exc}") from None
        config = PipelineConfig(batch_size=rows, encoder=encoder, seed=seed,
                                shuffle_buffer=SHUFFLE_POSITIONS, targets=("policy", "value"),
                                threads=1, prefetch=2)
        self.stream = BatchStream(path, "train", config)
        if self.stream.size != board_size:
            self.stream.close()
            raise ConfigError(f"[train] mix_dataset {path}: {self.stream.size}x"
                              f"{self.stream.size} positions, the run plays {board_size}x"
                              f"{board_size}")
        if len(self.stream) == 0:
            self.stream.close()
            raise ConfigError(f"[train] mix_dataset {path}: fewer train positions than {rows}")
        self._batches = self._forever()

    def _forever(self) -> Iterator[Batch]:
        while True:
            yield from self.stream.epoch()

    def next(self) -> Batch:
        return next(self._batches)

    def close(self) -> None:
        self.stream.close()


def concat_batches(first: Batch, second: Batch) -> Batch:
    """Rows of ``first`` then ``second``; a head one of them lacks gets zero
    targets with zero weight there (the dataset has no ownership, say).
    Values are one number a row (the dataset's come as ``(n, 1)``)."""
    batches = (first, second)
    targets, weights = {}, {}
    for head in dict.fromkeys([*first[1], *second[1]]):
        shape = () if head == "value" else next(
            np.shape(b[1][head])[1:] for b in batches if head in b[1])
        parts_t, parts_w = [], []
        for x, batch_targets, batch_weights in batches:
            n = len(x)
            if head in batch_targets:
                parts_t.append(np.reshape(batch_targets[head], (n, *shape)))
                parts_w.append(np.reshape(batch_weights[head], n))
            else:
                parts_t.append(np.zeros((n, *shape), np.float32))
                parts_w.append(np.zeros(n, np.float32))
        targets[head] = np.concatenate(parts_t).astype(np.float32)
        weights[head] = np.concatenate(parts_w).astype(np.float32)
    return np.concatenate([first[0], second[0]]), targets, weights
