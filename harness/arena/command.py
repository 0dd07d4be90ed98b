"""``harness tournament``: a resumable round robin from a TOML config or flags.

With ``--until-separated`` it plays further rounds until every neighbour pair
of the ranking is separated (``--los``) or a cap is reached; with two players
and ``--sprt elo0=0,elo1=35`` it plays a match until the SPRT decides
(:mod:`harness.arena.adaptive`, :mod:`harness.arena.sprt`).

``--playouts N`` is the budget of every player that searches (uct, mcts): it
replaces a spec's own ``@N``, so ``uct:40`` plays, and is ranked, as
``uct:N`` (a ``NAME=SPEC`` player keeps its name; ``summary.json`` maps each
name to what it played). Results on disk from other players (another
``--playouts``, say) are refused rather than rated together.
"""

from __future__ import annotations

import argparse
import sys

from harness.arena.tournament import GAME_FLAGS
from harness.config_io import ConfigError, add_flags, from_mapping, given_flags, read_toml
from harness.search.runtime import add_inference_argument, apply_inference

HELP = "play a resumable round-robin tournament and write ranking tables"

# Flags that map one-to-one onto TournamentConfig fields.
_FLAGS = {
    **GAME_FLAGS,
    "games_per_pair": ("--games-per-pair", int),
    "anchor": ("--anchor", str),
    "los": ("--los", float),
    "round_games": ("--round-games", int),
    "max_games_per_pair": ("--max-games-per-pair", int),
    "max_games": ("--max-games", int),
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
    parser.add_argument("--until-separated", action="store_true", default=None,
                        help="play rounds until every neighbour pair has LOS >= --los (0.95) "
                        "or --max-games-per-pair / --max-games is reached")
    parser.add_argument("--sprt", metavar="elo0=0,elo1=35[,alpha=0.05,beta=0.05]",
                        help="two players: play until this SPRT accepts a hypothesis")
    parser.add_argument("--retry-errors", action="store_true", help="replay games that errored")
    parser.add_argument("--no-progress", action="store_true")
    add_inference_argument(parser)


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
    if args.until_separated:
        values["until_separated"] = True
    if args.sprt:
        from harness.arena.sprt import parse_sprt

        try:
            values["sprt"] = parse_sprt(args.sprt)
        except ValueError as e:
            raise ConfigError(str(e)) from None
    if "players" not in values:
        raise ConfigError(f"{source}: no players given")
    config = from_mapping(TournamentConfig, values, source)
    from harness.arena.checks import check_game_settings, check_player_specs

    try:
        check_game_settings(config)
        check_player_specs(spec for _, spec in config.named_players())
    except ValueError as e:
        raise ConfigError(f"{source}: {e}") from None
    return config


def run(args: argparse.Namespace) -> int:
    from harness.arena.tournament import run_tournament

    apply_inference(args.inference)
    try:
        config = config_from_args(args)
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    from harness.arena.tournament import OtherPlayersResults
    from harness.distributed import BackendError

    try:
        rows = run_tournament(config, progress=not args.no_progress)
    except (BackendError, OtherPlayersResults) as e:
        print(f"harness tournament: {e}", file=sys.stderr)
        return 2
    print(stopping_report(config))
    errors = sum(1 for r in rows if r.error)
    print(f"{len(rows)} games ({errors} errors); tables and SGFs in {config.out}/")
    return 0 if errors < len(rows) else 1  # not one rated game: say so in the exit code


def stopping_report(config) -> str:
    """The ranking as people read it, then why play stopped: unresolved pairs, the SPRT."""
    import json
    from pathlib import Path

    import pandas as pd

    from harness.arena.adaptive import stopping_sentences
    from harness.arena.tables import readable_ranking
    from harness.files import format_table

    ranking = readable_ranking(pd.read_csv(f"{config.out}/ranking.csv"))
    keep = [c for c in ranking.columns if not c.startswith(("Elo s.e.", "sequential"))]
    lines = [format_table(keep, ranking[keep].values.tolist())]
    summary = json.loads(Path(config.out, "summary.json").read_text())
    return "\n".join([*lines, *stopping_sentences(summary)])
