"""``harness evaluate MODEL --data FILE --split val``: the training metrics for any checkpoint."""

from __future__ import annotations

import argparse
import sys
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


def run_config_for(model: Path):
    """The training config of the run a checkpoint belongs to, if it is in one."""
    from harness.config_io import read_saved_config
    from harness.train.config import ConfigError, TrainConfig

    try:
        return read_saved_config(TrainConfig, model.parent / "config.json")
    except ConfigError:
        return None


def evaluate_checkpoint(model_path: str | Path, data: str | Path, split: str, *,
                        encoder: str = "", batch_size: int = 256, max_samples: int = 0,
                        recalibrate_bn: int = 0, save_model: str | Path | None = None,
                        progress: bool = False) -> dict[str, float | str | int]:
    """Load, check against the dataset, evaluate: metrics with 95% intervals over games.

    Raises ConfigError (one line).
    """
    evaluation, info = evaluate_checkpoint_split(
        model_path, data, split, encoder=encoder, batch_size=batch_size,
        max_samples=max_samples, recalibrate_bn=recalibrate_bn, save_model=save_model,
        progress=progress)
    return {**info, **evaluation.with_intervals()}


def evaluate_checkpoint_split(model_path: str | Path, data: str | Path, split: str, *,
                              encoder: str = "", batch_size: int = 256, max_samples: int = 0,
                              recalibrate_bn: int = 0, save_model: str | Path | None = None,
                              progress: bool = False):
    """The :class:`~harness.train.evaluation.Evaluation` of a checkpoint, and what it ran on;
    with ``save_model``, the recalibrated checkpoint is written there first."""
    from harness.train.checkpoints import check_compatible, load_checkpoint
    from harness.train.config import ConfigError
    from harness.train.dataset_source import open_split, read_dataset_meta
    from harness.train.evaluation import evaluate_split, model_value_loss
    from harness.train.preflight import check_encoder

    model_path, data = Path(model_path), Path(data)
    if save_model is not None and not recalibrate_bn:
        raise ConfigError("--save-model writes a recalibrated checkpoint: give --recalibrate-bn N")
    if save_model is not None and Path(save_model).suffix != ".keras":
        raise ConfigError(f"{save_model}: the recalibrated checkpoint must be a .keras file")
    if not model_path.exists():
        raise ConfigError(f"{model_path}: model file not found")
    meta = read_dataset_meta(data)
    if split not in meta.splits:
        raise ConfigError(f"{data}: unknown split {split!r} (has {', '.join(meta.splits)})")
    if not meta.splits[split]:
        raise ConfigError(f"{data}: split {split!r} has no positions")
    run_config = run_config_for(model_path)
    model = load_checkpoint(model_path, compile=False)
    recorded = model.model_info.encoder if model.model_info else ""  # older files: none
    enc = check_encoder(encoder or recorded or (run_config.encoder if run_config else "")
                        or meta.encoder)
    check_compatible(model, meta.board_size, enc.planes, enc.name, str(model_path))
    value_loss = model_value_loss(model)
    weights = {"policy": 1.0, "value": 1.0}
    if run_config is not None:
        weights.update(run_config.loss_weights)
    if recalibrate_bn:
        from harness.train.batch_norm import recalibrate_from_source

        train = open_split(data, "train", enc.name)
        try:
            recalibrate_from_source(model, train, recalibrate_bn, batch_size)
        finally:
            train.close()
        if save_model is not None:
            from harness.nets import save_model as write_model  # atomic, model_info kept

            write_model(model, Path(save_model))
    source = open_split(data, split, enc.name)
    try:
        evaluation = evaluate_split(model, source, value_loss=value_loss, loss_weights=weights,
                                    batch_size=batch_size, max_samples=max_samples,
                                    progress=progress)
    finally:
        source.close()
    return evaluation, {"model": str(model_path), "data": str(data), "split": split,
                        "encoder": enc.name, "value_head": value_loss,
                        "recalibrate_bn": recalibrate_bn}


def run(args: argparse.Namespace) -> int:
    from harness.files import format_table
    from harness.train.config import ConfigError

    try:
        result = evaluate_checkpoint(args.model, args.data, args.split, encoder=args.encoder,
                                     batch_size=args.batch_size, max_samples=args.max_samples,
                                     recalibrate_bn=args.recalibrate_bn,
                                     save_model=args.save_model, progress=not args.quiet)
    except ConfigError as e:
        print(f"harness evaluate: {e}", file=sys.stderr)
        return 2
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
