"""``harness datagen PLAYER``: games of a player against itself (:mod:`harness.arena.datagen`)."""

from __future__ import annotations

import argparse

from harness.arena.datagen import DatagenConfig, generate
from harness.config_io import add_config_flags, from_mapping, given_values

HELP = "generate training games: a player (uct:N, gnugo:N, ...) against itself, saved as SGF"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("player", help="player spec, e.g. uct:200, gnugo:1, random")
    add_config_flags(parser, DatagenConfig)
    parser.add_argument("--no-progress", action="store_true")


def run(args: argparse.Namespace) -> int:
    values = given_values(args, DatagenConfig)
    config = from_mapping(DatagenConfig, {"player": args.player, **values}, "command line")
    rows = generate(config, progress=not args.no_progress)
    errors = sum(1 for r in rows if r.error)
    moves = sum(r.moves for r in rows if not r.error)
    print(f"{len(rows)} games ({errors} errors, {moves} moves) in {config.games_dir}/")
    return 0 if errors < len(rows) else 1
