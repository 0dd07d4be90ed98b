"""Training input pipeline: shuffled, augmented, encoded batches for Keras.

Reading single random rows from a compressed file would decompress a whole
chunk per row, so the stream reads *blocks* of consecutive rows (about one
chunk each), gathers many random blocks into a shuffle buffer (a *window*)
and shuffles positions inside it: a batch then mixes positions from dozens of
games from all over the file. A random symmetry per sample is applied to the
stored stones (and the move, ownership and soft policy) *before* encoding:
the input is then exactly the encoder's planes of the transformed position,
the same thing a player computes at that orientation, even for an encoder
whose planes are not perfectly equivariant; and permuting a few int8 rows is
far cheaper than permuting float planes.

Work is split between one reader thread (HDF5 decompression holds h5py's
lock anyway) and a pool of decode threads (history gather, encoder, targets:
compiled kernels). The order of batches and every random choice come from
``(seed, epoch)`` alone, so a stream is reproducible and the number of
threads never changes what it yields.

Decode threads run in parallel only inside kernels compiled with
``nogil=True`` (the history gather and targets here; encoders when their
kernels are).

``BatchStream`` is a plain iterator of ``(x, y, sample_weight)`` tuples;
``as_tf_dataset()`` wraps it as a ``tf.data.Dataset`` (the faster of the two
adapters in ``model.fit`` on CPU, measured) and ``as_keras()`` as a
``keras.utils.PyDataset``.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
from numba import njit

from harness.data.dataset import SCALAR_COLUMNS, PositionDataset, gather_history
from harness.data.layout import DatasetError

Batch = tuple[np.ndarray, dict[str, np.ndarray], dict[str, np.ndarray]]


@dataclass(frozen=True)
class PipelineConfig:
    """How a split is streamed. ``validation()`` gives the deterministic variant."""

    batch_size: int = 256
    encoder: str | None = None  # None: the encoder recorded in the file
    shuffle: bool = True
    augment: bool = True  # one random symmetry (of 8) per sample
    seed: int = 0
    # Positions per window. A batch draws from one window, so the window
    # sets how many games a batch mixes: on TYGEM (210 positions a game) a
    # batch of 128 held 88.7 distinct games with 32,768 positions, 121.7 with
    # 262,144, and 127.8 drawn uniformly from the whole split
    # (``batch_mixing``; ``harness bench pipeline``). A window costs about
    # 400 bytes a position (two are held: one read ahead).
    shuffle_buffer: int = 262_144
    # Parts each window is delivered in, at evenly spaced times of the epoch.
    # A window holds every position of ~1,250 TYGEM games; delivered whole,
    # the network sees all ~210 positions of each of those games (one label
    # for the value head) within a few minutes of CPU training, and nothing
    # of the other games. In k parts it sees ~210/k of each, k times an
    # epoch, 16 x 1,250 games in the time one window took. Each part reads
    # its whole window again: k rows read per sample delivered.
    window_parts: int = 1
    block_rows: int = 1024  # consecutive rows read at once
    threads: int = 0  # decode threads; 0: one per core
    prefetch: int = 6  # batches decoded ahead
    drop_remainder: bool = True
    cazenave: bool | None = None  # val split: one position per game (default: as ingested)
    targets: tuple[str, ...] | None = None  # None: policy, value + ownership/score if stored
    soft_policy: bool = True  # use stored visit distributions where a row has them

    def validation(self) -> PipelineConfig:
        """Fixed order, no augmentation, every position delivered."""
        return replace(self, shuffle=False, augment=False, drop_remainder=False)


@dataclass
class _Window:
    """Raw rows of a few blocks, and the samples (with symmetries) drawn from them."""

    stones: np.ndarray  # (rows, P): the blocks' rows with their history lead rows
    at: np.ndarray  # per sample: its row in ``stones``
    columns: dict[str, np.ndarray]  # per sample
    ownership: np.ndarray | None = None  # (rows, P), indexed by ``own_at``
    own_at: np.ndarray | None = None
    soft: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None  # per-sample CSR
    symmetry: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))


@njit(cache=True, nogil=True)
def _policy_targets(move, symmetry, perms, points, offsets, index, prob, out):
    """Dense policy targets: soft visits where a row has them, else the move played."""
    for i in range(move.shape[0]):
        k = symmetry[i]
        out[i, :] = 0.0
        a, b = offsets[i], offsets[i + 1]
        if b > a:
            for e in range(a, b):
                q = index[e]
                out[i, perms[k, q] if q < points else points] += prob[e]
        else:
            m = move[i]
            out[i, perms[k, m] if m < points else points] = 1.0
    return out


def _parted(windows: list[np.ndarray], parts: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Each window's rows split at random into ``parts`` (file order kept
    within a part), delivered pass by pass: part 0 of every window, then part
    1, ..., with the windows in a fresh order each pass."""
    shares = []
    for rows in windows:
        owner = rng.permutation(len(rows)) % parts
        shares.append([rows[owner == p] for p in range(parts)])
    out = []
    for p in range(parts):
        out.extend(shares[w][p] for w in rng.permutation(len(windows)) if len(shares[w][p]))
    return out


def symmetry_tables(size: int) -> np.ndarray:
    """``perms[k, p]``: where point ``p`` goes under symmetry ``k`` (from features.symmetry)."""
    from harness.features.symmetry import SYMMETRIES, transform_points

    points = np.arange(size * size)
    return np.stack([transform_points(points, k, size) for k in range(SYMMETRIES)]).astype(np.int32)


class BatchStream:
    """Batches of one split of a positions file, epoch after epoch."""

    def __init__(
        self,
        dataset: str | Path | PositionDataset,
        split: str = "train",
        config: PipelineConfig | None = None,
        spread: int | None = None,
    ):
        """``spread``: keep that many rows of the split, evenly spaced over it
        (a fixed sample across all its games rather than the first few games)."""
        from harness.features import get_encoder

        self.config = config or PipelineConfig()
        self.dataset = dataset if isinstance(dataset, PositionDataset) else PositionDataset(dataset)
        self._owns_dataset = not isinstance(dataset, PositionDataset)
        self.split = split
        self.encoder = get_encoder(self.config.encoder or self.dataset.encoder)
        self.size = self.dataset.size
        self.points = self.dataset.points
        self.history = self.encoder.history
        self.rows = self.dataset.split_rows(split, self.config.cazenave)
        if spread is not None and spread < len(self.rows):
            picks = np.linspace(0, len(self.rows) - 1, num=max(0, spread)).round().astype(np.int64)
            self.rows = self.rows[np.unique(picks)]
        stored = [t for t in ("ownership", "score") if self.dataset.has(t)]
        wanted = self.config.targets or ("policy", "value", *stored)
        missing = [t for t in wanted if t not in ("policy", "value", *stored)]
        if missing:
            raise DatasetError(f"{self.dataset.path}: no {', '.join(missing)} targets stored")
        self.targets = tuple(dict.fromkeys(("policy", "value", *wanted)))
        self.use_soft = self.config.soft_policy and self.dataset.has("soft_policy")
        self.perms = symmetry_tables(self.size)
        threads = self.config.threads or os.cpu_count() or 1
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="decode")
        self._reader = ThreadPoolExecutor(1, thread_name_prefix="read")
        self.epoch_number = 0

    # --- sizes ---------------------------------------------------------------
    def __len__(self) -> int:
        n, b = len(self.rows), self.config.batch_size
        return n // b if self.config.drop_remainder else -(-n // b)

    @property
    def positions_per_epoch(self) -> int:
        return len(self) * self.config.batch_size if self.config.drop_remainder else len(self.rows)

    # --- plan ----------------------------------------------------------------
    def _plan(self, epoch: int) -> list[np.ndarray]:
        """Windows of row indices (into ``self.rows``) in delivery order."""
        cfg = self.config
        n = len(self.rows)
        starts = np.arange(0, n, cfg.block_rows)
        blocks = [np.arange(s, min(s + cfg.block_rows, n)) for s in starts]
        rng = np.random.default_rng([cfg.seed, epoch, 0x5EED])
        if cfg.shuffle:
            blocks = [blocks[i] for i in rng.permutation(len(blocks))]
        per_window = max(1, cfg.shuffle_buffer // cfg.block_rows)
        windows = []
        for w in range(0, len(blocks), per_window):
            picked = blocks[w : w + per_window]
            if cfg.shuffle:
                picked = sorted(picked, key=lambda b: b[0])  # read in file order
            windows.append(np.concatenate(picked) if picked else np.zeros(0, np.int64))
        if not cfg.shuffle or cfg.window_parts <= 1:
            return windows
        return _parted(windows, cfg.window_parts, rng)

    def _read_window(self, indices: np.ndarray, epoch: int, number: int) -> _Window:
        """Read the blocks of a window and draw its samples' order and symmetries."""
        cfg = self.config
        rows = self.rows[indices]
        # Consecutive wanted rows that are close in the file are read as one slice.
        breaks = np.flatnonzero(np.diff(rows) > cfg.block_rows) + 1
        stones_parts, own_parts, at, own_at, columns = (
            [],
            [],
            [],
            [],
            {c: [] for c in SCALAR_COLUMNS},
        )
        extra = [c for c in ("score",) if c in self.targets]
        for c in extra:
            columns[c] = []
        soft_parts = []
        base = own_base = 0
        for run in np.split(rows, breaks):
            if not len(run):
                continue
            lo, hi = int(run[0]), int(run[-1]) + 1
            piece = self.dataset.read_slice(lo, hi, self.history, (*SCALAR_COLUMNS, *extra))
            local = run - lo
            stones_parts.append(piece.stones)
            at.append(base + piece.lead + local)
            base += len(piece.stones)
            for name in columns:
                columns[name].append(piece.columns[name][local])
            if "ownership" in self.targets:
                own_parts.append(self.dataset.file["positions/ownership"][lo:hi])
                own_at.append(own_base + local)
                own_base += hi - lo
            if self.use_soft:
                offsets, index, prob = self.dataset.soft_policy(lo, hi)
                soft_parts.append(_select_csr(offsets, index, prob, local))
        window = _Window(
            stones=np.concatenate(stones_parts),
            at=np.concatenate(at),
            columns={k: np.concatenate(v) for k, v in columns.items()},
        )
        if own_parts:
            window.ownership = np.concatenate(own_parts)
            window.own_at = np.concatenate(own_at)
        if soft_parts:
            window.soft = _concat_csr(soft_parts)
        order, window.symmetry = self._window_draws(len(window.at), epoch, number)
        window.at = window.at[order]
        window.columns = {k: v[order] for k, v in window.columns.items()}
        if window.own_at is not None:
            window.own_at = window.own_at[order]
        if window.soft is not None:
            window.soft = _select_csr(*window.soft, order)
        return window

    def _window_draws(self, n: int, epoch: int, number: int) -> tuple[np.ndarray, np.ndarray]:
        """The sample order and the symmetries of window ``number``: the only randomness."""
        rng = np.random.default_rng([self.config.seed, epoch, number, 0xA11])
        order = rng.permutation(n) if self.config.shuffle else np.arange(n)
        symmetry = rng.integers(0, 8, n) if self.config.augment else np.zeros(n, np.int64)
        return order, symmetry

    def delivery(self, epoch: int) -> tuple[np.ndarray, np.ndarray]:
        """File rows and symmetries in the order an epoch delivers them (nothing is read)."""
        rows, symmetries = [], []
        for number, indices in enumerate(self._plan(epoch)):
            order, symmetry = self._window_draws(len(indices), epoch, number)
            rows.append(self.rows[indices][order])
            symmetries.append(symmetry)
        if not rows:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        n = self.positions_per_epoch
        return np.concatenate(rows)[:n], np.concatenate(symmetries)[:n]

    # --- batches --------------------------------------------------------------
    def epoch(self, number: int | None = None, start: int = 0) -> Iterator[Batch]:
        """The batches of one epoch (from batch ``start``), decoded ahead by the pool."""
        number = self.epoch_number if number is None else number
        pending: deque[Future] = deque()
        for parts in self._compositions(number, start):
            pending.append(self._pool.submit(self._decode, parts))
            while len(pending) > self.config.prefetch:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()

    def _compositions(self, number: int, start: int) -> Iterator[list[tuple[_Window, np.ndarray]]]:
        """Which samples of which windows make each batch; windows are read one ahead.

        The samples of an epoch are the windows' samples end to end; batch
        ``i`` is samples ``[i*b, (i+1)*b)`` of that sequence, so a batch may
        straddle two windows and any batch can be produced without the ones
        before it.
        """
        windows = self._plan(number)
        bounds = np.concatenate(([0], np.cumsum([len(w) for w in windows]))).astype(np.int64)
        b = self.config.batch_size
        end = min(int(bounds[-1]), len(self) * b)
        reads: dict[int, Future] = {}

        def window(w: int) -> _Window:
            for ahead in (w, w + 1):
                if ahead < len(windows) and ahead not in reads:
                    reads[ahead] = self._reader.submit(
                        self._read_window, windows[ahead], number, ahead
                    )
            return reads[w].result()

        try:
            for i in range(start, len(self)):
                lo, hi = i * b, min((i + 1) * b, end)
                w = int(np.searchsorted(bounds, lo, side="right")) - 1
                for old in [k for k in reads if k < w]:
                    del reads[old]  # decode jobs still hold what they need
                parts = []
                while w < len(windows) and bounds[w] < hi:
                    a, c = max(lo, bounds[w]) - bounds[w], min(hi, bounds[w + 1]) - bounds[w]
                    parts.append((window(w), np.arange(a, c)))
                    w += 1
                yield parts
        finally:
            for future in reads.values():
                future.cancel()

    def __iter__(self) -> Iterator[Batch]:
        while True:
            yield from self.epoch(self.epoch_number)
            self.epoch_number += 1

    def _decode(self, parts: list[tuple[_Window, np.ndarray]]) -> Batch:
        n = sum(len(idx) for _, idx in parts)
        size, points = self.size, self.points
        hist = np.empty((n, self.history, points), np.int8)
        cols = {
            name: np.empty(n, np.int64)
            for name in ("to_play", "move", "value", "value_known", "move_number")
        }
        sym = np.empty(n, np.int64)
        score = np.empty(n, np.float32) if "score" in self.targets else None
        own = np.empty((n, 1, points), np.int8) if "ownership" in self.targets else None
        soft_parts = []
        o = 0
        for window, idx in parts:
            m = len(idx)
            s = window.symmetry[idx]
            sym[o : o + m] = s
            mn = window.columns["move_number"][idx].astype(np.int64)
            gather_history(window.stones, window.at[idx], mn, s, self.perms, hist[o : o + m])
            for name in cols:
                cols[name][o : o + m] = window.columns[name][idx]
            if score is not None:
                score[o : o + m] = window.columns["score"][idx]
            if own is not None:
                gather_history(
                    window.ownership,
                    window.own_at[idx],
                    np.zeros(m, np.int64),
                    s,
                    self.perms,
                    own[o : o + m],
                )
            if self.use_soft:
                soft_parts.append(_select_csr(*window.soft, idx))
            o += m
        x = self.encoder.encode(hist, cols["to_play"].astype(np.int8), size)
        if soft_parts:
            offsets, index, prob = _concat_csr(soft_parts)
        else:
            offsets, index, prob = (
                np.zeros(n + 1, np.int64),
                np.zeros(0, np.int16),
                np.zeros(0, np.float16),
            )
        policy = _policy_targets(
            cols["move"],
            sym,
            self.perms,
            points,
            offsets,
            index,
            prob.astype(np.float32),
            np.empty((n, points + 1), np.float32),
        )
        y = {"policy": policy, "value": cols["value"].astype(np.float32)[:, None]}
        weights = {
            "policy": np.ones(n, np.float32),
            "value": cols["value_known"].astype(np.float32),
        }
        if own is not None:
            y["ownership"] = own[:, 0].astype(np.float32)
            weights["ownership"] = np.ones(n, np.float32)
        if score is not None:
            y["score"] = score[:, None]
            weights["score"] = np.ones(n, np.float32)
        return x, y, weights

    # --- framework adapters ----------------------------------------------------
    def as_keras(self):
        """A ``keras.utils.PyDataset`` over this stream (one epoch per Keras epoch)."""
        return _keras_adapter(self)

    def as_tf_dataset(self):
        """An endless ``tf.data.Dataset`` (use ``steps_per_epoch=len(stream)``)."""
        import tensorflow as tf

        x, y, w = self._decode_probe()

        def spec(a):
            return tf.TensorSpec((None, *a.shape[1:]), tf.as_dtype(a.dtype))

        signature = (
            spec(x),
            {k: spec(v) for k, v in y.items()},
            {k: spec(v) for k, v in w.items()},
        )
        return tf.data.Dataset.from_generator(
            lambda: iter(self), output_signature=signature
        ).prefetch(2)

    def _decode_probe(self) -> Batch:
        return next(self.epoch(self.epoch_number))

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._reader.shutdown(wait=True, cancel_futures=True)
        if self._owns_dataset:
            self.dataset.close()

    def __enter__(self) -> BatchStream:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@dataclass(frozen=True)
class BatchMixing:
    """How many games a batch mixes, against drawing positions uniformly at random.

    Positions of one game are strongly correlated (same players, same
    opening, same result); a batch with many of them is in effect a smaller
    batch. ``distinct_games``: mean distinct games per batch; ``most_of_one_game``:
    mean, over batches, of the most positions any one game has in the batch.
    Over longer stretches the same holds for the value head, which fits the
    result of every game it meets: ``span_games`` is the number of distinct
    games in the first ``span_batches`` batches (a few minutes of CPU training).
    """

    batch_size: int
    batches: int
    distinct_games: float
    most_of_one_game: float
    uniform_distinct_games: float  # the expectation with positions drawn from the whole split
    span_batches: int = 0
    span_games: int = 0

    @property
    def positions_per_game_in_span(self) -> float:
        return self.span_batches * self.batch_size / self.span_games if self.span_games else 0.0


def batch_mixing(stream: BatchStream, epoch: int = 0, batches: int = 2000,
                 span: int = 1000) -> BatchMixing:
    """Measure ``stream``'s first ``batches`` batches of ``epoch`` (nothing is decoded)."""
    rows, _ = stream.delivery(epoch)
    b = stream.config.batch_size
    n = min(batches, len(rows) // b)
    game = stream.dataset.file["positions/game_id"]
    lo, hi = int(rows[: n * b].min()), int(rows[: n * b].max()) + 1
    ids = game[lo:hi][rows[: n * b] - lo].reshape(n, b)
    counts = [np.unique(batch, return_counts=True)[1] for batch in ids]
    _, sizes = np.unique(game[:][stream.rows], return_counts=True)
    p = sizes / sizes.sum()
    span = min(span, n)
    return BatchMixing(
        batch_size=b,
        batches=n,
        distinct_games=float(np.mean([len(c) for c in counts])) if n else 0.0,
        most_of_one_game=float(np.mean([c.max() for c in counts])) if n else 0.0,
        uniform_distinct_games=float(np.sum(1 - (1 - p) ** b)),
        span_batches=span,
        span_games=len(np.unique(ids[:span])),
    )


def _select_csr(offsets, index, prob, rows) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The CSR entries of ``rows`` (in that order), with fresh offsets."""
    starts, ends = offsets[rows], offsets[np.asarray(rows) + 1]
    lengths = ends - starts
    new_offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    take = np.repeat(starts - new_offsets[:-1], lengths) + np.arange(new_offsets[-1])
    return new_offsets, index[take], prob[take]


def _concat_csr(parts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    offsets, index, prob, base = [np.zeros(1, np.int64)], [], [], 0
    for off, idx, pr in parts:
        offsets.append(base + off[1:])
        index.append(idx)
        prob.append(pr)
        base += len(idx)
    return np.concatenate(offsets), np.concatenate(index), np.concatenate(prob)


def _keras_adapter(stream: BatchStream):
    import keras

    class StreamDataset(keras.utils.PyDataset):
        """Batch ``i`` of the stream's current epoch; serving the last batch ends the epoch.

        In-order requests come from the prefetching stream. Out-of-order ones
        (Keras peeking at batches for their shapes, or ``fit(shuffle=True)``)
        are recomputed, which is slower: pass ``shuffle=False`` to ``fit``,
        the stream shuffles already.
        """

        def __init__(self):
            super().__init__(workers=1, use_multiprocessing=False)
            self.stream = stream
            self._iterator: Iterator[Batch] | None = None
            self._next = 0

        @property
        def num_batches(self) -> int:
            return len(stream)

        def __len__(self) -> int:
            return len(stream)

        def __getitem__(self, index: int) -> Batch:
            if not 0 <= index < len(stream):
                raise IndexError(index)
            if self._iterator is None or index != self._next:
                self._iterator = stream.epoch(stream.epoch_number, start=index)
                self._next = index
            batch = next(self._iterator)
            self._next += 1
            if self._next == len(stream):  # the epoch is over: the next one is new
                stream.epoch_number += 1
                self._iterator, self._next = None, 0
            return batch

    return StreamDataset()


def open_stream(
    path: str | Path, split: str = "train", config: PipelineConfig | None = None, *,
    spread: int | None = None, **overrides
) -> BatchStream:
    """A stream over ``split`` of the file at ``path`` (``overrides`` patch the
    config; ``spread`` as :class:`BatchStream`'s)."""
    config = replace(config or PipelineConfig(), **overrides)
    return BatchStream(path, split, config, spread)
