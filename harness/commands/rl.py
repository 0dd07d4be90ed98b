"""``harness rl``: self-play reinforcement learning, started or resumed from a config."""

from __future__ import annotations

import argparse
import dataclasses

HELP = ("self-play reinforcement learning (AlphaZero loop with a replay window, or policy "
        "gradient against a pool of past selves)")


# The settings a command line may change; the rest come from the config file.
_FLAGGED = ("run", "runs_dir", "model", "generations", "max_hours", "init", "seed", "backend",
            "ray_address", "algorithm", "tensorboard", "metrics_jsonl")
# What may change when a run resumes: where the games are played, the time
# budget, which live metrics are written (none of them changes what is learned).
_RESUMABLE = ("backend", "ray_address", "max_hours", "tensorboard", "metrics_jsonl")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from harness.config_io import add_config_flags
    from harness.rl.config import RLConfig, SelfPlayConfig

    parser.add_argument("--config", action="append",
                        help="TOML file (see configs/rl-*.toml); repeat it to lay a file over "
                        "another: a later one changes only the keys it has (an ablation arm "
                        "over its study, configs/rl-19x19-arms/)")
    add_config_flags(parser, RLConfig, only=_FLAGGED)
    parser.add_argument("--resume", action="store_true",
                        help="continue the run from its last commit (the saved config is used)")
    add_config_flags(parser, SelfPlayConfig, only=("workers",))


def config_from_args(args: argparse.Namespace):
    """The run's RLConfig: the file with the flags over it, or, on ``--resume``,
    the run's saved config with only the resumable flags over it."""
    from harness.config_io import given_values, load_config, read_saved_config
    from harness.rl.config import RLConfig, SelfPlayConfig

    overrides = given_values(args, RLConfig, only=_FLAGGED)
    config = load_config(RLConfig, args.config, overrides)
    if args.resume:
        saved = read_saved_config(RLConfig, config.run_dir / "config.json")
        extend = args.generations or (config.generations if args.config else None)
        config = dataclasses.replace(saved, runs_dir=config.runs_dir, run=config.run,
                                     generations=extend or saved.generations)
        given = {k: v for k, v in overrides.items() if k in _RESUMABLE}
        config = dataclasses.replace(config, **given)
    workers = given_values(args, SelfPlayConfig, only=("workers",))
    if workers:
        config = dataclasses.replace(
            config, selfplay=dataclasses.replace(config.selfplay, **workers))
    return config


def run(args: argparse.Namespace) -> int:
    config = config_from_args(args)
    from harness.devices import use_backend
    from harness.distributed.backend import import_ray
    from harness.nets.plugins import load_plugins
    from harness.rl.runs import make_run

    use_backend(config.keras_backend)
    load_plugins(config.plugins)
    if config.init and not args.resume:
        check_init(config)  # before the run directory and its config.json are written
    if config.backend == "ray":
        import_ray()  # before generation 0 is written
    state = make_run(config).run(resume=args.resume)
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
