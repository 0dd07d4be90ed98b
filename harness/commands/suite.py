"""``harness suite CONFIG``: run a whole study and write its report."""

from __future__ import annotations

import argparse

HELP = "run a whole study from a TOML config: data, training, tournament, report"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("config", help="suite config, e.g. configs/quick.toml")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    from harness.config_io import add_config_flags
    from harness.distributed import BackendSettings

    add_config_flags(parser, BackendSettings)


def run(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from harness.config_io import given_values
    from harness.distributed import BackendSettings
    from harness.suite.config import load_suite_config

    config = replace(load_suite_config(args.config), **given_values(args, BackendSettings))
    from harness.files import format_table
    from harness.suite.runner import run_suite

    report = run_suite(config, progress=not args.no_progress)
    import pandas as pd

    ranking = pd.read_csv(config.out / "tournament" / "ranking.csv")
    columns = ["rank", "player", "elo", "elo_low", "elo_high", "games", "win_rate"]
    print(format_table(columns, ranking[columns].round(3).values.tolist()))
    print(f"report: {report} (and {report.with_suffix('.md')})")
    return 0
