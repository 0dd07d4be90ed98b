"""``harness frontier CONFIG -o DIR``: a compute-frontier study, resumable."""

from __future__ import annotations

import argparse
import sys

HELP = ("train every model of a study to every savepoint of training FLOPs, score them on "
        "the same held-out positions (or, kind = selfplay, learn from zero and rate every "
        "savepoint in one pooled Elo rating) and report each family's compute frontier")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from harness.config_io import add_config_flags
    from harness.frontier.config import FrontierConfig

    parser.add_argument("config", help="study config (keys at top level or under [frontier]), "
                        "e.g. configs/frontier-quick.toml")
    parser.add_argument("-o", "--out", required=True,
                        help="the study's folder: runs, evaluations and the report; run the "
                        "same command again to finish an interrupted study")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    add_config_flags(parser, FrontierConfig, only=flag_names())


def flag_names() -> list[str]:
    """The study's settings as flags, less those the study sets itself."""
    import dataclasses

    from harness.frontier.config import SET_BY_STUDY, FrontierConfig

    return [f.name for f in dataclasses.fields(FrontierConfig)
            if f.init and f.metadata.get("cli", True) and f.name not in SET_BY_STUDY]


def run(args: argparse.Namespace) -> int:
    from harness.config_io import given_values
    from harness.frontier.config import FrontierConfig, load_frontier_config
    from harness.frontier.runs import StudyInterrupted
    from harness.frontier.study import run_frontier

    try:
        config = load_frontier_config(args.config,
                                      given_values(args, FrontierConfig, only=flag_names()))
        result = run_frontier(config, args.out, progress=not args.quiet)
    except StudyInterrupted as e:
        print(f"harness frontier: {e}", file=sys.stderr)
        return e.code
    for sentence in result.findings:
        print(f"- {sentence}")
    print(f"report: {result.report} (points.csv, frontier.csv, fits.csv and the figures "
          "beside it)")
    return 0
