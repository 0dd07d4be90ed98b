"""The bridge from positions files (:mod:`harness.data`) to the trainer's batch sources."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness.train.config import ConfigError


@dataclass(frozen=True)
class DatasetMeta:
    path: Path
    board_size: int
    encoder: str  # the default recorded at ingest
    splits: dict[str, int]  # split -> positions (Cazenave validation: one per game)
    rules: str = ""


def read_dataset_meta(path: str | Path) -> DatasetMeta:
    """Board size, default encoder and split sizes; one line naming the file if unusable."""
    from harness.data.dataset import open_dataset
    from harness.data.layout import SPLITS, DatasetError

    path = Path(path)
    if not path.exists():
        raise ConfigError(f"{path}: dataset not found")
    try:
        with open_dataset(path) as ds:
            splits = {s: len(ds.split_rows(s)) for s in SPLITS}
            return DatasetMeta(path, ds.size, ds.encoder, splits,
                               str(ds.attrs.get("rules", "")))
    except DatasetError as e:
        raise ConfigError(str(e)) from None


class StreamSource:
    """One split of a positions file through :class:`harness.data.pipeline.BatchStream`.

    The stream's own epoch number is its shuffle/symmetry seed, so a pass of
    this source with seed ``s`` is the stream's epoch ``s``: reproducible, and
    independent of how many decode threads run.
    """

    def __init__(self, path: str | Path, split: str, encoder: str, seed: int = 0,
                 window_parts: int = 1):
        self.path, self.split, self.encoder, self.seed = Path(path), split, encoder, seed
        self.window_parts = window_parts
        self._streams: dict[tuple[int, bool], object] = {}
        self._positions: int | None = None

    def _stream(self, batch_size: int, augment: bool):
        from harness.data.pipeline import BatchStream, PipelineConfig

        key = (batch_size, augment)
        if key not in self._streams:
            config = PipelineConfig(batch_size=batch_size, encoder=self.encoder, seed=self.seed,
                                    window_parts=self.window_parts)
            if not augment:
                config = config.validation()
            self._streams[key] = BatchStream(self.path, self.split, config)
        return self._streams[key]

    def __len__(self) -> int:
        if self._positions is None:
            stream = next(iter(self._streams.values()), None) or self._stream(256, False)
            self._positions = len(stream.rows)
        return self._positions

    def batches(self, batch_size: int, *, seed: int, augment: bool):
        yield from self._stream(batch_size, augment).epoch(seed)

    def rows(self, batch_size: int) -> np.ndarray:
        """The file rows of an unaugmented pass, in delivery order."""
        return self._stream(batch_size, False).delivery(0)[0]

    def groups(self, batch_size: int) -> np.ndarray:
        """The game of every position of an unaugmented pass, in delivery order.

        Intervals resample games, not positions (:mod:`harness.stats`).
        """
        rows = self.rows(batch_size)
        if not len(rows):
            return np.zeros(0, np.int64)
        column = self._stream(batch_size, False).dataset.file["positions/game_id"]
        lo, hi = int(rows.min()), int(rows.max()) + 1
        return np.asarray(column[lo:hi])[rows - lo]

    def close(self) -> None:
        for stream in self._streams.values():
            stream.close()
        self._streams.clear()


def open_split(path: str | Path, split: str, encoder: str, seed: int = 0,
               window_parts: int = 1) -> StreamSource:
    """A :class:`harness.train.sources.BatchSource` over one split of a positions file
    (``window_parts``: :class:`harness.data.pipeline.PipelineConfig`)."""
    return StreamSource(path, split, encoder, seed, window_parts)
