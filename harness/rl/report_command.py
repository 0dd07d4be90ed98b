"""``harness rl-report RUN``: Elo of a self-play run's generations against games and time."""

from __future__ import annotations

import argparse
import sys

HELP = "tournament among a self-play run's generations; Elo against games and wall time"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run", help="run directory (e.g. models/rl-9x9-quick)")
    parser.add_argument("--generations", help="comma-separated generations, 'last' for the "
                        "last finished one (default: --count spread evenly, generation 0 "
                        "always included)")
    parser.add_argument("--count", type=int, default=6, help="generations to pick (default 6)")
    parser.add_argument("--baseline", action="append", default=[],
                        help="extra player spec, e.g. random, uct:200, gnugo:1 (repeatable)")
    parser.add_argument("--games-per-pair", dest="games_per_pair", type=int, default=4)
    parser.add_argument("--opening-moves", dest="opening_moves", type=int, default=4,
                        help="random opening moves per game pair (default 4)")
    parser.add_argument("--playouts", type=int, default=32, help="search playouts per move")
    parser.add_argument("--parallel", type=int, default=1, help="game worker processes")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", help="output directory (default RUN/report)")
    parser.add_argument("--no-progress", dest="progress", action="store_false")


def parse_generations(text: str | None) -> list[int] | None:
    """``"0,12,last"`` -> ``[0, 12, -1]`` (negative counts from the end)."""
    if not text:
        return None
    generations = []
    for word in (w.strip().lower() for w in text.split(",") if w.strip()):
        if word == "last":
            generations.append(-1)
        elif word.isdigit():
            generations.append(int(word))
        else:
            raise ValueError(f"--generations: {word!r} is neither a generation number nor 'last'")
    return generations


def run(args: argparse.Namespace) -> int:
    from harness.config_io import ConfigError
    from harness.files import format_table
    from harness.rl.report import ELO_COLUMNS, rl_report

    try:
        out, table = rl_report(
            args.run, out=args.out, generations=parse_generations(args.generations),
            count=args.count, baselines=tuple(args.baseline),
            games_per_pair=args.games_per_pair, opening_moves=args.opening_moves,
            playouts=args.playouts, parallel=args.parallel, seed=args.seed,
            progress=args.progress)
    except (ConfigError, ValueError) as e:
        print(f"harness rl-report: {e}", file=sys.stderr)
        return 2
    print(format_table(ELO_COLUMNS, table))
    print(f"wrote {out / 'elo.csv'}, {out / 'elo.png'}")
    return 0
