"""``harness train``: supervised training from a TOML config and/or flags."""

from __future__ import annotations

import argparse

HELP = "train a model on a positions dataset (checkpoints, metrics.csv, --resume)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from harness.config_io import add_config_flags
    from harness.train.config import TrainConfig

    parser.add_argument("--config", help="TOML file (keys at top level or under [train])")
    add_config_flags(parser, TrainConfig)
    parser.add_argument("--resume", action="store_true",
                        help="continue the run from its last checkpoint (config from the run)")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")


def overrides_from_args(args: argparse.Namespace) -> dict:
    """The flags the user actually gave, as config keys."""
    from harness.config_io import given_values
    from harness.train.config import TrainConfig

    return given_values(args, TrainConfig)


def seed_runs(config) -> list:
    """One config per seed (runs ``RUN-seedS``), or the config itself without ``seeds``."""
    if not config.seeds:
        return [config]
    return [config.replace(seed=s, run=f"{config.run}-seed{s}", seeds=[])
            for s in config.seeds]


def run(args: argparse.Namespace) -> int:
    from harness.train.preflight import resolve_config

    overrides = overrides_from_args(args)
    if overrides.get("seeds"):  # each seed's run resumes (or starts) on its own
        configs = seed_runs(resolve_config(args.config, overrides, resume=False))
    else:
        configs = [resolve_config(args.config, overrides, resume=args.resume)]
    for config in configs:
        code = _train_one(config, args)
        if code:
            return code
    return 0


def _train_one(config, args: argparse.Namespace) -> int:
    from harness.train.preflight import make_plan
    from harness.train.run_dir import RunDir

    resume = bool(args.resume) and RunDir(config.run_dir).exists()
    plan = make_plan(config, resume=resume)
    from harness.train.trainer import train

    try:
        result = train(plan, resume=resume, progress=not args.quiet)
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
