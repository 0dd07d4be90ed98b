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
    parser.add_argument("--init", help="start from this checkpoint (e.g. a supervised best.keras)")
    parser.add_argument("--seed", type=int)
    parser.add_argument("--resume", action="store_true",
                        help="continue the run from its last commit (the saved config is used)")


def run(args: argparse.Namespace) -> int:
    from harness.config_io import ConfigError
    from harness.rl.config import load_config, read_config

    overrides = {"run": args.run, "runs_dir": args.runs_dir, "generations": args.generations,
                 "init": args.init, "seed": args.seed}
    try:
        config = load_config(args.config, overrides)
        if args.resume:
            saved = read_config(config.run_dir / "config.json")
            extend = args.generations or (config.generations if args.config else None)
            config = dataclasses.replace(saved, runs_dir=config.runs_dir, run=config.run,
                                         generations=extend or saved.generations)
    except (ConfigError, ValueError) as e:
        print(f"harness rl: {e}", file=sys.stderr)
        return 2
    from harness.rl.run import RLRun

    try:
        state = RLRun(config).run(resume=args.resume)
    except ConfigError as e:
        print(f"harness rl: {e}", file=sys.stderr)
        return 2
    print(f"done: {state.generation - 1} generations, {state.games_total} games, "
          f"best network {config.run_dir / state.best}")
    return 0
