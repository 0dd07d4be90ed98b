"""``harness tournament``: a resumable round robin from a TOML config or flags."""

from __future__ import annotations

import argparse
import sys

from harness.config_io import ConfigError, from_mapping, read_toml

HELP = "play a resumable round-robin tournament and write ranking tables"

# Flags that map one-to-one onto TournamentConfig fields.
_FLAGS = {
    "out": ("-o", str),
    "board_size": ("--board-size", int),
    "komi": ("--komi", float),
    "rules": ("--rules", str),
    "games_per_pair": ("--games-per-pair", int),
    "opening_moves": ("--opening-moves", int),
    "max_moves": ("--max-moves", int),
    "move_time": ("--move-time", float),
    "playouts": ("--playouts", int),
    "parallel": ("--parallel", int),
    "seed": ("--seed", int),
    "anchor": ("--anchor", str),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "players",
        nargs="*",
        help="player specs, optionally NAME=SPEC: random, uct:1000, gnugo:10, "
        'mcts:models/run/best.keras@200, policy:PATH, gtp:"pachi -t =5000"',
    )
    parser.add_argument("--config", help="TOML file with a [tournament] table (flags override)")
    for key, (flag, kind) in _FLAGS.items():
        names = [flag] if flag != "-o" else ["-o", "--out"]
        parser.add_argument(*names, dest=key, type=kind, default=None)
    parser.add_argument("--retry-errors", action="store_true", help="replay games that errored")
    parser.add_argument("--no-progress", action="store_true")


def config_from_args(args: argparse.Namespace):
    from harness.arena.tournament import TournamentConfig

    values: dict = {}
    source = "command line"
    if args.config:
        table = read_toml(args.config)
        values = dict(table.get("tournament", table))
        source = args.config
    values.update({k: getattr(args, k) for k in _FLAGS if getattr(args, k) is not None})
    if args.players:
        values["players"] = list(args.players)
    if args.retry_errors:
        values["retry_errors"] = True
    if "players" not in values:
        raise ConfigError(f"{source}: no players given")
    return from_mapping(TournamentConfig, values, source)


def run(args: argparse.Namespace) -> int:
    from harness.arena.tournament import run_tournament
    from harness.bench.table import format_table

    try:
        config = config_from_args(args)
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    rows = run_tournament(config, progress=not args.no_progress)
    import pandas as pd

    ranking = pd.read_csv(f"{config.out}/ranking.csv")
    columns = ["rank", "player", "elo", "elo_low", "elo_high", "games", "win_rate", "win_rate_se"]
    print(format_table(columns, ranking[columns].round(3).values.tolist()))
    errors = sum(1 for r in rows if r.error)
    print(f"{len(rows)} games ({errors} errors); tables and SGFs in {config.out}/")
    return 0
