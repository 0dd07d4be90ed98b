"""``harness compare MODEL... --data FILE``: paired comparisons on the same positions."""

from __future__ import annotations

import argparse
from pathlib import Path

HELP = "compare checkpoints on the same positions: intervals, paired differences, Holm p-values"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from harness.commands.evaluate import add_recalibration_argument

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


def run(args: argparse.Namespace) -> int:
    from harness.files import format_table, save_table
    from harness.train.compare import (
        ESTIMATE_HEADER,
        PAIR_HEADER,
        checkpoint_of,
        compare_checkpoints,
        estimate_rows,
        pair_rows,
    )

    results, pairs = compare_checkpoints([checkpoint_of(m) for m in args.models],
                                         args.data, args.split,
                                         batch_size=args.batch_size, reps=args.reps,
                                         baseline=args.baseline,
                                         max_samples=args.max_samples,
                                         recalibrate_bn=args.recalibrate_bn,
                                         progress=not args.quiet)
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
