"""``harness evaluate MODEL --data FILE --split val``: the training metrics for any checkpoint."""

from __future__ import annotations

import argparse
from pathlib import Path

HELP = "policy accuracy, value MSE and losses of a checkpoint on a dataset split"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model", help=".keras checkpoint (e.g. models/RUN/best.keras)")
    parser.add_argument("--data", required=True, help="positions file made by harness ingest")
    parser.add_argument("--split", default="val", help="train, val or test (default val)")
    parser.add_argument("--encoder", default="",
                        help="input encoder (default: the model file's, else the run's, "
                        "else the dataset's)")
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--max-samples", type=int, default=0, help="0: the whole split")
    add_recalibration_argument(parser)
    parser.add_argument("--save-model", metavar="PATH",
                        help="with --recalibrate-bn: also write the recalibrated checkpoint "
                             "here (.keras), so that games and tournaments play the net "
                             "that was scored")
    parser.add_argument("--out", help="output stem for .json/.csv (default: next to the model)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def add_recalibration_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--recalibrate-bn", type=int, default=0, metavar="N",
                        help="first re-estimate every batch norm's statistics on N training "
                             "batches under the final weights (short runs: the moving "
                             "averages lag the weights) (default 0: as saved)")


def default_stem(model: Path, data: Path, split: str) -> Path:
    return model.with_name(f"{model.stem}.eval.{data.stem}.{split}")


def run(args: argparse.Namespace) -> int:
    from harness.files import format_table
    from harness.train.checkpoint_eval import evaluate_checkpoint

    result = evaluate_checkpoint(args.model, args.data, args.split, encoder=args.encoder,
                                 batch_size=args.batch_size, max_samples=args.max_samples,
                                 recalibrate_bn=args.recalibrate_bn,
                                 save_model=args.save_model, progress=not args.quiet)
    stem = Path(args.out) if args.out else default_stem(Path(args.model), Path(args.data),
                                                         args.split)
    save_result(result, stem)
    print(format_table(["metric", "value"], [[k, v] for k, v in result.items()]))
    print(f"wrote {stem}.json and {stem}.csv")
    if args.save_model:
        print(f"wrote {args.save_model} (batch norms recalibrated on {args.recalibrate_bn} "
              "training batches)")
    return 0


def save_result(result: dict, stem: Path) -> None:
    """``stem.json`` and a one-row ``stem.csv``, each written atomically."""
    import csv
    import io

    from harness.files import atomic_json, atomic_write

    atomic_json(f"{stem}.json", result)
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(result))
    writer.writeheader()
    writer.writerow(result)
    atomic_write(f"{stem}.csv", buf.getvalue())
