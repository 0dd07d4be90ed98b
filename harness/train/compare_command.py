"""``harness compare MODEL... --data FILE``: paired comparisons on the same positions."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

HELP = "compare checkpoints on the same positions: intervals, paired differences, Holm p-values"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from harness.train.evaluate_command import add_recalibration_argument

    parser.add_argument("models", nargs="+",
                        help=".keras checkpoints or training run folders (their best.keras)")
    parser.add_argument("--data", required=True, help="positions file made by harness ingest")
    parser.add_argument("--split", default="val", help="split to compare on (default val)")
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--max-samples", type=int, default=0,
                        help="the split's first N positions, the same for every model "
                             "(0: the whole split)")
    parser.add_argument("--reps", type=int, default=2000, help="bootstrap replicates")
    add_recalibration_argument(parser)
    parser.add_argument("--no-baseline", dest="baseline", action="store_false",
                        help="leave out the most-frequent-move baseline")
    parser.add_argument("-o", "--out", help="folder for estimates.csv and pairs.csv")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")


def checkpoint_of(path: str | Path) -> tuple[str, Path]:
    """A display name and the checkpoint file: a run folder means its best.keras.

    A checkpoint inside a run folder is named ``RUN/epoch-001``: the slices of
    different runs share their file names.
    """
    path = Path(path)
    if path.is_dir():
        return path.name, path / "best.keras"
    if (path.parent / "config.json").exists():
        return f"{path.parent.name}/{path.stem}", path
    return path.stem, path


def compare_checkpoints(networks: Sequence[tuple[str, Path]], data, split: str = "val", *,
                        batch_size: int = 256, reps: int = 2000, baseline: bool = True,
                        max_samples: int = 0, recalibrate_bn: int = 0, progress: bool = False):
    """``(results, pairs)`` of :mod:`harness.train.compare` for named checkpoints on a split."""
    from harness.train.compare import ModelResult, compare, frequent_move_baseline
    from harness.train.config import ConfigError
    from harness.train.dataset_source import open_split
    from harness.train.evaluate_command import evaluate_checkpoint_split

    names = [name for name, _ in networks]
    if len(set(names)) != len(names):  # before minutes of evaluation, not after
        raise ConfigError(f"two models have the same name: {names}")
    results = []
    encoder = ""
    for name, checkpoint in networks:
        evaluation, info = evaluate_checkpoint_split(checkpoint, data, split,
                                                     batch_size=batch_size,
                                                     max_samples=max_samples,
                                                     recalibrate_bn=recalibrate_bn,
                                                     progress=progress)
        encoder = info["encoder"]
        results.append(ModelResult(name, evaluation.grouped))
    if baseline:
        source = open_split(data, split, encoder)
        try:
            rows, groups = source.rows(batch_size), source.groups(batch_size)
        finally:
            source.close()
        if max_samples:  # evaluation stops after whole batches
            kept = -(-max_samples // batch_size) * batch_size
            rows, groups = rows[:kept], groups[:kept]
        results.insert(0, frequent_move_baseline(data, split, rows, groups))
    return results, compare(results, reps=reps)


def run(args: argparse.Namespace) -> int:
    from harness.files import format_table, save_table
    from harness.train.compare import (
        ESTIMATE_HEADER,
        PAIR_HEADER,
        estimate_rows,
        pair_rows,
    )
    from harness.train.config import ConfigError

    try:
        results, pairs = compare_checkpoints([checkpoint_of(m) for m in args.models],
                                             args.data, args.split,
                                             batch_size=args.batch_size, reps=args.reps,
                                             baseline=args.baseline,
                                             max_samples=args.max_samples,
                                             recalibrate_bn=args.recalibrate_bn,
                                             progress=not args.quiet)
    except ConfigError as e:
        print(f"harness compare: {e}", file=sys.stderr)
        return 2
    estimates, differences = estimate_rows(results, args.reps), pair_rows(pairs)
    print(format_table(ESTIMATE_HEADER, estimates))
    print()
    print(format_table(PAIR_HEADER, differences))
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        save_table(ESTIMATE_HEADER, estimates, out / "estimates")
        save_table(PAIR_HEADER, differences, out / "pairs")
        print(f"wrote {out / 'estimates.csv'} and {out / 'pairs.csv'} (and .md)")
    return 0
