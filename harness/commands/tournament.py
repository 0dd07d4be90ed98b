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

from harness.arena.tournament import TournamentConfig
from harness.config_io import (
    ConfigError,
    add_config_flags,
    from_mapping,
    given_values,
    read_table,
)
from harness.search.runtime import add_inference_argument, apply_inference

HELP = "play a resumable round-robin tournament and write ranking tables"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "players",
        nargs="*",
        help="player specs, optionally NAME=SPEC: random, uct:1000, gnugo:10, "
        'mcts:models/run/best.keras@200, policy:PATH, gtp:"pachi -t =5000"',
    )
    parser.add_argument("--config", help="TOML file with a [tournament] table (flags override)")
    add_config_flags(parser, TournamentConfig)
    parser.add_argument("--sprt", metavar="elo0=0,elo1=35[,alpha=0.05,beta=0.05]",
                        help="two players: play until this SPRT accepts a hypothesis")
    parser.add_argument("--no-progress", action="store_true")
    add_inference_argument(parser)


def config_from_args(args: argparse.Namespace):
    values: dict = {}
    source = "command line"
    if args.config:
        values = read_table(args.config, "tournament")
        source = args.config
    values.update(given_values(args, TournamentConfig))
    if args.players:
        values["players"] = list(args.players)
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
    config = config_from_args(args)
    rows = run_tournament(config, progress=not args.no_progress)
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
