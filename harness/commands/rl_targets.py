"""``harness rl-targets``: the quality of a self-play search's policy targets
on a dataset's held-out positions (:mod:`harness.rl.targets`)."""

from __future__ import annotations

import argparse
import dataclasses

from harness.config_io import comma_list

HELP = ("how often a self-play search's policy targets agree with the moves of held-out "
        "games, against the network's own prior (a target worse than the prior teaches "
        "the network to play worse)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", action="append", required=True, metavar="TOML",
                        help="the self-play config whose [mcts] and [evaluator] search "
                        "(repeatable: later files are layers over earlier ones)")
    parser.add_argument("--data", required=True, help="ingested dataset of the run's board: "
                        "positions from its validation games")
    parser.add_argument("--network", help="the .keras network (default: the config's init)")
    parser.add_argument("--positions", type=int, default=256,
                        help="positions, one from each sampled game (default 256)")
    parser.add_argument("--c-scale", dest="c_scale", type=comma_list(float),
                        help="comma-separated Gumbel c_scale values to compare side by side "
                        "(default: the config's)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", help="also write the table to this CSV file")


def run(args: argparse.Namespace) -> int:
    from harness.config_io import ConfigError, load_config
    from harness.files import atomic_write, csv_text, format_table
    from harness.rl.config import RLConfig
    from harness.rl.targets import TARGET_COLUMNS, quality_row, replayed_positions, search_targets

    config = load_config(RLConfig, args.config)
    network = args.network or config.init
    if not network:
        raise ConfigError("the config has no init network: give --network")
    scales = args.c_scale
    if scales and not config.mcts.gumbel:
        raise ConfigError(f"--c-scale weighs the Gumbel root's Q term; the config's [mcts] "
                          f"root is {config.mcts.root!r}")
    if args.positions < 1:
        raise ConfigError("--positions must be at least 1")
    positions = replayed_positions(args.data, args.positions, board_size=config.board_size,
                                   komi=config.komi, rules=config.rules, seed=args.seed)
    from harness.nets import load_model
    from harness.search import BatchedSearch, NetworkEvaluator

    evaluator = NetworkEvaluator(load_model(network), config.encoder, config.board_size,
                                 config.evaluator)
    settings = [(f"c_scale {s:g}", dataclasses.replace(config.mcts, c_scale=s))
                for s in scales] if scales else [("config", config.mcts)]
    rows = []
    for label, mcts in settings:
        search = BatchedSearch(evaluator, mcts, games=config.selfplay.parallel, seed=args.seed)
        measured = search_targets(search, positions)
        rows.append(quality_row(label, measured["target"], args.seed))
        print(f"{label}: {rows[-1][3]} target top-1 % on {len(positions.moves)} "
              "positions", flush=True)
        if "visits" in measured:
            rows.append(quality_row(f"{label}, visit counts", measured["visits"], args.seed))
    print(f"{network}, {config.mcts.playouts} playouts, {config.mcts.root} root, against "
          f"the moves of {len(positions.moves)} {args.data} validation positions")
    print(format_table(TARGET_COLUMNS, rows))
    if args.out:
        atomic_write(args.out, csv_text(TARGET_COLUMNS, rows))
        print(f"wrote {args.out}")
    return 0
