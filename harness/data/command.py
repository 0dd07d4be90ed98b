"""``harness ingest SOURCES... -o datasets/NAME.h5``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HELP = "read SGF files/archives into an HDF5 positions dataset (splits, dedupe, report)"


def _size_or_fraction(text: str):
    from harness.data.splits import parse_split_size

    try:
        return parse_split_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _bytes(text: str) -> int:
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    t = text.strip().lower().removesuffix("b").removesuffix("i")
    try:
        if t and t[-1] in units:
            return int(float(t[:-1]) * units[t[-1]])
        return int(t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a byte count: {text!r} (e.g. 512M)") from None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("sources", nargs="+", help="SGF files, archives or directories")
    parser.add_argument("-o", "--output", required=True, type=Path, help="datasets/NAME.h5")
    parser.add_argument("--board-size", type=int, default=19, help="other sizes are rejected")
    parser.add_argument(
        "--encoder", default="cazenave21", help="default encoder recorded in the file"
    )
    parser.add_argument(
        "--rules",
        default="any",
        help="accepted rule sets, comma-separated (chinese,japanese,unknown,...) or 'any'",
    )
    parser.add_argument(
        "--replay-rules",
        default="superko",
        choices=["superko", "simple-ko"],
        help="ko rule the moves are checked with",
    )
    parser.add_argument("--min-moves", type=int, default=1, help="shorter games are rejected")
    parser.add_argument(
        "--val-games", type=_size_or_fraction, default=0.05, help="count or fraction of games"
    )
    parser.add_argument(
        "--test-games", type=_size_or_fraction, default=0.0, help="count or fraction of games"
    )
    parser.add_argument(
        "--test-source",
        action="append",
        default=[],
        metavar="PATTERN",
        help="games whose source matches (a glob found anywhere in it, e.g. 2011-06) are the "
        "test split; repeatable",
    )
    parser.add_argument(
        "--cazenave-val",
        action="store_true",
        help="validation = one random position per validation game",
    )
    parser.add_argument(
        "--no-result",
        choices=["policy-only", "skip"],
        default="policy-only",
        help="games without a result: keep with the value masked, or reject",
    )
    parser.add_argument("--workers", type=int, default=0, help="replay processes (0: all cores)")
    parser.add_argument("--seed", type=int, default=0, help="split seed")
    parser.add_argument(
        "--resume", action="store_true", help="continue an interrupted ingest of the same output"
    )
    parser.add_argument("--overwrite", action="store_true", help="replace an existing output")
    parser.add_argument(
        "--max-member-bytes",
        type=_bytes,
        default="1G",
        help="reject archive members / files that decompress beyond this (e.g. 512M)",
    )
    parser.add_argument("--limit", type=int, default=None, help="read only the first N games")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--commit-games", type=int, default=5000, help=argparse.SUPPRESS)
    from harness.config_io import add_config_flags
    from harness.distributed import BackendSettings

    add_config_flags(parser, BackendSettings)


def run(args: argparse.Namespace) -> int:
    from harness.config_io import given_values
    from harness.data.ingest import IngestConfig, IngestError, ingest, parse_rules
    from harness.data.report import IngestCounts
    from harness.distributed import BackendSettings

    config = IngestConfig(
        sources=list(args.sources),
        output=args.output,
        board_size=args.board_size,
        encoder=args.encoder,
        rules=parse_rules(args.rules),
        replay_rules=args.replay_rules,
        min_moves=args.min_moves,
        val_games=args.val_games,
        test_games=args.test_games,
        test_sources=tuple(args.test_source),
        cazenave_val=args.cazenave_val,
        no_result=args.no_result,
        workers=args.workers,
        seed=args.seed,
        resume=args.resume,
        overwrite=args.overwrite,
        max_member_bytes=args.max_member_bytes,
        progress=not args.quiet,
        limit=args.limit,
        commit_games=args.commit_games,
        **given_values(args, BackendSettings),
    )
    try:
        result = ingest(config)
    except IngestError as exc:
        print(f"harness ingest: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(
            f"harness ingest: interrupted; committed work is kept, rerun with --resume "
            f"to continue {args.output}",
            file=sys.stderr,
        )
        return 130
    for line in IngestCounts.from_json(result.counts).summary_lines():
        print(line)
    print(
        f"wrote {result.output}: {result.games} games, {result.positions} positions, "
        f"{result.bytes_per_position:.1f} bytes/position, {result.seconds:.1f} s "
        f"({result.positions / max(result.seconds, 1e-9):,.0f} positions/s)"
    )
    print(f"peak memory {result.peak_rss_mib:,.0f} MiB (largest worker "
          f"{result.peak_worker_rss_mib:,.0f} MiB)")
    print(f"report {result.report}, rejects {result.rejects}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m harness.data.command``: the subcommand on its own."""
    parser = argparse.ArgumentParser(prog="harness ingest", description=HELP)
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
