"""``harness rl``: self-play reinforcement learning, started or resumed from a config."""

from __future__ import annotations

import argparse
import dataclasses
import sys

HELP = "self-play reinforcement learning (AlphaZero loop with a replay window)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", help="TOML file (see configs/rl-*.toml)")
    parser.add_argument("--run", help="run name (directory under runs_dir)")
    parser.add_argument("--runs-dir", dest="runs_dir", help="where runs live (default models)")
    parser.add_argument("--generations", type=int,
                        help="total generations (on --resume: extends or shortens the run)")
    parser.add_argument("--hours", dest="max_hours", type=float,
                        help="wall-time budget: no new generation starts after it "
                             "(on --resume: replaces the saved budget)")
    parser.add_argument("--init", help="start from this checkpoint (e.g. a supervised best.keras)")
    parser.add_argument("--seed", type=int)
    parser.add_argument("--resume", action="store_true",
                        help="continue the run from its last commit (the saved config is used)")
    from harness.distributed.backend import add_backend_flags

    add_backend_flags(parser)
    parser.add_argument("--workers", type=int, default=None,
                        help="Ray self-play actors (default: one per CPU of the cluster)")


def run(args: argparse.Namespace) -> int:
    from harness.config_io import ConfigError
    from harness.rl.config import load_config, read_config

    overrides = {"run": args.run, "runs_dir": args.runs_dir, "generations": args.generations,
                 "init": args.init, "seed": args.seed, "max_hours": args.max_hours,
                 "backend": args.backend, "ray_address": args.ray_address}
    try:
        config = load_config(args.config, overrides)
        if args.resume:
            saved = read_config(config.run_dir / "config.json")
            extend = args.generations or (config.generations if args.config else None)
            config = dataclasses.replace(saved, runs_dir=config.runs_dir, run=config.run,
                                         generations=extend or saved.generations)
            # Where the games are played and the time budget may change between sessions.
            given = {k: v for k, v in (("backend", args.backend),
                                       ("ray_address", args.ray_address),
                                       ("max_hours", args.max_hours)) if v is not None}
            config = dataclasses.replace(config, **given)
        if args.workers is not None:
            config = dataclasses.replace(
                config, selfplay=dataclasses.replace(config.selfplay, workers=args.workers))
    except (ConfigError, ValueError) as e:
        print(f"harness rl: {e}", file=sys.stderr)
        return 2
    from harness.distributed import BackendError
    from harness.distributed.backend import import_ray
    from harness.rl.run import RLRun

    try:
        if config.init and not args.resume:
            check_init(config)  # before the run directory and its config.json are written
        if config.backend == "ray":
            import_ray()  # before generation 0 is written
        state = RLRun(config).run(resume=args.resume)
    except (ConfigError, BackendError) as e:
        print(f"harness rl: {e}", file=sys.stderr)
        return 2
    print(f"done: {state.generation - 1} generations, {state.games_total} games, "
          f"best network {config.run_dir / state.best}")
    return 0


def check_init(config) -> None:
    """Refuse an ``--init`` checkpoint that cannot start this run, as a ConfigError.

    Loading it here costs one extra load of a valid model; it buys a one-line
    reason, and no run directory left behind, for a file that is refused
    (corrupt, unsafe, not a policy-value model, another board or encoder).
    """
    from harness.config_io import ConfigError
    from harness.features import get_encoder
    from harness.nets import load_model
    from harness.train.checkpoints import check_compatible

    try:
        model = load_model(config.init)
        check_compatible(model, config.board_size, get_encoder(config.encoder).planes,
                         config.encoder, config.init)
    except ValueError as e:  # ModelFileError
        raise ConfigError(f"--init {e}") from None
