"""``harness tournament``: a resumable round robin from a TOML config or flags."""

from __future__ import annotations

import argparse
import sys

from harness.arena.tournament import GAME_FLAGS
from harness.config_io import ConfigError, add_flags, from_mapping, given_flags, read_toml

HELP = "play a resumable round-robin tournament and write ranking tables"

# Flags that map one-to-one onto TournamentConfig fields.
_FLAGS = {
    **GAME_FLAGS,
    "games_per_pair": ("--games-per-pair", int),
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
    add_flags(parser, _FLAGS)
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
    values.update(given_flags(args, _FLAGS))
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
    from harness.distributed import BackendError

    try:
        rows = run_tournament(config, progress=not args.no_progress)
    except BackendError as e:
        print(f"harness tournament: {e}", file=sys.stderr)
        return 2
    import pandas as pd

    ranking = pd.read_csv(f"{config.out}/ranking.csv")
    columns = ["rank", "player", "elo", "elo_low", "elo_high", "games", "win_rate", "win_rate_se"]
    print(format_table(columns, ranking[columns].round(3).values.tolist()))
    errors = sum(1 for r in rows if r.error)
    print(f"{len(rows)} games ({errors} errors); tables and SGFs in {config.out}/")
    return 0
