"""``harness bench pipeline``: can the input pipeline keep a model busy?

Measures positions per second delivered by :class:`harness.data.pipeline.BatchStream`
(read, shuffle, symmetry, encode, targets) for each encoder, how many games
a batch mixes against a uniform draw, and, when the
model zoo is present, the training throughput of a model on the same
batches (already decoded, so only the training step is timed). The ratio
says how many times faster than training the pipeline runs.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from harness.bench.ingest import DEV_ARCHIVE
from harness.files import format_table, save_table

HELP = "input pipeline positions/s per encoder vs a model's training positions/s"
HEADER = ("measure", "encoder", "threads", "batch", "value", "unit")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--dataset",
        default=None,
        help="positions file (default: a sample of dev-all.sgf.xz ingested now)",
    )
    parser.add_argument("--encoders", nargs="+", default=["cazenave21"])
    parser.add_argument(
        "--threads",
        type=int,
        nargs="+",
        default=[0],
        help="decode threads to measure (0: one per core)",
    )
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument(
        "--window-parts",
        type=int,
        nargs="+",
        default=[1],
        help="window_parts settings to measure (speed and games seen per 1,000 batches)",
    )
    parser.add_argument("--seconds", type=float, default=5.0, help="time per measurement")
    parser.add_argument(
        "--model",
        default="mobile.small",
        help="model whose training throughput to compare ('' to skip)",
    )
    parser.add_argument(
        "--train-batch-size",
        type=int,
        default=32,
        help="batch for the training measurement (a CPU step at 256 can take a minute)",
    )
    parser.add_argument(
        "--sample-games", type=int, default=400, help="games ingested for the default dataset"
    )
    parser.add_argument("--save", default=None, help="also write STEM.csv and STEM.md")


def with_parts(measure: str, window_parts: int) -> str:
    """A row's name, saying the window_parts setting when it is not the default."""
    return measure if window_parts == 1 else f"{measure}, {window_parts} window parts"


def stream_rate(path: Path, encoder: str, threads: int, batch_size: int, seconds: float,
                window_parts: int = 1) -> float:
    """Positions per second delivered by a training stream (after one warm-up batch)."""
    from harness.data.pipeline import BatchStream, PipelineConfig

    config = PipelineConfig(batch_size=batch_size, encoder=encoder, threads=threads,
                            window_parts=window_parts)
    with BatchStream(path, "train", config) as stream:
        batches = iter(stream)
        next(batches)  # compile, first window
        count, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            count += len(next(batches)[0])
        return count / (time.perf_counter() - start)


def train_rate(path: Path, encoder: str, model_name: str, batch_size: int, seconds: float) -> float:
    """Positions per second of ``train_on_batch`` for ``model_name`` on real batches."""
    import keras

    from harness.data.pipeline import BatchStream, PipelineConfig
    from harness.nets import build_model

    with BatchStream(path, "train", PipelineConfig(batch_size=batch_size, encoder=encoder)) as s:
        batches = iter(s)
        sample = [next(batches) for _ in range(4)]
    x0 = sample[0][0]
    model = build_model(model_name, x0.shape[1], x0.shape[-1])
    model.compile(
        optimizer=keras.optimizers.SGD(0.01, momentum=0.9),
        loss={
            "policy": keras.losses.CategoricalCrossentropy(from_logits=True),
            "value": keras.losses.MeanSquaredError(),
        },
    )

    def step(i: int) -> None:
        x, y, w = sample[i % len(sample)]
        model.train_on_batch(
            x,
            {k: y[k] for k in ("policy", "value")},
            sample_weight={k: w[k] for k in ("policy", "value")},
        )

    step(0)  # trace and compile
    count, start, i = 0, time.perf_counter(), 1
    while time.perf_counter() - start < seconds:
        step(i)
        count += len(x0)
        i += 1
    return count / (time.perf_counter() - start)


def mixing_rows(path: Path, encoder: str, batch_size: int, window_parts: int = 1) -> list[tuple]:
    """Distinct games in a training batch (and the same for a uniform draw),
    and in the first 1,000 batches."""
    from harness.data.pipeline import BatchStream, PipelineConfig, batch_mixing

    config = PipelineConfig(batch_size=batch_size, encoder=encoder, window_parts=window_parts)
    with BatchStream(path, "train", config) as stream:
        mixing = batch_mixing(stream)
    span = mixing.span_batches
    rows = [
        ("games per batch", mixing.distinct_games, "games"),
        ("most positions of one game", mixing.most_of_one_game, "positions"),
        (f"games in {span:,} batches", mixing.span_games, "games"),
        (f"positions per game in {span:,} batches", mixing.positions_per_game_in_span,
         "positions"),
    ]
    if window_parts == 1:  # the draw does not depend on the setting
        rows.insert(1, ("games per batch, uniform draw", mixing.uniform_distinct_games, "games"))
    return [(with_parts(measure, window_parts), encoder, "-", batch_size, value, unit)
            for measure, value, unit in rows]


def _sample_dataset(tmp: Path, games: int) -> Path:
    from harness.data.ingest import IngestConfig, ingest

    if not DEV_ARCHIVE.exists():
        raise FileNotFoundError(f"{DEV_ARCHIVE}: not found (give --dataset)")
    output = tmp / "sample.h5"
    ingest(
        IngestConfig(
            sources=[str(DEV_ARCHIVE)], output=output, limit=games, val_games=0, progress=False
        )
    )
    return output


def run(args: argparse.Namespace) -> int:
    rows: list[tuple] = []
    with tempfile.TemporaryDirectory(prefix="bench-pipeline-") as tmp:
        path = Path(args.dataset) if args.dataset else _sample_dataset(Path(tmp),
                                                                         args.sample_games)
        from harness.data.dataset import check_file

        check_file(path)
        best: dict[tuple[str, int], float] = {}
        for encoder in args.encoders:
            for threads in args.threads:
                for parts in args.window_parts:
                    rate = stream_rate(path, encoder, threads, args.batch_size, args.seconds,
                                       parts)
                    key = (encoder, parts)
                    best[key] = max(best.get(key, 0.0), rate)  # the best thread count
                    rows.append((with_parts("pipeline", parts), encoder, threads or "all",
                                 args.batch_size, rate, "positions/s"))
        for parts in args.window_parts:
            rows.extend(mixing_rows(path, args.encoders[0], args.batch_size, parts))
        if args.model:
            try:
                import harness.nets  # noqa: F401
            except ImportError:
                print("harness.nets not available: training throughput skipped")
            else:
                for encoder in args.encoders:
                    rate = train_rate(
                        path, encoder, args.model, args.train_batch_size, args.seconds
                    )
                    rows.append(
                        (
                            f"train {args.model}",
                            encoder,
                            "-",
                            args.train_batch_size,
                            rate,
                            "positions/s",
                        )
                    )
                    for parts in args.window_parts:
                        rows.append((with_parts("pipeline / train", parts), encoder, "-", "-",
                                     best[encoder, parts] / rate, "x"))
    print(format_table(HEADER, rows))
    if args.save:
        save_table(HEADER, rows, args.save)
    return 0
