"""``harness train``: supervised training from a TOML config and/or flags."""

from __future__ import annotations

import argparse
import sys

HELP = "train a model on a positions dataset (checkpoints, metrics.csv, --resume)"

# Flags that map one-to-one onto TrainConfig fields: (flag, field, type, help).
_FLAGS: tuple[tuple[str, str, type, str], ...] = (
    ("--model", "model", str, "model name from the zoo, e.g. a0.small"),
    ("--data", "data", str, "positions file made by harness ingest"),
    ("--run", "run", str, "run name: files go to RUNS_DIR/RUN/ (default: the model name)"),
    ("--runs-dir", "runs_dir", str, "where runs live (default models)"),
    ("--train-split", "train_split", str, "split to train on (default train)"),
    ("--val-split", "val_split", str, "split to validate on each epoch (default val; '' for none)"),
    ("--encoder", "encoder", str, "input encoder (default: the dataset's)"),
    ("--init", "init", str, "start from this checkpoint's weights (new optimizer)"),
    ("--epochs", "epochs", int, "number of epochs"),
    ("--epoch-samples", "epoch_samples", int, "samples per epoch (Cazenave: 1000000)"),
    ("--val-samples", "val_samples", int, "validate on at most this many samples (0: all)"),
    ("--batch-size", "batch_size", int, "batch size"),
    ("--optimizer", "optimizer", str, "sgd or adam"),
    ("--momentum", "momentum", float, "SGD momentum"),
    ("--lr", "lr", float, "initial learning rate"),
    ("--lr-final", "lr_final", float, "final learning rate (cosine, cyclical)"),
    ("--lr-schedule", "lr_schedule", str, "constant, step, cosine or cyclical"),
    ("--lr-step-epochs", "lr_step_epochs", float, "step schedule: epochs between decays"),
    ("--lr-step-factor", "lr_step_factor", float, "step schedule: factor per decay"),
    ("--lr-cycle-epochs", "lr_cycle_epochs", float, "cyclical schedule: period in epochs"),
    ("--lr-warmup", "lr_warmup", float,
     "linear warm-up from 0 over this fraction of the run (or of the budget)"),
    ("--weight-decay", "weight_decay", float, "decoupled weight decay on kernels"),
    ("--value-loss", "value_loss", str, "auto, mse (tanh head) or bce (sigmoid head)"),
    ("--heads", "heads", str, "extra heads, comma separated (ownership,score)"),
    ("--seed", "seed", int, "random seed"),
    ("--strategy", "strategy", str,
     "tf.distribute: auto (mirrored on 2+ GPUs), none, mirrored, multi-worker (TF_CONFIG)"),
    ("--budget", "budget", float,
     "compute budget: train until spent, in --epochs slices (0: none; unit --budget-unit)"),
    ("--budget-unit", "budget_unit", str,
     "wall_s (training wall seconds), cpu_s (process CPU seconds) or samples"),
    ("--precision", "precision", str,
     "auto (default: mixed_bfloat16 on CPUs with AMX/AVX512-BF16, else float32), float32, "
     "mixed_bfloat16 or mixed_float16 (GPUs)"),
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", help="TOML file (keys at top level or under [train])")
    for flag, dest, kind, text in _FLAGS:
        parser.add_argument(flag, dest=dest, type=kind, default=None, help=text)
    parser.add_argument("--nesterov", action=argparse.BooleanOptionalAction, default=None,
                        help="Nesterov momentum")
    parser.add_argument("--seeds", type=_seed_list, default=None, metavar="S,S,...",
                        help="repeat the run with each seed (runs RUN-seedS)")
    parser.add_argument("--loss-weight", action="append", default=[], metavar="HEAD=W",
                        help="loss weight of a head, e.g. value=0.25 (repeatable)")
    parser.add_argument("--no-tensorboard", dest="tensorboard", action="store_false",
                        default=None, help="do not write TensorBoard logs")
    parser.add_argument("--resume", action="store_true",
                        help="continue the run from its last checkpoint (config from the run)")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")


def overrides_from_args(args: argparse.Namespace) -> dict:
    """The flags the user actually gave, as config keys."""
    values = {dest: getattr(args, dest) for _, dest, _, _ in _FLAGS}
    values["nesterov"] = args.nesterov
    values["seeds"] = args.seeds
    values["tensorboard"] = args.tensorboard
    if args.loss_weight:
        values["loss_weights"] = dict(_loss_weight(item) for item in args.loss_weight)
    return {k: v for k, v in values.items() if v is not None}


def _seed_list(text: str) -> list[int]:
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected integers separated by commas, got {text!r}")\
            from None


def seed_runs(config) -> list:
    """One config per seed (runs ``RUN-seedS``), or the config itself without ``seeds``."""
    if not config.seeds:
        return [config]
    return [config.replace(seed=s, run=f"{config.run}-seed{s}", seeds=[])
            for s in config.seeds]


def _loss_weight(item: str) -> tuple[str, float]:
    from harness.train.config import ConfigError

    head, _, weight = item.partition("=")
    try:
        return head.strip(), float(weight)
    except ValueError:
        raise ConfigError(f"--loss-weight expects HEAD=NUMBER, got {item!r}") from None


def run(args: argparse.Namespace) -> int:
    from harness.train.config import ConfigError
    from harness.train.preflight import resolve_config

    overrides = overrides_from_args(args)
    try:
        if overrides.get("seeds"):  # each seed's run resumes (or starts) on its own
            base = resolve_config(args.config, overrides, resume=False)
            configs = seed_runs(base)
        else:
            configs = [resolve_config(args.config, overrides, resume=args.resume)]
    except (ConfigError, ValueError) as e:
        print(f"harness train: {e}", file=sys.stderr)
        return 2
    for config in configs:
        code = _train_one(config, args)
        if code:
            return code
    return 0


def _train_one(config, args: argparse.Namespace) -> int:
    from harness.train.config import ConfigError
    from harness.train.preflight import make_plan
    from harness.train.run_dir import RunDir

    resume = bool(args.resume) and RunDir(config.run_dir).exists()
    try:
        plan = make_plan(config, resume=resume)
    except (ConfigError, ValueError) as e:
        print(f"harness train: {e}", file=sys.stderr)
        return 2
    from harness.train.trainer import train

    try:
        result = train(plan, resume=resume, progress=not args.quiet)
    except ConfigError as e:
        print(f"harness train: {e}", file=sys.stderr)
        return 2
    finally:
        for source in (plan.train, plan.val):
            getattr(source, "close", lambda: None)()
    if result.exit_code == 0:
        print(f"done: {result.epochs_done} epochs, {result.step:,} steps, "
              f"metrics in {result.run_dir / 'metrics.csv'}")
        _print_final(result.run_dir)
    return result.exit_code


def _print_final(run_dir) -> None:
    """The last validation row, with intervals, as one line."""
    from harness.stats import Estimate, fmt_with_interval
    from harness.train.run_dir import RunDir

    rows = RunDir(run_dir).read_metrics()
    if not rows or not rows[-1].get("val_policy_top1"):
        return
    row = rows[-1]

    def cell(name: str, percent: bool) -> str:
        values = [float(row.get(f"val_{name}{s}") or "nan") for s in ("", "_low", "_high")]
        return fmt_with_interval(Estimate(*values), percent=percent,
                                 decimals=1 if percent else 3)

    print(f"validation: top-1 {cell('policy_top1', True)} %, top-5 {cell('policy_top5', True)} %, "
          f"value MSE {cell('value_mse', False)} (95% intervals over "
          f"{row.get('val_games') or '?'} games)")
