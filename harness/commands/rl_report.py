"""``harness rl-report RUN [RUN ...]``: Elo of self-play runs' generations against
games and time, several runs on one scale."""

from __future__ import annotations

import argparse

HELP = ("tournament among self-play runs' generations; Elo against games and wall time "
        "(several runs: one tournament, one scale)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("runs", nargs="+", metavar="run",
                        help="run directory (e.g. models/rl-9x9-quick); several runs play "
                        "in one tournament, anchored on the first run's generation 0")
    parser.add_argument("--generations", help="comma-separated generations, 'last' for the "
                        "last finished one (default: --count spread evenly, generation 0 "
                        "always included)")
    parser.add_argument("--at-hours", dest="at_hours",
                        help="comma-separated wall-clock budgets: each run's last generation "
                        "finished within each (equal compute across runs; replaces "
                        "--generations and --count)")
    parser.add_argument("--count", type=int, default=6, help="generations to pick (default 6)")
    parser.add_argument("--baseline", action="append", default=[],
                        help="extra player spec, e.g. random, uct:200, gnugo:1 (repeatable)")
    parser.add_argument("--games-per-pair", dest="games_per_pair", type=int, default=4,
                        help="games per pair of players (0: no tournament, only --heldout)")
    parser.add_argument("--opening-moves", dest="opening_moves", type=int, default=4,
                        help="random opening moves per game pair (default 4)")
    parser.add_argument("--playouts", type=int, default=32,
                        help="search playouts per move (0: the raw policy, sampled at "
                        "temperature 1, as a policy-gradient run plays)")
    parser.add_argument("--parallel", type=int, default=1, help="game worker processes")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--until-separated", dest="until_separated", action="store_true",
                        help="after the first round, play further rounds until neighbouring "
                        "players are separated or --max-games-per-pair is reached")
    parser.add_argument("--max-games-per-pair", dest="max_games_per_pair", type=int,
                        default=100, help="cap of --until-separated, per pair (default 100)")
    parser.add_argument("--heldout", metavar="DATA",
                        help="also measure every saved generation on positions spread over "
                        "DATA's validation games (KL from generation 0, top-1, value MSE, "
                        "calibration, 95%% intervals): heldout.csv and heldout.png")
    parser.add_argument("--heldout-positions", dest="heldout_positions", type=int,
                        default=2048, help="positions for --heldout (default 2048)")
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


def parse_hours(text: str | None) -> list[float] | None:
    """``"0.5, 1, 1.75"`` -> ``[0.5, 1.0, 1.75]``."""
    if not text:
        return None
    try:
        return [float(w) for w in text.split(",") if w.strip()]
    except ValueError:
        raise ValueError(f"--at-hours: {text!r} is not a list of hours") from None


def run(args: argparse.Namespace) -> int:
    from harness.config_io import ConfigError
    from harness.files import format_table
    from harness.rl.strength import ELO_COLUMNS, HELD_OUT_COLUMNS, remeasure_held_out, rl_report

    curves = policy_gradient_curves(args.runs, args.out)
    if args.games_per_pair == 0 and not args.heldout and not curves:
        raise ConfigError("--games-per-pair 0 plays no games: give --heldout DATA")
    if args.heldout:
        out, rows = remeasure_held_out(args.runs, args.heldout, args.heldout_positions,
                                       args.out)
        print(format_table(HELD_OUT_COLUMNS, rows))
        print(f"wrote {out / 'heldout.csv'}, {out / 'heldout.png'}")
    if args.games_per_pair == 0:
        return 0
    out, table = rl_report(
        args.runs, out=args.out, generations=parse_generations(args.generations),
        hours=parse_hours(args.at_hours), count=args.count, baselines=tuple(args.baseline),
        games_per_pair=args.games_per_pair, opening_moves=args.opening_moves,
        playouts=args.playouts, parallel=args.parallel, seed=args.seed,
        until_separated=args.until_separated, max_games_per_pair=args.max_games_per_pair,
        progress=args.progress)
    print(format_table(ELO_COLUMNS, table))
    print(f"wrote {out / 'elo.csv'}, {out / 'elo.png'}")
    return 0


def policy_gradient_curves(runs: list[str], out: str | None) -> int:
    """Each policy-gradient run's curves from its stats (``pg.csv``, ``pg.png``:
    win rate against the start and KL per step); returns how many."""
    from pathlib import Path

    from harness.config_io import read_saved_config
    from harness.files import format_table
    from harness.rl.config import RLConfig
    from harness.rl.pg_curves import AGAINST_START_COLUMNS, write_pg_curves

    written = 0
    for run_dir in map(Path, runs):
        if read_saved_config(RLConfig, run_dir / "config.json").algorithm != "policy-gradient":
            continue
        where = Path(out) if out and len(runs) == 1 else run_dir / "report"
        figure, blocks = write_pg_curves(run_dir, where)
        print(f"{run_dir.name}: win rate against the start (generation 0), steps pooled")
        print(format_table(AGAINST_START_COLUMNS, blocks))
        print(f"wrote {where / 'pg.csv'}, {figure}")
        written += 1
    return written
