"""``harness ingest SOURCES... -o datasets/NAME.h5``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HELP = "read SGF files/archives into an HDF5 positions dataset (splits, dedupe, report)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from harness.config_io import add_config_flags
    from harness.data.settings import IngestConfig

    parser.add_argument("sources", nargs="+", help="SGF files, archives or directories")
    parser.add_argument("-o", "--output", required=True, type=Path, help="datasets/NAME.h5")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    add_config_flags(parser, IngestConfig)


def run(args: argparse.Namespace) -> int:
    from harness.config_io import from_mapping, given_values
    from harness.data.ingest import IngestConfig, ingest
    from harness.data.ingest_report import IngestCounts

    config = from_mapping(IngestConfig, {
        "sources": list(args.sources), "output": args.output, "progress": not args.quiet,
        **given_values(args, IngestConfig)}, "flags")
    try:
        result = ingest(config)
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
